package org.inagg.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class ReductionDevicesTest
{
    @Test
    void shouldOpenTheCpuReducerByName()
    {
        try (ReductionDevice device = ReductionDevices.open("cpu"))
        {
            assertThat(device).isInstanceOf(CpuReducer.class);
            assertThat(device.describe()).startsWith("cpu");
        }
    }

    @Test
    void shouldFallBackToTheCpuOnAutoWithoutAGpu()
    {
        Assumptions.assumeTrue(ReductionDevices.cudaUnavailableReason().isPresent(), "a GPU is present");
        try (ReductionDevice device = ReductionDevices.open("auto"))
        {
            assertThat(device).isInstanceOf(CpuReducer.class);
        }
    }

    @Test
    void shouldFailClearlyWhenTheGpuIsSelectedButNoneIsUsable()
    {
        Assumptions.assumeTrue(ReductionDevices.cudaUnavailableReason().isPresent(), "a GPU is present");
        assertThatThrownBy(() -> ReductionDevices.open("cuda"))
            .isInstanceOf(CudaUnavailableException.class)
            .hasMessageContaining("CUDA is not usable here")
            .hasMessageContaining("\"cpu\"");
        System.out.println("[inagg-gpu] selecting cuda here fails with: "
            + ReductionDevices.cudaUnavailableReason().orElseThrow());
    }

    @Test
    void shouldRejectUnknownDeviceNames()
    {
        assertThatThrownBy(() -> ReductionDevices.open("tpu")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("cpu, cuda, cuda:N or auto");
    }
}
