package org.inagg.control.lp;

import org.ojalgo.optimisation.Expression;
import org.ojalgo.optimisation.ExpressionsBasedModel;
import org.ojalgo.optimisation.Optimisation;
import org.ojalgo.optimisation.Variable;
import org.ojalgo.optimisation.integer.IntegerStrategy;
import org.ojalgo.type.context.NumberContext;

import java.util.ArrayList;
import java.util.List;

/**
 * A linear (or mixed-integer) program being built. Variables are referred to by the index {@link #variable} returns;
 * constraints are written row by row through {@link Row}.
 */
public final class LinearProgram {

    private final ExpressionsBasedModel model = new ExpressionsBasedModel();
    private final List<Variable> variables = new ArrayList<>();
    private int rows;

    public LinearProgram() {
        // Plain branch and bound on one thread with a tight gap. With ojAlgo's defaults (parallel nodes, GMI cuts)
        // the same small program came back "optimal" at different values run to run, up to 1% short of the
        // true optimum; without the cuts it is exact and repeatable (checked against rounding in
        // RoundingPropertiesTest).
        model.options.integer(IntegerStrategy.DEFAULT.withParallelism(() -> 1)
            .withGapTolerance(NumberContext.of(12, 10))
            .withGMICutConfiguration(new IntegerStrategy.GMICutConfiguration().withFractionality(1.0)));
    }

    /** Adds a variable with bounds and objective coefficient; returns its index. */
    public int variable(String name, double lower, double upper, double objectiveWeight) {
        Variable variable = model.addVariable(name + "#" + variables.size());
        if (Double.isFinite(lower)) {
            variable.lower(lower);
        }
        if (Double.isFinite(upper)) {
            variable.upper(upper);
        }
        if (objectiveWeight != 0) {
            variable.weight(objectiveWeight);
        }
        variables.add(variable);
        return variables.size() - 1;
    }

    /** A non-negative continuous variable. */
    public int nonNegative(String name, double objectiveWeight) {
        return variable(name, 0, Double.POSITIVE_INFINITY, objectiveWeight);
    }

    /** A 0/1 variable, which makes the program a MIP. */
    public int binary(String name, double objectiveWeight) {
        int index = variable(name, 0, 1, objectiveWeight);
        variables.get(index).integer(true);
        return index;
    }

    public int variableCount() {
        return variables.size();
    }

    public int rowCount() {
        return rows;
    }

    /** Starts a constraint row. */
    public Row row(String name) {
        rows++;
        return new Row(model.addExpression(name + "#" + rows));
    }

    /**
     * @throws LpException if the solver proves no optimum.
     * @throws java.util.concurrent.CancellationException if the thread is interrupted before or during the solve
     *     ({@link Cancellation}): the solve is not started, or stops at its next iteration.
     */
    public LpSolution maximise() {
        Cancellation.check(where());
        return solve(model.maximise());
    }

    /** As {@link #maximise()}. */
    public LpSolution minimise() {
        Cancellation.check(where());
        return solve(model.minimise());
    }

    private String where() {
        return "a linear program of " + variables.size() + " variables and " + rows + " rows";
    }

    private LpSolution solve(Optimisation.Result result) {
        Cancellation.check(where() + " (solver state " + result.getState() + ")");
        if (!result.getState().isOptimal()) {
            throw new LpException("solver ended in state " + result.getState() + " with " + variables.size()
                + " variables and " + rows + " rows");
        }
        double[] values = new double[variables.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = result.doubleValue(i);
        }
        return new LpSolution(result.getValue(), values);
    }

    /** One constraint: a sparse sum of coefficient times variable, bounded below and/or above. */
    public final class Row {

        private final Expression expression;

        private Row(Expression expression) {
            this.expression = expression;
        }

        /** Adds {@code coefficient * x[variable]}; repeated indices add up. */
        public Row plus(int variable, double coefficient) {
            if (coefficient != 0) {
                Variable v = variables.get(variable);
                var existing = expression.get(v);
                double sum = coefficient + (existing == null ? 0 : existing.doubleValue());
                expression.set(v, sum);
            }
            return this;
        }

        public void atMost(double bound) {
            expression.upper(bound);
        }

        public void atLeast(double bound) {
            expression.lower(bound);
        }

        public void equalTo(double value) {
            expression.level(value);
        }
    }
}
