package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class LinkRateTest
{
    @Test
    void shouldParseRatesAsTcWritesThem()
    {
        assertThat(LinkRate.parse("100mbit").bitsPerSecond()).isEqualTo(100_000_000L);
        assertThat(LinkRate.parse("1gbit").bitsPerSecond()).isEqualTo(1_000_000_000L);
        assertThat(LinkRate.parse("2.5Gbit/s").bitsPerSecond()).isEqualTo(2_500_000_000L);
        assertThat(LinkRate.parse("500kbit").bitsPerSecond()).isEqualTo(500_000L);
        assertThat(LinkRate.parse("1Gbps").bitsPerSecond()).isEqualTo(1_000_000_000L);
        assertThat(LinkRate.parse(" 64000 ").bitsPerSecond()).isEqualTo(64_000L);
        assertThat(LinkRate.parse("100mbit").tc()).isEqualTo("100000000bit");
        assertThat(LinkRate.parse("100mbit")).hasToString("100 Mbit/s");
        assertThat(LinkRate.parse("2.5gbit")).hasToString("2.50 Gbit/s");
    }

    @Test
    void shouldNameABadRate()
    {
        assertThatThrownBy(() -> LinkRate.parse("fast")).hasMessageContaining("'fast'").hasMessageContaining("100mbit");
        assertThatThrownBy(() -> LinkRate.parse("100mb")).hasMessageContaining("'100mb'");
        assertThatThrownBy(() -> LinkRate.parse("-5mbit")).hasMessageContaining("'-5mbit'");
        assertThatThrownBy(() -> LinkRate.parse("10kbit")).hasMessageContaining("outside");
        assertThatThrownBy(() -> LinkRate.parse("101gbit")).hasMessageContaining("outside");
    }
}
