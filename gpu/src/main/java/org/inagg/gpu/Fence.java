package org.inagg.gpu;

/** Marks a point in a device's queue of work: done once everything queued before it is done (a CUDA event). */
public interface Fence
{
    boolean isDone();

    /** Blocks until done; a failure of the device's work surfaces here as an exception. */
    void await();

    /** A fence already passed: what synchronous devices return. */
    Fence DONE = new Fence()
    {
        @Override
        public boolean isDone()
        {
            return true;
        }

        @Override
        public void await()
        {
        }
    };
}
