package org.inagg.control.passing;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PassingCostModelTest {

    @ParameterizedTest
    @ValueSource(doubles = {PassingCostModel.VGG19_BYTES, PassingCostModel.RESNET50_BYTES})
    void shouldMakePassingTheFastestSynchronisation(double modelBytes) {
        Map<SyncStrategy, Double> times = PassingCostModel.all(ClusterSpec.paperLike(), modelBytes);

        double passing = times.get(SyncStrategy.PASSING);
        for (var entry : times.entrySet()) {
            if (entry.getKey() != SyncStrategy.PASSING) {
                assertThat(entry.getValue()).as(entry.getKey().name()).isGreaterThan(passing);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(doubles = {PassingCostModel.VGG19_BYTES, PassingCostModel.RESNET50_BYTES})
    void shouldSendOneModelPerHostThroughTheNic(double modelBytes) {
        ClusterSpec cluster = ClusterSpec.paperLike();
        double nicSeconds = modelBytes / (cluster.nicGbps() * 1e9 / 8);
        double inHostSeconds = 2.0 * 7 / 8 * modelBytes / (cluster.inHostGBps() * 1e9);

        assertThat(PassingCostModel.seconds(SyncStrategy.PASSING, cluster, modelBytes))
            .isCloseTo(nicSeconds + inHostSeconds, within(1e-12));
        assertThat(PassingCostModel.seconds(SyncStrategy.PER_GPU_INA, cluster, modelBytes))
            .isCloseTo(8 * nicSeconds, within(1e-12));
    }

    @ParameterizedTest
    @ValueSource(doubles = {0, 0.1, 1})
    void shouldShrinkTheThroughputGainAsComputeGrows(double computeSeconds) {
        ClusterSpec cluster = ClusterSpec.paperLike();
        double gain = PassingCostModel.throughputGain(SyncStrategy.HIERARCHICAL_RING, cluster,
            PassingCostModel.VGG19_BYTES, computeSeconds);

        assertThat(gain).isPositive().isLessThanOrEqualTo(
            PassingCostModel.speedup(SyncStrategy.HIERARCHICAL_RING, cluster, PassingCostModel.VGG19_BYTES) - 1
                + 1e-12);
    }
}
