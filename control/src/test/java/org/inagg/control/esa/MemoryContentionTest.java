package org.inagg.control.esa;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class MemoryContentionTest {

    private final List<EsaJob> jobs = EsaScenarios.mixedJobs(8, 1);

    @ParameterizedTest
    @ValueSource(ints = {32, 64, 128})
    void shouldFinishJobsSoonerOnAverageWithEsaWhenMemoryIsScarce(int slots) {
        Map<AllocationPolicy, ContentionResult> results = EsaScenarios.compare(
            new ContentionSettings(slots, 10, 20, 256, 1), jobs);

        double esa = results.get(AllocationPolicy.PREEMPTIVE_PRIORITY).averageCompletionTicks();
        assertThat(results.get(AllocationPolicy.DEALLOCATE_ON_ACK).averageCompletionTicks()).isGreaterThan(esa);
        assertThat(results.get(AllocationPolicy.STATIC_PARTITION).averageCompletionTicks()).isGreaterThan(esa);
    }

    @Test
    void shouldStayWithinTwoPercentOfEachOtherWhenMemoryIsAmple() {
        Map<AllocationPolicy, ContentionResult> results = EsaScenarios.compare(
            new ContentionSettings(4096, 10, 20, 256, 1), jobs);

        double esa = results.get(AllocationPolicy.PREEMPTIVE_PRIORITY).averageCompletionTicks();
        for (ContentionResult result : results.values()) {
            assertThat(result.averageCompletionTicks()).isCloseTo(esa, within(0.02 * esa));
            assertThat(result.fallbackBytes()).isZero();
        }
    }

    @Test
    void shouldNeverFallBackToThePsUnderAStaticPartition() {
        ContentionResult result = MemoryContentionSimulator.run(AllocationPolicy.STATIC_PARTITION,
            new ContentionSettings(32, 10, 20, 256, 1), jobs);

        assertThat(result.fallbackBytes()).isZero();
        assertThat(result.preemptions()).isZero();
    }

    @Test
    void shouldTakeOneTickPerChunkForASingleJobWithPlentyOfSlots() {
        EsaJob job = new EsaJob(4, 1000, 1, 0, 0);
        ContentionResult result = MemoryContentionSimulator.run(AllocationPolicy.PREEMPTIVE_PRIORITY,
            new ContentionSettings(1000, 10, 0, 256, 1), List.of(job));

        // 1000 chunks at line rate, the last one aggregated one tick after it starts, plus the round trip.
        assertThat(result.completionTicks()[0]).isEqualTo(999 + 1 + 10);
    }
}
