package org.inagg.control.lp;

/** The solver found no optimum: the program is infeasible, unbounded, or the solver gave up. */
public final class LpException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public LpException(String message) {
        super(message);
    }
}
