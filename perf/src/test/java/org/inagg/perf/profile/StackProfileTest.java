package org.inagg.perf.profile;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** Collapsed stacks (async-profiler, {@code threads}) summed per category, as the profile summary counts them. */
class StackProfileTest
{
    @Test
    void shouldPutEachSampleWhereItsThreadAndStackSay()
    {
        final StackProfile profile = new StackProfile();
        profile.add("[inagg-worker-1-0 tid=7];java/lang/Thread.run;org/inagg/protocol/WorkerAgent.doWork;"
            + "org/inagg/protocol/WorkerAgent.sendPacket;org/inagg/fixedpoint/VectorFixedPointConverter.quantize;"
            + "jdk/incubator/vector/IntVector.intoMemorySegment 5");
        profile.add("[inagg-worker-1-0 tid=7];java/lang/Thread.run;org/inagg/transport/UdpTransport.flushBatch;"
            + "__sendmmsg;entry_SYSCALL_64_[k];udp_sendmsg_[k];_copy_from_iter_[k] 7");
        profile.add("[inagg-worker-1-0 tid=7];java/lang/Thread.run;org/inagg/transport/UdpTransport.pollBatch;"
            + "__recvmmsg;udp_recvmsg_[k] 3");
        profile.add("[inagg-switch tid=8];java/lang/Thread.run;org/inagg/p4/softswitch/SlotPool.lanesAction 4");
        profile.add("[inagg-switch tid=8];java/lang/Thread.run;org/inagg/agent/TransportWaitIdleStrategy.idle;"
            + "epoll_wait;do_epoll_wait_[k] 2");
        profile.add("[inagg-worker-1-0 tid=7];java/lang/Thread.run;org/inagg/protocol/WorkerAgent.onResult 6");
        profile.add("[C2 CompilerThre tid=9];thread_native_entry;C2Compiler::compile_method 11");
        profile.add("[VM Thread tid=10];VMThread::run 1");
        profile.add("[main tid=1];org/inagg/services/cli/WorkerCommand.call;"
            + "org/inagg/services/cli/SyntheticGradients.fill 8");
        profile.add("[main tid=1];org/inagg/api/AllReduceJob.allReduce;jdk/internal/misc/Unsafe.park 2");
        profile.add("not a line");
        profile.add("[main tid=1];frame NaN");

        final Map<CpuCategory, Long> expected = Map.of(CpuCategory.QUANTIZE, 5L, CpuCategory.SEND, 7L,
            CpuCategory.RECEIVE, 3L, CpuCategory.AGGREGATE, 4L, CpuCategory.WAIT, 2L, CpuCategory.AGENT_OTHER, 6L,
            CpuCategory.JIT, 11L, CpuCategory.GC, 1L, CpuCategory.HARNESS, 8L, CpuCategory.OTHER_THREADS, 2L);
        for (final CpuCategory category : CpuCategory.values())
        {
            assertThat(profile.samples(category)).as(category.label()).isEqualTo(expected.getOrDefault(category, 0L));
        }
        assertThat(profile.total()).isEqualTo(49);
        assertThat(profile.agentSamples()).isEqualTo(5 + 7 + 3 + 4 + 2 + 6);
        assertThat(profile.kernel()).as("leaf frames marked _[k]").isEqualTo(7 + 3 + 2);
    }

    @Test
    void shouldSumProcessesOfOneRoleAndShowEachRolesShares()
    {
        final StackProfile one = new StackProfile();
        one.add("[inagg-worker-1-0 tid=7];org/inagg/fixedpoint/VectorFixedPointConverter.dequantize 3");
        final StackProfile two = new StackProfile();
        two.add("[inagg-worker-1-1 tid=7];org/inagg/fixedpoint/VectorFixedPointConverter.dequantize 1");
        two.add("[C1 CompilerThre tid=9];C1 4");
        one.add(two);

        final String summary = ProfileReport.summary(Map.of("worker", one), Map.of("worker", 2));

        assertThat(summary).contains("| where | worker x2: CPU ms | share | datapath |")
            .contains("| dequantize | 4 | 50.0 % | 100.0 % |")
            .contains("| JIT compiler | 4 | 50.0 % |  |")
            .contains("| **total** | **8** | 100 % | 4 ms |")
            .doesNotContain("| quantize |");
    }
}
