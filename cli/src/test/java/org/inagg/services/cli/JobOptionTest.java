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
        assertThat(SwitchCommand.parseJob("1:4", 256)).isEqualTo(new SwitchJobConfig(1, 4));
        assertThat(SwitchCommand.parseJob("1:5:16:256", 363)).isEqualTo(new SwitchJobConfig(1, 5, 16, 256));
    }

    @Test
    void shouldFillTheMtuWhereNoLanesAreGivenKeepingTheDefaultLanesInFlight()
    {
        assertThat(SwitchCommand.parseJob("1:4", SwitchJobConfig.lanesFillingMtu(1500)))
            .isEqualTo(new SwitchJobConfig(1, 4, 90, 363));
        assertThat(SwitchCommand.parseJob("1:4:32", SwitchJobConfig.lanesFillingMtu(65_536)))
            .isEqualTo(new SwitchJobConfig(1, 4, 32, 363));
        assertThat(SwitchCommand.parseJob("1:4", SwitchJobConfig.lanesFillingMtu(1450)))
            .isEqualTo(new SwitchJobConfig(1, 4, 93, 350));
        assertThat(SwitchCommand.parseJob("1:4", SwitchJobConfig.lanesFillingMtu(576)))
            .isEqualTo(new SwitchJobConfig(1, 4, 248, 132));
        assertThatIllegalArgumentException().isThrownBy(() -> SwitchJobConfig.lanesFillingMtu(51))
            .withMessageContaining("MTU of 51 bytes holds no lane");
    }

    @Test
    void shouldRejectTrailingColonsInsteadOfIgnoringThem()
    {
        // JobOptionFuzzTest's input: String.split dropped the trailing empty part and read "1:27:1:7".
        assertThatIllegalArgumentException().isThrownBy(() -> SwitchCommand.parseJob("1:27:1:7:", 256))
            .withMessageContaining("1:27:1:7:");
        assertThatIllegalArgumentException().isThrownBy(() -> SwitchCommand.parseJob("1:4:", 256))
            .withMessageContaining("1:4:");
    }
}
