package org.inagg.control.lp;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class LinearProgramTest {

    @Test
    void shouldSolveATextbookLinearProgram() {
        // max 3x + 5y st x <= 4, 2y <= 12, 3x + 2y <= 18: optimum 36 at (2, 6)
        LinearProgram lp = new LinearProgram();
        int x = lp.nonNegative("x", 3);
        int y = lp.nonNegative("y", 5);
        lp.row("a").plus(x, 1).atMost(4);
        lp.row("b").plus(y, 2).atMost(12);
        lp.row("c").plus(x, 3).plus(y, 2).atMost(18);

        LpSolution solution = lp.maximise();

        assertThat(solution.objective()).isCloseTo(36, within(1e-9));
        assertThat(solution.value(x)).isCloseTo(2, within(1e-9));
        assertThat(solution.value(y)).isCloseTo(6, within(1e-9));
    }

    @Test
    void shouldSolveAKnapsackAsAMixedIntegerProgram() {
        LinearProgram mip = new LinearProgram();
        int a = mip.binary("a", 10);
        int b = mip.binary("b", 7);
        int c = mip.binary("c", 6);
        mip.row("weight").plus(a, 5).plus(b, 4).plus(c, 3).atMost(7);

        assertThat(mip.maximise().objective()).isCloseTo(13, within(1e-9));
    }

    @Test
    void shouldAddUpRepeatedCoefficients() {
        LinearProgram lp = new LinearProgram();
        int x = lp.nonNegative("x", 1);
        lp.row("twice").plus(x, 1).plus(x, 1).atMost(4);

        assertThat(lp.maximise().objective()).isCloseTo(2, within(1e-9));
    }

    @Test
    void shouldFailLoudlyWhenInfeasible() {
        LinearProgram lp = new LinearProgram();
        int x = lp.nonNegative("x", 1);
        lp.row("low").plus(x, 1).atMost(1);
        lp.row("high").plus(x, 1).atLeast(2);

        assertThatThrownBy(lp::maximise).isInstanceOf(LpException.class);
    }

    @Test
    void shouldNotStartASolveOnAnInterruptedThreadAndLeaveTheInterruptSet() {
        LinearProgram lp = new LinearProgram();
        int x = lp.nonNegative("x", 1);
        lp.row("cap").plus(x, 1).atMost(4);
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(lp::maximise).isInstanceOf(java.util.concurrent.CancellationException.class)
                .hasMessageContaining("planning interrupted at a linear program of 1 variables and 1 rows");
            assertThat(Thread.currentThread().isInterrupted()).as("the caller still sees why").isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(lp.maximise().objective()).as("solves once the interrupt is cleared").isCloseTo(4, within(1e-9));
    }
}
