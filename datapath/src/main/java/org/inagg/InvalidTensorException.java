package org.inagg;

/** A tensor handed to an all-reduce cannot be reduced (NaN or infinity, wrong size); nothing of it was sent. */
public final class InvalidTensorException extends InaggException
{
    private static final long serialVersionUID = 1L;
    private final long elementIndex;

    public InvalidTensorException(final String message, final long elementIndex)
    {
        super(message);
        this.elementIndex = elementIndex;
    }

    /** Index of the offending element, or -1 when the problem is not one element. */
    public long elementIndex()
    {
        return elementIndex;
    }
}
