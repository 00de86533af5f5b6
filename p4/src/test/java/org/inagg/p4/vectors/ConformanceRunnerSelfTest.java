package org.inagg.p4.vectors;

import java.util.ArrayList;
import java.util.List;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The conformance runner must be able to fail: a vector with one wrong byte or one missing frame does. */
class ConformanceRunnerSelfTest
{
    private static ConformanceVector aggregateVector() throws Exception
    {
        return ConformanceVector.read(ConformanceVectorTest.VECTORS.resolve("aggregate_to_completion.stf"));
    }

    @Test
    void shouldFailWhenAnExpectedLaneDiffers() throws Exception
    {
        final ConformanceVector vector = aggregateVector();
        final ConformanceVector.Step completing = vector.steps().get(2);
        final byte[] frame = completing.expected().getFirst().frame().clone();
        frame[frame.length - 1] ^= 1;
        completing.expected().set(0, new ConformanceVector.Expected(completing.expected().getFirst().port(), frame));
        assertThatThrownBy(() -> ConformanceVectorTest.run(vector)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("frames out after packet 3");
    }

    @Test
    void shouldFailWhenAFrameIsNotExpected() throws Exception
    {
        final ConformanceVector vector = aggregateVector();
        final List<ConformanceVector.Step> steps = new ArrayList<>(vector.steps());
        steps.get(2).expected().removeLast();
        assertThatThrownBy(() -> ConformanceVectorTest.run(vector)).isInstanceOf(AssertionError.class);
    }

    @Test
    void shouldFailWhenAnEsaPartialsBitmapDiffers() throws Exception
    {
        final ConformanceVector vector =
            ConformanceVector.read(ConformanceVectorTest.VECTORS.resolve("esa_preemption.stf"));
        final ConformanceVector.Step preempting = vector.steps().get(2);
        final byte[] frame = preempting.expected().getFirst().frame().clone();
        frame[frame.length - 1] ^= 0b010; // bitmap 0b101 -> 0b111
        preempting.expected().set(0, new ConformanceVector.Expected(preempting.expected().getFirst().port(), frame));
        assertThatThrownBy(() -> ConformanceVectorTest.run(vector)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("frames out after packet 3");
    }

    @Test
    void shouldFailWhenTheFlushedPartialAndTheRetransmissionSwap() throws Exception
    {
        final ConformanceVector vector =
            ConformanceVector.read(ConformanceVectorTest.VECTORS.resolve("esa_retransmit_flush.stf"));
        final List<ConformanceVector.Expected> flush = vector.steps().get(2).expected();
        flush.add(flush.removeFirst());
        assertThatThrownBy(() -> ConformanceVectorTest.run(vector)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("frames out after packet 3");
    }

    @Test
    void shouldFailWhenAnEsaCounterDiffers() throws Exception
    {
        final ConformanceVector vector = ConformanceVector.read(ConformanceVectorTest.VECTORS.resolve("esa_atp.stf"));
        vector.softswitchCounters().put("ACKS", 1L);
        assertThatThrownBy(() -> ConformanceVectorTest.run(vector)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("ACKS");
    }

    @Test
    void shouldFailWhenACounterDiffers() throws Exception
    {
        final ConformanceVector vector = ConformanceVector.read(ConformanceVectorTest.VECTORS.resolve("spoofing.stf"));
        vector.softswitchCounters().put("DROP_SOURCE_MISMATCH", 3L);
        assertThatThrownBy(() -> ConformanceVectorTest.run(vector)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("DROP_SOURCE_MISMATCH");
    }

    @Test
    void shouldRefuseJobsWhoseSlotsOverlapInTheSharedPool()
    {
        final SoftwareSwitch softwareSwitch = new SoftwareSwitch(
            new FrameTransport(new org.inagg.p4.control.SwitchAddress(1, 1)), new CounterRegistry(64), 16);
        softwareSwitch.addJob(new SwitchJobConfig(1, 2, 8, 4, 0, 1, new int[]{0, 1}));
        softwareSwitch.addJob(new SwitchJobConfig(2, 2, 8, 4, 8, 2, new int[]{0, 1}));
        softwareSwitch.addJob(new SwitchJobConfig(3, 2, 8, 4, SwitchJobConfig.NO_SLOT_BASE, 0, null));
        softwareSwitch.addJob(new SwitchJobConfig(1, 2, 4, 4, 4, 1, null)); // job 1 replaced within its old range
        assertThatThrownBy(() -> softwareSwitch.addJob(new SwitchJobConfig(4, 2, 8, 4, 10, 4, null)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overlap job 2's slots 8..15");
        assertThatThrownBy(() -> new SwitchJobConfig(5, 3, 8, 4, 0, 5, new int[]{0, 1}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 registered worker peers for 3");
    }
}
