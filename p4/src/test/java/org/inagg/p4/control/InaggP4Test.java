package org.inagg.p4.control;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The P4 programs and the Java control plane must agree on constants and on the names the control plane writes. */
class InaggP4Test
{
    private static final Path P4 = Path.of("src", "main", "p4");
    private static final Pattern DEFINE = Pattern.compile("^#define (\\w+) (\\d+)\\s*$", Pattern.MULTILINE);

    private static Map<String, Integer> defines(final String program) throws IOException
    {
        final Map<String, Integer> defines = new HashMap<>();
        final Matcher m = DEFINE.matcher(Files.readString(P4.resolve(program)));
        while (m.find())
        {
            defines.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        return defines;
    }

    @Test
    void shouldCompileTheProgramsWithTheControlPlanesConstants() throws IOException
    {
        for (final String program : new String[]{"inagg_v1model.p4", "inagg_tna.p4"})
        {
            assertThat(defines(program)).as(program)
                .containsEntry("INAGG_UDP_PORT", InaggP4.UDP_PORT)
                .containsEntry("POOL_SLOTS", InaggP4.POOL_SLOTS)
                .containsEntry("POOL_COPIES", 2 * InaggP4.POOL_SLOTS)
                .containsEntry("MAX_WORKERS", InaggP4.MAX_WORKERS)
                .containsEntry("BITMAP_WORDS", InaggP4.BITMAP_WORDS);
        }
        assertThat(defines("inagg_v1model.p4")).containsEntry("MAX_LANES", InaggP4.V1MODEL_MAX_LANES);
        assertThat(defines("inagg_tna.p4")).containsEntry("TNA_LANES", InaggP4.TNA_LANES_PER_PASS)
            .containsEntry("TNA_MAX_CHUNKS", InaggP4.TNA_MAX_LANES / InaggP4.TNA_LANES_PER_PASS)
            .containsEntry("TNA_LANE_ROWS", InaggP4.TNA_LANE_ROWS)
            .containsEntry("ESA_AGGREGATORS", InaggP4.TNA_ESA_AGGREGATORS)
            .containsEntry("ESA_MAX_WORKERS", InaggP4.TNA_ESA_MAX_WORKERS);
    }

    @Test
    void shouldGenerateOneLaneRegisterPerLane() throws IOException
    {
        final String v1model = Files.readString(P4.resolve("generated/inagg_v1model_lane_registers.p4"));
        assertThat(v1model.lines().filter(l -> l.startsWith("REGISTER(bit<32>) (POOL_COPIES) lane_")))
            .hasSize(InaggP4.V1MODEL_MAX_LANES);
        final String tna = Files.readString(P4.resolve("generated/inagg_tna_lane_registers.p4"));
        assertThat(tna.lines().filter(l -> l.startsWith("Register<bit<32>, bit<32>>(TNA_LANE_ROWS) lane_")))
            .hasSize(InaggP4.TNA_LANES_PER_PASS);
    }

    @Test
    void shouldDeclareEveryTableActionAndRegisterTheControlPlaneWrites() throws IOException
    {
        final String v1model = Files.readString(P4.resolve("inagg_v1model.p4"));
        assertThat(v1model).contains("control InaggIngress(", "control InaggEgress(", "table job_table",
            "action set_job(bit<16> workers, bit<16> slots, bit<16> slot_base, bit<16> lanes, bit<16> mcast_grp,",
            "bit<16> session) {",
            "table worker_source", "action source_ok()", "table worker_endpoint",
            "action set_endpoint(bit<48> mac, bit<32> ipv4, bit<16> udp_port)", "table switch_address",
            "action set_switch_address(bit<48> mac, bit<32> ipv4)");
        for (final String register : JobTable.V1MODEL_REGISTERS_TO_RESET)
        {
            assertThat(v1model).contains(") " + register.substring("InaggIngress.".length()) + ";");
        }
        final String tna = Files.readString(P4.resolve("inagg_tna.p4"));
        assertThat(tna).contains("control InaggIngress(", "control InaggEgress(", "table job_table",
            "action set_job(bit<16> workers, bit<16> slots, bit<16> slot_base, bit<16> lanes, bit<16> mcast_grp,\n"
                + "                   bit<32> lane_base, bit<8> chunks, bit<2> chunk_shift, bit<16> session)",
            "@name(\"job_id\")", "@name(\"worker_id\")", "@name(\"src_addr\")", "@name(\"src_port\")",
            "@name(\"worker\")", "action set_endpoint(bit<48> mac, bit<32> ipv4, bit<16> udp_port)",
            "action set_switch_address(bit<48> mac, bit<32> ipv4)");
        for (final String register : BfrtScript.TNA_REGISTERS_TO_CLEAR)
        {
            assertThat(tna).contains(") " + register + ";");
        }
        // what JobTable.bfrtPython (BfrtScript) writes for ESA jobs
        for (final String register : BfrtScript.TNA_ESA_REGISTERS_TO_CLEAR)
        {
            assertThat(tna).contains(") " + register + ";");
        }
        assertThat(tna).contains(
            "action set_esa_job(bit<16> workers, bit<16> window, bit<16> lanes, bit<16> mcast_grp, bit<32> lane_base,\n"
                + "                       bit<32> hash_offset, bit<32> job_tag, bit<32> full_mask, bit<32> rank,\n"
                + "                       bit<1> rank_from_header, MirrorId_t ps_session, bit<16> session)",
            "actions = { set_job; set_esa_job; unknown_job; }",
            "table esa_server_port {\n        key = { meta.server_job: exact @name(\"job_id\"); }",
            "action set_server_port(PortId_t port)", "table server_endpoint {\n        key = { hdr.inagg.job_id: exact"
                + " @name(\"job_id\"); }\n        actions = { set_endpoint; no_endpoint; }",
            "const bit<16> ESA_SERVER_RID = " + String.format("0x%04X", JobTable.SERVER_RID) + ";",
            "meta.esa_index = (hdr.inagg.sequence + meta.hash_offset) & (ESA_AGGREGATORS - 1);",
            "meta.esa_tag = meta.job_tag | (hdr.inagg.sequence >> 8);",
            "meta.lane_row = meta.lane_base + meta.esa_index;",
            "meta.rank = (bit<32>)hdr.inagg.prio + 1;",
            "meta.mirror_session = meta.ps_session;",
            "mirror.emit<mirror_h>(meta.mirror_session, {meta.mirror_kind});");
    }
}
