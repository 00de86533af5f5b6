package org.inagg.p4.control;

import java.util.List;

import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaJobConfig;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.PriorityPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JobTableTest
{
    private static final SwitchAddress SWITCH = new SwitchAddress(0x0200_0000_00feL, 0x0a00_00fe);

    private static WorkerEndpoint worker(final int n)
    {
        return new WorkerEndpoint(n, n + 1, 0x0200_0000_0000L + n + 1, 0x0a00_0001 + n, 40001 + n);
    }

    private static JobTable twoJobs()
    {
        return new JobTable(SWITCH)
            .add(new JobSpec(1, 4, 0, 32, 1, List.of(worker(0), worker(1))))
            .add(new JobSpec(2, 8, 4, 16, 7, List.of(worker(2))));
    }

    @Test
    void shouldEmitSimpleSwitchCliCommands()
    {
        assertThat(twoJobs().simpleSwitchCommands()).containsExactly(
            "register_reset InaggIngress.used_reg",
            "register_reset InaggIngress.seen_reg",
            "table_set_default InaggEgress.switch_address InaggEgress.set_switch_address 02:00:00:00:00:fe 10.0.0.254",
            "table_add InaggIngress.job_table InaggIngress.set_job 1 => 2 4 0 32 1 0",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 1 0 10.0.0.1 40001 =>",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 1 1 10.0.0.2 40002 =>",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 1 0 => 02:00:00:00:00:01 10.0.0.1 40001",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 1 1 => 02:00:00:00:00:02 10.0.0.2 40002",
            "mc_mgrp_create 1",
            "mc_node_create 0 1",
            "mc_node_associate 1 0",
            "mc_node_create 1 2",
            "mc_node_associate 1 1",
            "table_add InaggIngress.job_table InaggIngress.set_job 2 => 1 8 4 16 7 0",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 2 0 10.0.0.3 40003 =>",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 2 0 => 02:00:00:00:00:03 10.0.0.3 40003",
            "mc_mgrp_create 7",
            "mc_node_create 0 3",
            "mc_node_associate 7 2");
    }

    @Test
    void shouldWriteAJoinCredentialRowForEveryWorkerThatHasOneAndNoneForTheOthers()
    {
        final JobTable table = new JobTable(SWITCH).add(new JobSpec(1, 4, 0, 32, 1,
            List.of(worker(0).withJoinCredential(0x0123_4567_89AB_CDEFL), worker(1))));
        assertThat(table.simpleSwitchCommands()).filteredOn(c -> c.contains("join_credential")).containsExactly(
            "table_add InaggIngress.join_credential InaggIngress.set_join_credential 1 0 => 0x0123456789abcdef");
        assertThat(table.bfrtPython()).contains("ingress.join_credential.add_with_set_join_credential(job_id=1, "
            + "worker_id=0, credential=0x0123456789abcdef)\n").doesNotContain("worker_id=1, credential");
        assertThat(table.jobs().getFirst().toSwitchJobConfig().joinCredentials())
            .containsExactly(0x0123_4567_89AB_CDEFL, 0L);
        assertThat(worker(0).withJoinCredential(0x0123_4567_89AB_CDEFL).toString()).doesNotContain("0123456789")
            .contains("joinCredential=set");
    }

    private static JobTable slotJobAndEsaJob(final AllocationMode mode, final PriorityPolicy policy)
    {
        return new JobTable(SWITCH)
            .add(new JobSpec(1, 4, 0, 32, 1, List.of(worker(0), worker(1))))
            .esaPool(new EsaPool(16, 8, mode, policy))
            .add(new EsaJobSpec(3, 64, 256, 5, 6, 9, 1L << 20, List.of(worker(2), worker(3)), worker(8)));
    }

    @Test
    void shouldEmitEsaJobsAfterTheSlotJobs()
    {
        assertThat(slotJobAndEsaJob(AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER).simpleSwitchCommands())
            .containsExactly(
            "register_reset InaggIngress.used_reg",
            "register_reset InaggIngress.seen_reg",
            "register_reset InaggIngress.key_reg",
            "register_reset InaggIngress.tomb_reg",
            "table_set_default InaggEgress.switch_address InaggEgress.set_switch_address 02:00:00:00:00:fe 10.0.0.254",
            "table_add InaggIngress.job_table InaggIngress.set_job 1 => 2 4 0 32 1 0",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 1 0 10.0.0.1 40001 =>",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 1 1 10.0.0.2 40002 =>",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 1 0 => 02:00:00:00:00:01 10.0.0.1 40001",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 1 1 => 02:00:00:00:00:02 10.0.0.2 40002",
            "mc_mgrp_create 1",
            "mc_node_create 0 1",
            "mc_node_associate 1 0",
            "mc_node_create 1 2",
            "mc_node_associate 1 1",
            // workers window lanes group flush-group mode first-copy mask hash-offset from-header priority port;
            // 3 * 0x9E3779B1 = 0xDAA66D13 (mod 2^32), & 7 = 3
            "table_add InaggIngress.job_table InaggIngress.set_esa_job 3 => 2 64 256 5 6 1 32 7 3 1 9 9 0",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 3 0 10.0.0.3 40003 =>",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 3 1 10.0.0.4 40004 =>",
            "table_add InaggIngress.server_source InaggIngress.server_ok 3 10.0.0.9 40009 =>",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 3 0 => 02:00:00:00:00:03 10.0.0.3 40003",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 3 1 => 02:00:00:00:00:04 10.0.0.4 40004",
            "table_add InaggEgress.server_endpoint InaggEgress.set_endpoint 3 => 02:00:00:00:00:09 10.0.0.9 40009",
            "mc_mgrp_create 5",
            "mc_node_create 0 3",
            "mc_node_associate 5 2",
            "mc_node_create 1 4",
            "mc_node_associate 5 3",
            "mc_node_create 65535 9",
            "mc_node_associate 5 4",
            "mc_mgrp_create 6",
            "mc_node_create 65534 9",
            "mc_node_associate 6 5",
            "mc_node_create 65535 9",
            "mc_node_associate 6 6");
    }

    @Test
    void shouldWriteModeAndPolicyIntoEveryEsaRow()
    {
        assertThat(slotJobAndEsaJob(AllocationMode.DEALLOCATE_ON_ACK, PriorityPolicy.JOB_TABLE).simpleSwitchCommands())
            .contains("table_add InaggIngress.job_table InaggIngress.set_esa_job 3 => 2 64 256 5 6 2 32 7 3 0 9 9 0");
        // SRF: the control plane writes the priority of the job's remaining bytes (1 MiB at setup)
        assertThat(slotJobAndEsaJob(AllocationMode.PREEMPTIVE, PriorityPolicy.SHORTEST_REMAINING_FIRST)
            .simpleSwitchCommands())
            .contains("table_add InaggIngress.job_table InaggIngress.set_esa_job 3 => 2 64 256 5 6 1 32 7 3 0 175 9 0");
    }

    @Test
    void shouldConfigureAnEsaSwitchAsTheV1modelProgram()
    {
        final JobTable table = slotJobAndEsaJob(AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER);
        assertThat(table.esaSwitchSettings(16).aggregators()).isEqualTo(8);
        assertThat(table.esaSwitchSettings(16).mode()).isEqualTo(AllocationMode.PREEMPTIVE);
        assertThat(table.esaJobs().getFirst().toEsaJobConfig())
            .isEqualTo(new EsaJobConfig(3, 2, 256, 64, 9, new int[] {2, 3}, 8, 1L << 20));
    }

    @Test
    void shouldRefuseEsaPoolsAndJobsThatCollide()
    {
        final JobTable table = new JobTable(SWITCH).add(new JobSpec(1, 4, 0, 32, 1, List.of(worker(0))));
        assertThatThrownBy(() -> table.esaPool(new EsaPool(2, 8, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overlap job 1's slots 0..3");
        assertThatThrownBy(() -> new EsaPool(4, 6, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("power of two");
        assertThatThrownBy(() -> table.add(new EsaJobSpec(3, 8, 4, 5, 6, 0, 0, List.of(worker(2), worker(3)),
            worker(8)))).isInstanceOf(IllegalStateException.class);
        table.esaPool(new EsaPool(4, 8, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER));
        assertThatThrownBy(() -> table.add(new JobSpec(2, 4, 6, 32, 2, List.of(worker(1)))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the ESA pool: slots 4..7");
        assertThatThrownBy(() -> table.add(new EsaJobSpec(1, 8, 4, 5, 6, 0, 0, List.of(worker(2), worker(3)),
            worker(8)))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already in the table");
        assertThatThrownBy(() -> table.add(new EsaJobSpec(3, 8, 4, 5, 1, 0, 0, List.of(worker(2), worker(3)),
            worker(8)))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multicast group 1");
        assertThatThrownBy(() -> new EsaJobSpec(3, 8, 4, 5, 6, 0, 0, List.of(worker(2)), worker(8)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 2 workers");
        table.add(new EsaJobSpec(3, 8, 4, 5, 6, 0, 0, List.of(worker(2), worker(3)), worker(8)));
        // fine for v1model, but the TNA program's pool is fixed
        assertThat(table.simpleSwitchCommands()).isNotEmpty();
        assertThatThrownBy(table::bfrtPython).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("the ESA pool has 8 aggregators; the TNA program's pool has exactly 4096");
    }

    private static JobTable slotJobAndTwoEsaJobs(final AllocationMode mode, final PriorityPolicy policy)
    {
        return new JobTable(SWITCH)
            .add(new JobSpec(1, 4, 0, 32, 1, List.of(worker(0), worker(1))))
            .esaPool(new EsaPool(4, InaggP4.TNA_ESA_AGGREGATORS, mode, policy))
            .add(new EsaJobSpec(3, 64, 32, 5, 6, 9, 1L << 20, List.of(worker(2), worker(3)), worker(8)))
            .add(new EsaJobSpec(4, 16, 32, 7, 8, 2, 1L << 30, List.of(worker(4), worker(5), worker(6)), worker(9)));
    }

    @Test
    void shouldEmitEsaJobsInTheBfRuntimeScript()
    {
        // lane_base 8: after the slot job's 4 slots x 2 copies; hash_offset = job * 0x9E3779B1 mod 4096:
        // 3 -> 0xDAA66D13 & 0xFFF = 3347, 4 -> 0x78DDE6C4 & 0xFFF = 1732; job_tag = 0x80000000 | (n-th ESA job) << 24;
        // full_mask: W = 2 -> 0b11, W = 3 -> 0b111; rank = job-table priority + 1
        assertThat(slotJobAndTwoEsaJobs(AllocationMode.PREEMPTIVE, PriorityPolicy.JOB_TABLE).bfrtPython())
            .isEqualTo("""
            # Generated by org.inagg.p4.control.JobTable for inagg_tna.p4; run with: bfshell -b <this file>
            p4 = bfrt.inagg_tna.pipe
            ingress = p4.InaggIngress
            egress = p4.InaggEgress
            pre = bfrt.pre
            for register in (ingress.round_reg, ingress.seen0_reg, ingress.seen1_reg):
                register.clear()
            for register in (ingress.esa_fmt_reg, ingress.esa_tomb_reg):
                register.clear()
            egress.switch_address.set_default_with_set_switch_address(mac=0x0200000000fe, ipv4=0x0a0000fe)
            ingress.job_table.add_with_set_job(job_id=1, workers=2, slots=4, slot_base=0, lanes=32, mcast_grp=1, lane_base=0, chunks=1, chunk_shift=0, session=0)
            ingress.worker_source.add_with_source_ok(job_id=1, worker_id=0, src_addr=0x0a000001, src_port=40001)
            egress.worker_endpoint.add_with_set_endpoint(job_id=1, worker=0, mac=0x020000000001, ipv4=0x0a000001, udp_port=40001)
            pre.node.add(MULTICAST_NODE_ID=1, MULTICAST_RID=0, MULTICAST_LAG_ID=[], DEV_PORT=[1])
            ingress.worker_source.add_with_source_ok(job_id=1, worker_id=1, src_addr=0x0a000002, src_port=40002)
            egress.worker_endpoint.add_with_set_endpoint(job_id=1, worker=1, mac=0x020000000002, ipv4=0x0a000002, udp_port=40002)
            pre.node.add(MULTICAST_NODE_ID=2, MULTICAST_RID=1, MULTICAST_LAG_ID=[], DEV_PORT=[2])
            pre.mgid.add(MGID=1, MULTICAST_NODE_ID=[1, 2], MULTICAST_NODE_L1_XID_VALID=[False] * 2, MULTICAST_NODE_L1_XID=[0] * 2)
            # ESA jobs: the pool's 4096 aggregators at lane rows 8..4103; a mirror session per parameter server port
            bfrt.mirror.cfg.add_with_normal(sid=1, direction='INGRESS', session_enable=True, ucast_egress_port=9, ucast_egress_port_valid=True, max_pkt_len=16384)
            ingress.job_table.add_with_set_esa_job(job_id=3, workers=2, window=64, lanes=32, mcast_grp=5, lane_base=8, hash_offset=3347, job_tag=0x80000000, full_mask=0x00000003, rank=10, rank_from_header=0, ps_session=1, session=0)
            ingress.esa_server_port.add_with_set_server_port(job_id=3, port=9)
            egress.server_endpoint.add_with_set_endpoint(job_id=3, mac=0x020000000009, ipv4=0x0a000009, udp_port=40009)
            ingress.worker_source.add_with_source_ok(job_id=3, worker_id=0, src_addr=0x0a000003, src_port=40003)
            egress.worker_endpoint.add_with_set_endpoint(job_id=3, worker=0, mac=0x020000000003, ipv4=0x0a000003, udp_port=40003)
            pre.node.add(MULTICAST_NODE_ID=3, MULTICAST_RID=0, MULTICAST_LAG_ID=[], DEV_PORT=[3])
            ingress.worker_source.add_with_source_ok(job_id=3, worker_id=1, src_addr=0x0a000004, src_port=40004)
            egress.worker_endpoint.add_with_set_endpoint(job_id=3, worker=1, mac=0x020000000004, ipv4=0x0a000004, udp_port=40004)
            pre.node.add(MULTICAST_NODE_ID=4, MULTICAST_RID=1, MULTICAST_LAG_ID=[], DEV_PORT=[4])
            pre.node.add(MULTICAST_NODE_ID=5, MULTICAST_RID=65535, MULTICAST_LAG_ID=[], DEV_PORT=[9])
            pre.mgid.add(MGID=5, MULTICAST_NODE_ID=[3, 4, 5], MULTICAST_NODE_L1_XID_VALID=[False] * 3, MULTICAST_NODE_L1_XID=[0] * 3)
            bfrt.mirror.cfg.add_with_normal(sid=2, direction='INGRESS', session_enable=True, ucast_egress_port=10, ucast_egress_port_valid=True, max_pkt_len=16384)
            ingress.job_table.add_with_set_esa_job(job_id=4, workers=3, window=16, lanes=32, mcast_grp=7, lane_base=8, hash_offset=1732, job_tag=0x81000000, full_mask=0x00000007, rank=3, rank_from_header=0, ps_session=2, session=0)
            ingress.esa_server_port.add_with_set_server_port(job_id=4, port=10)
            egress.server_endpoint.add_with_set_endpoint(job_id=4, mac=0x02000000000a, ipv4=0x0a00000a, udp_port=40010)
            ingress.worker_source.add_with_source_ok(job_id=4, worker_id=0, src_addr=0x0a000005, src_port=40005)
            egress.worker_endpoint.add_with_set_endpoint(job_id=4, worker=0, mac=0x020000000005, ipv4=0x0a000005, udp_port=40005)
            pre.node.add(MULTICAST_NODE_ID=6, MULTICAST_RID=0, MULTICAST_LAG_ID=[], DEV_PORT=[5])
            ingress.worker_source.add_with_source_ok(job_id=4, worker_id=1, src_addr=0x0a000006, src_port=40006)
            egress.worker_endpoint.add_with_set_endpoint(job_id=4, worker=1, mac=0x020000000006, ipv4=0x0a000006, udp_port=40006)
            pre.node.add(MULTICAST_NODE_ID=7, MULTICAST_RID=1, MULTICAST_LAG_ID=[], DEV_PORT=[6])
            ingress.worker_source.add_with_source_ok(job_id=4, worker_id=2, src_addr=0x0a000007, src_port=40007)
            egress.worker_endpoint.add_with_set_endpoint(job_id=4, worker=2, mac=0x020000000007, ipv4=0x0a000007, udp_port=40007)
            pre.node.add(MULTICAST_NODE_ID=8, MULTICAST_RID=2, MULTICAST_LAG_ID=[], DEV_PORT=[7])
            pre.node.add(MULTICAST_NODE_ID=9, MULTICAST_RID=65535, MULTICAST_LAG_ID=[], DEV_PORT=[10])
            pre.mgid.add(MGID=7, MULTICAST_NODE_ID=[6, 7, 8, 9], MULTICAST_NODE_L1_XID_VALID=[False] * 4, MULTICAST_NODE_L1_XID=[0] * 4)
            bfrt.complete_operations()
            """);
    }

    @Test
    void shouldWriteTheRankOfEachPolicyAndShareMirrorSessionsPerServerPort()
    {
        // HEADER: the header's Priority + 1 in the data plane; the row's rank (static priority + 1) is unused
        assertThat(slotJobAndTwoEsaJobs(AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER).bfrtPython()).contains(
            "hash_offset=3347, job_tag=0x80000000, full_mask=0x00000003, rank=10, rank_from_header=1, ps_session=1, session=0)",
            "hash_offset=1732, job_tag=0x81000000, full_mask=0x00000007, rank=3, rank_from_header=1, ps_session=2, session=0)");
        // SRF: the priority of the job's bytes at setup + 1 (1 MiB: 175, 1 GiB: 95)
        assertThat(slotJobAndTwoEsaJobs(AllocationMode.PREEMPTIVE, PriorityPolicy.SHORTEST_REMAINING_FIRST)
            .bfrtPython()).contains(
            "full_mask=0x00000003, rank=" + (EsaSwitch.srfPriority(1L << 20) + 1) + ", rank_from_header=0,",
            "full_mask=0x00000007, rank=" + (EsaSwitch.srfPriority(1L << 30) + 1) + ", rank_from_header=0,");
        assertThat(EsaSwitch.srfPriority(1L << 20)).isEqualTo(175);
        // a third job on the first job's server reuses its session; 32 workers fill the bitmap word
        final String python = slotJobAndTwoEsaJobs(AllocationMode.PREEMPTIVE, PriorityPolicy.JOB_TABLE)
            .add(new EsaJobSpec(9, 8, 32, 11, 12, 0, 0, workers(32), worker(8)))
            .bfrtPython();
        assertThat(python).containsOnlyOnce("bfrt.mirror.cfg.add_with_normal(sid=1,")
            .doesNotContain("sid=3")
            .contains("add_with_set_esa_job(job_id=9, workers=32, window=8, lanes=32, mcast_grp=11, lane_base=8,"
                + " hash_offset=" + ((9 * 0x9E3779B1) & 0xFFF) + ", job_tag=0x82000000, full_mask=0xffffffff, rank=1,"
                + " rank_from_header=0, ps_session=1, session=0)");
        assertThat(python.lines().filter(l -> l.startsWith("bfrt.mirror.cfg."))).hasSize(2);
    }

    @Test
    void shouldRefuseEsaJobsTheTnaProgramCannotRun()
    {
        // ATP mode
        assertThatThrownBy(slotJobAndTwoEsaJobs(AllocationMode.DEALLOCATE_ON_ACK, PriorityPolicy.HEADER)::bfrtPython)
            .hasMessageContaining("the TNA program runs ESA jobs in the PREEMPTIVE mode only");
        // more than 32 lanes (one pass)
        final JobTable wide = esaTable().add(new EsaJobSpec(3, 8, 64, 5, 6, 0, 0, workers(2), worker(40)));
        assertThat(wide.simpleSwitchCommands()).isNotEmpty();
        assertThatThrownBy(wide::bfrtPython)
            .hasMessageContaining("job 3: 64 lanes per packet; ESA jobs on the TNA program carry at most 32");
        // more than 32 workers (one bitmap word)
        final JobTable many = esaTable().add(new EsaJobSpec(3, 8, 32, 5, 6, 0, 0, workers(33), worker(40)));
        assertThat(many.simpleSwitchCommands()).isNotEmpty();
        assertThatThrownBy(many::bfrtPython)
            .hasMessageContaining("job 3: 33 workers; ESA jobs on the TNA program have at most 32");
        // fewer than 2 workers: refused when the job is described
        assertThatThrownBy(() -> new EsaJobSpec(3, 8, 32, 5, 6, 0, 0, workers(1), worker(40)))
            .hasMessageContaining("at least 2 workers");
        // one lane count for all ESA jobs
        final JobTable mixed = esaTable()
            .add(new EsaJobSpec(3, 8, 32, 5, 6, 0, 0, workers(2), worker(40)))
            .add(new EsaJobSpec(4, 8, 16, 7, 8, 0, 0, workers(2), worker(40)));
        assertThatThrownBy(mixed::bfrtPython).hasMessageContaining(
            "job 4: 16 lanes per packet; every ESA job on the TNA program carries the same lane count (job 3: 32)");
        // distinct hash offsets mod 4096
        final JobTable sameOffset = esaTable()
            .add(new EsaJobSpec(3, 8, 32, 5, 6, 0, 0, workers(2), worker(40)))
            .add(new EsaJobSpec(3 + 4096, 8, 32, 7, 8, 0, 0, workers(2), worker(40)));
        assertThatThrownBy(sameOffset::bfrtPython)
            .hasMessageContaining("job 4099: hash offset 3347 (job x 0x9E3779B1 mod 4096) is job 3's");
        // at most 128 ESA jobs (7 job bits in the key tag)
        final JobTable crowded = esaTable();
        for (int job = 10; job < 10 + InaggP4.TNA_ESA_MAX_JOBS; job++)
        {
            crowded.add(new EsaJobSpec(job, 8, 32, 2 * job, 2 * job + 1, 0, 0, workers(2), worker(40)));
        }
        assertThat(crowded.bfrtPython()).contains("job_tag=0xff000000");
        crowded.add(new EsaJobSpec(500, 8, 32, 1000, 1001, 0, 0, workers(2), worker(40)));
        assertThatThrownBy(crowded::bfrtPython)
            .hasMessageContaining("129 ESA jobs; the TNA program tells at most 128 apart");
        // the pool's 4096 lane rows after the slot jobs' rows
        final JobTable full = new JobTable(SWITCH)
            .add(new JobSpec(1, 1800, 0, 256, 1, List.of(worker(0))))
            .esaPool(new EsaPool(2048, InaggP4.TNA_ESA_AGGREGATORS, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER))
            .add(new EsaJobSpec(3, 8, 32, 5, 6, 0, 0, workers(2), worker(40)));
        assertThatThrownBy(full::bfrtPython).hasMessageContaining(
            "the ESA pool's 4096 lane rows leave the TNA lane registers (3968 of 32768 rows left after the slot jobs)");
    }

    private static JobTable esaTable()
    {
        return new JobTable(SWITCH)
            .esaPool(new EsaPool(0, InaggP4.TNA_ESA_AGGREGATORS, AllocationMode.PREEMPTIVE, PriorityPolicy.JOB_TABLE));
    }

    @Test
    void shouldEmitBfRuntimeScript()
    {
        assertThat(twoJobs().bfrtPython()).isEqualTo("""
            # Generated by org.inagg.p4.control.JobTable for inagg_tna.p4; run with: bfshell -b <this file>
            p4 = bfrt.inagg_tna.pipe
            ingress = p4.InaggIngress
            egress = p4.InaggEgress
            pre = bfrt.pre
            for register in (ingress.round_reg, ingress.seen0_reg, ingress.seen1_reg):
                register.clear()
            egress.switch_address.set_default_with_set_switch_address(mac=0x0200000000fe, ipv4=0x0a0000fe)
            ingress.job_table.add_with_set_job(job_id=1, workers=2, slots=4, slot_base=0, lanes=32, mcast_grp=1, lane_base=0, chunks=1, chunk_shift=0, session=0)
            ingress.worker_source.add_with_source_ok(job_id=1, worker_id=0, src_addr=0x0a000001, src_port=40001)
            egress.worker_endpoint.add_with_set_endpoint(job_id=1, worker=0, mac=0x020000000001, ipv4=0x0a000001, udp_port=40001)
            pre.node.add(MULTICAST_NODE_ID=1, MULTICAST_RID=0, MULTICAST_LAG_ID=[], DEV_PORT=[1])
            ingress.worker_source.add_with_source_ok(job_id=1, worker_id=1, src_addr=0x0a000002, src_port=40002)
            egress.worker_endpoint.add_with_set_endpoint(job_id=1, worker=1, mac=0x020000000002, ipv4=0x0a000002, udp_port=40002)
            pre.node.add(MULTICAST_NODE_ID=2, MULTICAST_RID=1, MULTICAST_LAG_ID=[], DEV_PORT=[2])
            pre.mgid.add(MGID=1, MULTICAST_NODE_ID=[1, 2], MULTICAST_NODE_L1_XID_VALID=[False] * 2, MULTICAST_NODE_L1_XID=[0] * 2)
            ingress.job_table.add_with_set_job(job_id=2, workers=1, slots=8, slot_base=4, lanes=16, mcast_grp=7, lane_base=8, chunks=1, chunk_shift=0, session=0)
            ingress.worker_source.add_with_source_ok(job_id=2, worker_id=0, src_addr=0x0a000003, src_port=40003)
            egress.worker_endpoint.add_with_set_endpoint(job_id=2, worker=0, mac=0x020000000003, ipv4=0x0a000003, udp_port=40003)
            pre.node.add(MULTICAST_NODE_ID=3, MULTICAST_RID=0, MULTICAST_LAG_ID=[], DEV_PORT=[3])
            pre.mgid.add(MGID=7, MULTICAST_NODE_ID=[3], MULTICAST_NODE_L1_XID_VALID=[False] * 1, MULTICAST_NODE_L1_XID=[0] * 1)
            bfrt.complete_operations()
            """);
    }

    @Test
    void shouldRefuseOverlappingSlotRanges()
    {
        final JobTable table = new JobTable(SWITCH).add(new JobSpec(1, 4, 0, 32, 1, List.of(worker(0))));
        assertThatThrownBy(() -> table.add(new JobSpec(2, 4, 3, 32, 2, List.of(worker(1)))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overlap job 1's slots 0..3");
        table.add(new JobSpec(2, 4, 4, 32, 2, List.of(worker(1))));
        assertThat(table.jobs()).hasSize(2);
    }

    @Test
    void shouldRefuseSharedIdsGroupsAndRangesOutsideThePool()
    {
        final JobTable table = new JobTable(SWITCH).add(new JobSpec(1, 4, 0, 32, 1, List.of(worker(0))));
        assertThatThrownBy(() -> table.add(new JobSpec(1, 4, 8, 32, 2, List.of(worker(1)))))
            .hasMessageContaining("already in the table");
        assertThatThrownBy(() -> table.add(new JobSpec(2, 4, 8, 32, 1, List.of(worker(1)))))
            .hasMessageContaining("multicast group 1 is job 1's");
        assertThatThrownBy(() -> table.add(new JobSpec(3, 8, InaggP4.POOL_SLOTS - 4, 32, 3, List.of(worker(1)))))
            .hasMessageContaining("leave the pool");
    }

    @Test
    void shouldPackRecirculatedJobsIntoTheTnaLaneRows()
    {
        final String python = new JobTable(SWITCH)
            .add(new JobSpec(1, 4, 0, 256, 1, List.of(worker(0))))
            .add(new JobSpec(2, 2, 4, 96, 2, List.of(worker(1))))
            .add(new JobSpec(3, 1, 6, 64, 3, List.of(worker(2))))
            .bfrtPython();
        assertThat(python).contains(
            "add_with_set_job(job_id=1, workers=1, slots=4, slot_base=0, lanes=256, mcast_grp=1, lane_base=0, chunks=8,"
                + " chunk_shift=3, session=0)",
            "add_with_set_job(job_id=2, workers=1, slots=2, slot_base=4, lanes=96, mcast_grp=2, lane_base=64, chunks=3,"
                + " chunk_shift=2, session=0)",
            "add_with_set_job(job_id=3, workers=1, slots=1, slot_base=6, lanes=64, mcast_grp=3, lane_base=80, chunks=2,"
                + " chunk_shift=1, session=0)");
    }

    @Test
    void shouldRefuseJobsTheProgramsCannotCarry()
    {
        final JobTable ragged = new JobTable(SWITCH).add(new JobSpec(1, 4, 0, 48, 1, List.of(worker(0))));
        assertThat(ragged.simpleSwitchCommands()).isNotEmpty();
        assertThatThrownBy(ragged::bfrtPython).hasMessageContaining("up to 32 lanes or a multiple of 32");
        final JobTable tooWide = new JobTable(SWITCH).add(new JobSpec(1, 4, 0, 288, 1, List.of(worker(0))));
        assertThatThrownBy(tooWide::bfrtPython).hasMessageContaining("the TNA program aggregates at most 256");
        final JobTable tooMany = new JobTable(SWITCH).add(new JobSpec(1, 2049, 0, 256, 1, List.of(worker(0))));
        assertThatThrownBy(tooMany::bfrtPython).hasMessageContaining("leave the TNA lane registers");
        final JobTable wider = new JobTable(SWITCH).add(new JobSpec(1, 4, 0, 363, 1, List.of(worker(0))));
        assertThatThrownBy(wider::simpleSwitchCommands).hasMessageContaining("the v1model program aggregates at most 256");
    }

    private static List<WorkerEndpoint> workers(final int count)
    {
        return java.util.stream.IntStream.range(0, count).mapToObj(JobTableTest::worker).toList();
    }

    @Test
    void shouldEmitUpstreamJobsWithTheLocalBitmapAndTheServerInsteadOfAMulticastGroup()
    {
        final JobTable table = new JobTable(SWITCH)
            .add(new JobSpec(1, 4, 0, 32, 1, List.of(worker(0), worker(1))))
            .add(JobSpec.upstream(5, 8, 4, 64, workers(40), worker(49), 33, 2, 1))
            .add(JobSpec.upstream(6, 2, 12, 16, workers(32), worker(48), 31));
        assertThat(table.jobs().get(1).contributors()).isEqualTo(3);
        assertThat(table.simpleSwitchCommands()).containsExactly(
            "register_reset InaggIngress.used_reg",
            "register_reset InaggIngress.seen_reg",
            "table_set_default InaggEgress.switch_address InaggEgress.set_switch_address 02:00:00:00:00:fe 10.0.0.254",
            "table_add InaggIngress.job_table InaggIngress.set_job 1 => 2 4 0 32 1 0",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 1 0 10.0.0.1 40001 =>",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 1 1 10.0.0.2 40002 =>",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 1 0 => 02:00:00:00:00:01 10.0.0.1 40001",
            "table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 1 1 => 02:00:00:00:00:02 10.0.0.2 40002",
            "mc_mgrp_create 1",
            "mc_node_create 0 1",
            "mc_node_associate 1 0",
            "mc_node_create 1 2",
            "mc_node_associate 1 1",
            "table_add InaggIngress.job_table InaggIngress.set_upstream_job 5 => 40 8 4 64 3 50 6 2 0 0 0 0 0 0 0",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 5 1 10.0.0.2 40002 =>",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 5 2 10.0.0.3 40003 =>",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 5 33 10.0.0.34 40034 =>",
            "table_add InaggEgress.server_endpoint InaggEgress.set_endpoint 5 => 02:00:00:00:00:32 10.0.0.50 40050",
            "table_add InaggIngress.job_table InaggIngress.set_upstream_job 6 => 32 2 12 16 1 49 2147483648 0 0 0 0 0 0 0 0",
            "table_add InaggIngress.worker_source InaggIngress.source_ok 6 31 10.0.0.32 40032 =>",
            "table_add InaggEgress.server_endpoint InaggEgress.set_endpoint 6 => 02:00:00:00:00:31 10.0.0.49 40049");
        assertThatThrownBy(table::bfrtPython).hasMessageContaining("upstream (two-level) jobs are not in the TNA program");
    }

    @Test
    void shouldRefuseUpstreamJobsWithForeignLocalWorkersOrAMulticastGroup()
    {
        assertThatThrownBy(() -> JobSpec.upstream(5, 8, 0, 64, workers(4), worker(9), 1, 4))
            .hasMessageContaining("local worker 4 is not a worker id of a job of 4 workers");
        assertThatThrownBy(() -> JobSpec.upstream(5, 8, 0, 64, workers(4), worker(9), 1, 1))
            .hasMessageContaining("distinct");
        assertThatThrownBy(() -> new JobSpec(5, 8, 0, 64, 3, workers(4), new JobSpec.Upstream(worker(9), new int[]{1})))
            .hasMessageContaining("multicast group must be 0");
    }

    @Test
    void shouldRoundTripAddresses()
    {
        assertThat(WorkerEndpoint.formatMac(WorkerEndpoint.parseMac("0a:1b:2c:3d:4e:5f"))).isEqualTo("0a:1b:2c:3d:4e:5f");
        assertThat(WorkerEndpoint.formatIpv4(WorkerEndpoint.parseIpv4("192.168.1.254"))).isEqualTo("192.168.1.254");
        assertThatThrownBy(() -> WorkerEndpoint.parseIpv4("10.0.0.256")).isInstanceOf(IllegalArgumentException.class);
    }
}
