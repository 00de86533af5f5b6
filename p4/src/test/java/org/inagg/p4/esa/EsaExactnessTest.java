package org.inagg.p4.esa;

import java.util.List;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.inagg.p4.esa.sim.EsaExperiment;
import org.inagg.p4.esa.sim.EsaExperiment.JobSpec;
import org.inagg.p4.esa.sim.EsaExperiment.Outcome;
import org.inagg.p4.esa.sim.EsaExperiment.Scheme;
import org.inagg.p4.esa.sim.EsaExperiment.Setup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * End to end in virtual time: jobs of different priorities and sizes on a pool far smaller than their windows, so that
 * preemption, collision fallback, flushes and server merges all happen, with losses and duplicates on every hop. Every
 * worker checks every result against the exact int sum; a single wrong or missing lane fails the run.
 */
class EsaExactnessTest
{
    private static Setup setup(final int aggregators, final double drop, final double duplicate, final long seed,
        final PriorityPolicy policy)
    {
        return setup(aggregators, drop, duplicate, seed, policy, false);
    }

    private static Setup setup(final int aggregators, final double drop, final double duplicate, final long seed,
        final PriorityPolicy policy, final boolean lossyServers)
    {
        return new Setup(List.of(
            new JobSpec(3, 600, 0, 1),
            new JobSpec(4, 400, 5_000, 3),
            new JobSpec(2, 300, 10_000, 2),
            new JobSpec(5, 200, 15_000, 3)),
            aggregators, 16, 8, 100, 1_000, 20_000, 2_000, drop, duplicate, seed, policy, 5_000, 2_000_000_000L,
            lossyServers);
    }

    private static void assertExact(final Outcome outcome, final Setup setup)
    {
        assertThat(outcome.jobs()).allSatisfy(job ->
        {
            assertThat(job.done()).isTrue();
            assertThat(job.wrong()).isZero();
        });
        assertThat(outcome.allExact(setup)).as(EsaExperiment.format(outcome, setup)).isTrue();
    }

    @Test
    @Timeout(60)
    void shouldKeepEverySumExactUnderPreemptionAndFallbackWithStaticPriorities()
    {
        final Setup setup = setup(6, 0, 0, 1, PriorityPolicy.HEADER);
        final Outcome outcome = EsaExperiment.run(Scheme.ESA, setup);
        assertExact(outcome, setup);
        assertThat(outcome.preemptions()).as("preemptions happened").isPositive();
        assertThat(outcome.collisions()).as("collisions fell back").isPositive();
        assertThat(outcome.serverCompleted()).as("the server finished blocks").isPositive();
    }

    @Test
    @Timeout(60)
    void shouldKeepEverySumExactWithLossesAndDuplicatesOnEveryHop()
    {
        for (final PriorityPolicy policy : List.of(PriorityPolicy.HEADER, PriorityPolicy.SHORTEST_REMAINING_FIRST))
        {
            final Setup setup = setup(6, 0.01, 0.01, 7, policy);
            final Outcome outcome = EsaExperiment.run(Scheme.ESA, setup);
            assertExact(outcome, setup);
            assertThat(outcome.dropped()).isPositive();
            assertThat(outcome.duplicated()).isPositive();
            assertThat(outcome.retransmissions()).isPositive();
            assertThat(outcome.flushes()).as("retransmissions flushed partials").isPositive();
        }
    }

    @Test
    @Timeout(60)
    void shouldKeepEverySumExactUnderAtpAndSwitchMlWithLossesAndDuplicates()
    {
        final Setup setup = setup(8, 0.01, 0.01, 11, PriorityPolicy.HEADER);
        assertExact(EsaExperiment.run(Scheme.ATP, setup), setup);
        assertExact(EsaExperiment.run(Scheme.SWITCHML, setup), setup);
    }

    @Test
    @Timeout(60)
    void shouldNeverDeliverAWrongSumEvenWhenTheServersLinksLoseMessages()
    {
        // A lost copy of a completed sum can leave a worker that also lost its result waiting (docs/esa.md): such a
        // run may end unfinished, but no result may ever be wrong.
        for (final Scheme scheme : List.of(Scheme.ESA, Scheme.ATP))
        {
            final Setup setup = setup(6, 0.02, 0.02, 3, PriorityPolicy.HEADER, true);
            final Outcome outcome = EsaExperiment.run(scheme, setup);
            assertThat(outcome.jobs()).allSatisfy(job -> assertThat(job.wrong()).isZero());
            assertThat(outcome.jobs().stream().mapToLong(EsaExperiment.JobOutcome::verified).sum()).isPositive();
        }
    }

    @Property(tries = 12)
    void shouldKeepEverySumExactForAnySeed(@ForAll @LongRange(min = 1, max = 1_000_000) final long seed)
    {
        final Setup setup = setup(4, 0.02, 0.02, seed, PriorityPolicy.SHORTEST_REMAINING_FIRST);
        assertExact(EsaExperiment.run(Scheme.ESA, setup), setup);
    }
}
