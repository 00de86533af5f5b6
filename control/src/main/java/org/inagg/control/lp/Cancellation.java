package org.inagg.control.lp;

import java.util.concurrent.CancellationException;

/**
 * How planning is stopped: by interrupting its thread (the controller's {@code POST /v1/plans} time limit). The
 * planners' loops call {@link #check} once per step (a rounding draw, a local-search pass, a worker class, a parameter
 * server), and {@link LinearProgram} before and after each solve; ojAlgo's own iterations stop at an interrupt too
 * ({@code GenericSolver.isIterationAllowed} reads {@link Thread#isInterrupted()}), after its presolve and first
 * factorisation, which it does not interrupt.
 */
public final class Cancellation {

    private Cancellation() {
    }

    /**
     * @param where what was being done, for the message (e.g. "rounding draw 17 of 64").
     * @throws CancellationException if the current thread is interrupted; the interrupt stays set for the caller.
     */
    public static void check(String where) {
        if (Thread.currentThread().isInterrupted()) {
            throw new CancellationException("planning interrupted at " + where);
        }
    }
}
