package org.inagg.p4.bmv2;

import java.util.List;

import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.softswitch.SwitchCounter;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Where the v1model program counts what, as {@link Bmv2Switch#counters()} reads it (no toolchain needed). */
class Bmv2P4CountersTest
{
    private final P4Counters program = P4Counters.v1model();

    @Test
    void shouldNameEverySlotCounterAfterASwitchCounterAtTypeIdMinus200()
    {
        assertThat(program.names('C')).isNotEmpty();
        for (final String name : program.names('C'))
        {
            final SwitchCounter counter = SwitchCounter.valueOf(name);
            assertThat(program.cells('C', name)).containsExactly(
                "InaggIngress.inagg_counters " + (counter.typeId() - 200),
                "InaggEgress.egress_counters " + (counter.typeId() - 200));
        }
        assertThat(program.names('C')).doesNotContain("TX_FULL").contains("RECEIVED", "RESULTS_SENT", "JOINS");
    }

    @Test
    void shouldNameEveryEsaCounterAfterAnEsaCounterAtTypeIdMinus300()
    {
        assertThat(program.names('E')).isNotEmpty();
        for (final String name : program.names('E'))
        {
            final EsaCounter counter = EsaCounter.valueOf(name);
            assertThat(program.cells('E', name)).first().isEqualTo("InaggIngress.esa_counters "
                + (counter.typeId() - 300));
        }
        assertThat(program.cells('E', "NO_SUCH_COUNTER")).isEmpty();
    }

    @Test
    void shouldAttributeEachCountToItsControl()
    {
        final P4Counters counters = new P4Counters("""
            const bit<32> C_RECEIVED = 1;
            const bit<32> E_ACKS = 16;
            control InaggIngress(inout headers_t hdr) {
                apply { a_counters.count(C_RECEIVED); b_counters.count(E_ACKS); }
            }
            control InaggEgress(inout headers_t hdr) {
                apply { c_counters.count(C_RESULTS_SENT); }
            }
            """);
        assertThat(counters.cells('C', "RECEIVED"))
            .isEqualTo(List.of("InaggIngress.a_counters 1", "InaggEgress.c_counters 1"));
        assertThat(counters.cells('E', "ACKS")).isEqualTo(List.of("InaggIngress.b_counters 16"));
    }
}
