package org.inagg.control.lp;

/** The optimum of a {@link LinearProgram}: the objective value and every variable's value by index. */
public record LpSolution(double objective, double[] values) {

    public LpSolution {
        values = values.clone();
    }

    public double value(int variable) {
        return values[variable];
    }
}
