package org.inagg.services.cli;

import org.inagg.p4.softswitch.SwitchJobConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** {@code --job ID:WORKERS[:SLOTS[:LANES]]}; the trailing-colon case is a fuzzing finding (docs/fuzzing.md). */
class JobOptionTest
{
    @Test
    void shouldReadTwoToFourNumbers()
    {
        assertThat(SwitchCommand.parseJob("1:4")).isEqualTo(new SwitchJobConfig(1, 4));
        assertThat(SwitchCommand.parseJob("1:5:16:256")).isEqualTo(new SwitchJobConfig(1, 5, 16, 256));
    }

    @Test
    void shouldRejectTrailingColonsInsteadOfIgnoringThem()
    {
        // JobOptionFuzzTest's input: String.split dropped the trailing empty part and read "1:27:1:7".
        assertThatIllegalArgumentException().isThrownBy(() -> SwitchCommand.parseJob("1:27:1:7:"))
            .withMessageContaining("1:27:1:7:");
        assertThatIllegalArgumentException().isThrownBy(() -> SwitchCommand.parseJob("1:4:"))
            .withMessageContaining("1:4:");
    }
}
