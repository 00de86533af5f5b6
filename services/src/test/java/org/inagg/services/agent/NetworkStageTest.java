package org.inagg.services.agent;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NetworkStageTest
{
    @Test
    void shouldNameTheControllerJobAfterTheJobKeyInTheCharactersTheControllerAccepts()
    {
        assertThat(NetworkStage.jobName("run-42:a@b.c_d-0123456789abcdef")).isEqualTo("run-42:a@b.c_d-0123456789abcdef");
        assertThat(NetworkStage.jobName("my run/é-0123456789abcdef")).isEqualTo("my_run__-0123456789abcdef");
        final String longKey = "r".repeat(190) + "-0123456789abcdef";
        assertThat(NetworkStage.jobName(longKey)).hasSize(128).endsWith("r-0123456789abcdef"); // keeps the random end
    }
}
