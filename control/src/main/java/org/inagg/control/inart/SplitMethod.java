package org.inagg.control.inart;

/** How phase 1 splits the model among parameter servers. */
public enum SplitMethod {
    /**
     * The paper's Lagrangian method, made concrete: each PS {@code j} alone could absorb the model at rate
     * {@code mu_j} (the routing program with all of the model sent to it); minimising the slowest PS's time
     * {@code max_j split_j / mu_j} subject to {@code sum split_j = 1}, the KKT conditions with one multiplier give
     * {@code split_j = mu_j / sum mu}. It treats PSs as independent, which shared links and switches are not.
     */
    LAGRANGIAN,
    /**
     * Exact: the split enters the routing program linearly (as per-PS rates {@code d_j}, with
     * {@code split_j = d_j / sum d}), so one LP gives the best split and routing together. The paper leaves
     * phase 1 under-specified; this is what we use by default.
     */
    EXACT_LP
}
