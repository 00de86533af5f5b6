package org.inagg.control.aggregation;

import org.inagg.control.lp.Cancellation;

import java.util.List;

/**
 * Improves a rounded routing by moves that raise the common rate, or keep it and spread load more evenly: move one
 * worker's share for one PS to another of its options, or move every worker of a class that uses one option to
 * another (two workers leaving the PS together can free an ingress slot that neither frees alone). Independent rounding draws
 * rarely land every worker of a tight instance on the optimum at once (the GRID example needs 3 of W1-W4 at S1, W4
 * at S2 and W7-W8 at S3 together); a few improving moves from a good draw usually do. Each move is evaluated from
 * scratch, so the search runs only when {@code workers x options x resources} stays within a budget.
 */
public final class LocalSearch {

    /** Work budget in resource-evaluations; about a second of CPU. */
    static final long DEFAULT_BUDGET = 200_000_000L;

    private LocalSearch() {
    }

    /** Whether a search on this problem fits the default budget for a few passes. */
    public static boolean isAffordable(AggregationProblem problem) {
        return estimatedPassCost(problem) * 3 <= DEFAULT_BUDGET;
    }

    private static long estimatedPassCost(AggregationProblem problem) {
        long moves = 0;
        for (WorkerClass workerClass : problem.classes()) {
            for (int j = 0; j < problem.parameterServerCount(); j++) {
                moves += (long) workerClass.size() * problem.options(workerClass.id(), j).size();
            }
        }
        long evaluation = problem.topology().arcCount() + problem.topology().nodeCount()
            + 8L * problem.workerCount() * problem.parameterServerCount();
        return moves * evaluation;
    }

    /** Moves the class's users of {@code from} to {@code to}; null when nobody uses {@code from}. */
    private static IntegralRouting moveClass(IntegralRouting current, int[] workers, int[][] choices,
                                             WorkerClass workerClass, int psSlot, int from, int to) {
        boolean moved = false;
        for (int i = 0; i < workers.length; i++) {
            if (choices[i][psSlot] == from && currentClass(current, workers[i]) == workerClass.id()) {
                choices[i][psSlot] = to;
                moved = true;
            }
        }
        return moved ? new IntegralRouting(current.problem(), current.split(), workers, choices) : null;
    }

    /** Undoes {@link #moveClass}: only workers that {@code current} (the routing kept) has on {@code from}. */
    private static void moveClassChoices(int[] workers, int[][] choices, WorkerClass workerClass, int psSlot,
                                         int to, int from, IntegralRouting current) {
        for (int i = 0; i < workers.length; i++) {
            if (choices[i][psSlot] == to && current.choice(i, psSlot) == from
                && currentClass(current, workers[i]) == workerClass.id()) {
                choices[i][psSlot] = from;
            }
        }
    }

    private static int currentClass(IntegralRouting routing, int worker) {
        return routing.problem().classOf(worker);
    }

    /** Hill-climbs from {@code start} until no single move improves it or {@code maxPasses} passes are done. */
    public static IntegralRouting improve(IntegralRouting start, int maxPasses) {
        AggregationProblem problem = start.problem();
        int[] workers = start.workers();
        int[][] choices = start.choicesCopy();
        IntegralRouting current = start;
        for (int pass = 0; pass < maxPasses; pass++) {
            Cancellation.check("local search pass " + pass);
            boolean improved = false;
            for (WorkerClass workerClass : problem.classes()) {
                for (int j = 0; j < problem.parameterServerCount(); j++) {
                    List<RouteOption> options = problem.options(workerClass.id(), j);
                    for (RouteOption from : options) {
                        for (RouteOption to : options) {
                            if (from == to) {
                                continue;
                            }
                            IntegralRouting candidate = moveClass(current, workers, choices, workerClass, j,
                                from.id(), to.id());
                            if (candidate != null && candidate.isBetterThan(current)) {
                                current = candidate;
                                improved = true;
                            } else if (candidate != null) {
                                moveClassChoices(workers, choices, workerClass, j, to.id(), from.id(), current);
                            }
                        }
                    }
                }
            }
            for (int i = 0; i < workers.length; i++) {
                int classId = problem.classOf(workers[i]);
                for (int j = 0; j < problem.parameterServerCount(); j++) {
                    if (choices[i][j] < 0) {
                        continue;
                    }
                    List<RouteOption> options = problem.options(classId, j);
                    int kept = choices[i][j];
                    for (RouteOption option : options) {
                        if (option.id() == kept) {
                            continue;
                        }
                        choices[i][j] = option.id();
                        IntegralRouting candidate = new IntegralRouting(problem, start.split(), workers, choices);
                        if (candidate.isBetterThan(current)) {
                            current = candidate;
                            kept = option.id();
                            improved = true;
                        }
                    }
                    choices[i][j] = kept;
                }
            }
            if (!improved) {
                break;
            }
        }
        return current;
    }
}
