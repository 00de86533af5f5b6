package org.inagg.services.agent;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NetworkStageTest
{
    @Test
    void shouldNameTheControllerJobAfterTheRunIdAndAHashInTheCharactersTheControllerAccepts()
    {
        assertThat(NetworkStage.jobName("run-42:a@b.c_d-0123456789abcdef")).matches("run-42:a@b\\.c_d-[0-9a-f]{16}");
        assertThat(NetworkStage.jobName("my run/é-0123456789abcdef")).matches("my_run__-[0-9a-f]{16}");
        assertThat(NetworkStage.jobName("key")).matches("job-[0-9a-f]{16}");
        final String longKey = "r".repeat(190) + "-0123456789abcdef";
        assertThat(NetworkStage.jobName(longKey)).hasSize(128).matches("r+-[0-9a-f]{16}");
        assertThat(NetworkStage.jobName("run-0123456789abcdef")).isNotEqualTo(NetworkStage.jobName("run-0123456789abcdee"));
    }

    @Test
    void shouldDeriveTheSameSecretOnEveryHostThatTheNameDoesNotReveal()
    {
        final String key = "run-42-0123456789abcdef";
        assertThat(NetworkStage.jobSecret(key)).isEqualTo(NetworkStage.jobSecret(key)).matches("[0-9a-f]{64}")
            .doesNotContain("0123456789abcdef").isNotEqualTo(NetworkStage.jobSecret("run-42-0123456789abcdee"));
        assertThat(NetworkStage.jobName(key)).doesNotContain("0123456789abcdef")
            .doesNotContain(NetworkStage.jobSecret(key).substring(0, 16));
    }
}
