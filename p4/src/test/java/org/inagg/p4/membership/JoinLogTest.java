package org.inagg.p4.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The switch's lifecycle lines: one per job installed, join and distinct rejection, never one per packet. */
@Timeout(10)
class JoinLogTest
{
    private final Logger logger = Logger.getLogger(SoftwareSwitch.class.getName());
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler()
    {
        @Override
        public void publish(final LogRecord record)
        {
            lines.add(record.getLevel() + " " + record.getMessage());
        }

        @Override
        public void flush()
        {
        }

        @Override
        public void close()
        {
        }
    };
    private final CaptureTransport transport = new CaptureTransport();
    private final SoftwareSwitch sw = new SoftwareSwitch(transport, new CounterRegistry(64), 16);

    @BeforeEach
    void setUp()
    {
        logger.addHandler(handler);
        logger.setLevel(Level.ALL);
    }

    @AfterEach
    void tearDown()
    {
        logger.removeHandler(handler);
        logger.setLevel(null);
    }

    @Test
    void shouldLogJobsJoinsAndRejectionsOnceEach()
    {
        sw.addJob(new SwitchJobConfig(5, 2, 4, 8));
        sw.doWork();
        for (int i = 0; i < 3; i++)
        {
            deliver(join(5, 0, 2), 100); // a worker's repeated JOINs
        }
        deliver(join(5, 1, 2), 101);
        deliver(join(5, 1, 2), 102); // worker 1 restarted on another port
        for (int i = 0; i < 3; i++)
        {
            deliver(join(5, 1, 3), 103); // wrong worker count, retried
        }

        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).isEqualTo(
            "INFO switch: job 5 installed: 2 workers, 4 slots of 8 lanes, session 0, open (sources learned from JOINs)");
        assertThat(lines.get(1)).isEqualTo("INFO switch: job 5 worker 0/2 joined from peer 100");
        assertThat(lines.get(2)).isEqualTo("INFO switch: job 5 worker 1/2 joined from peer 101");
        assertThat(lines.get(3)).isEqualTo("INFO switch: job 5 worker 1/2 joined from peer 102 (before from peer 101)");
        assertThat(lines.get(4)).startsWith("WARNING switch: job 5 worker 1 (of 3 workers) from peer 103")
            .endsWith("rejected: the worker count differs from the job's on the switch");
        deliver(join(6, 0, 2), 104);
        deliver(join(6, 0, 2), 104);
        assertThat(lines).hasSize(6);
        assertThat(lines.get(5)).startsWith("WARNING switch: job 6 worker 0 (of 2 workers) from ")
            .endsWith("rejected: the switch has no such job");
    }

    private void deliver(final MemorySegment message, final int peer)
    {
        sw.onMessage(message, 0, (int)message.byteSize(), peer);
    }

    private static MemorySegment join(final int job, final int worker, final int workers)
    {
        final MemorySegment m = Arena.ofAuto().allocate(InaggHeader.LENGTH);
        InaggHeader.write(m, 0, MessageType.JOIN, 0, job, worker, 0, 0, workers, 0, 0, InaggHeader.NO_EXPONENT, 0);
        return m;
    }
}
