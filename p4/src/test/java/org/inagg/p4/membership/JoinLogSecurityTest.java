package org.inagg.p4.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.inagg.p4.testing.CaptureTransport;
import org.inagg.wire.RejectReason;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 24: alternating bad JOINs used to log one line per packet (the log kept only the last rejection). Now each
 * cause of refusal logs at most one line a second, saying how many of that cause it did not log.
 */
class JoinLogSecurityTest
{
    private final Logger logger = Logger.getLogger(JoinLogSecurityTest.class.getName());
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler()
    {
        @Override
        public void publish(final LogRecord record)
        {
            lines.add(record.getMessage());
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
    private long nowNs = 1_000;
    private final JoinLog log = new JoinLog(JoinLogSecurityTest.class, "switch", new CaptureTransport(), () -> nowNs);

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
    void shouldLogAtMostOneLineASecondPerCauseWhateverTheBadJoinsAlternate()
    {
        // an attacker alternates four kinds of bad JOIN, 1000 of each, within one second
        for (int i = 0; i < 1000; i++)
        {
            log.badCredential(3, i & 1, 10 + (i & 7));
            log.spoofed(3, i & 1, 66 + (i & 7));
            log.rejected(3, i & 1, 5, RejectReason.WORKER_COUNT_MISMATCH, 66);
            log.rejected(4, 0, 2, RejectReason.UNKNOWN_JOB, 66);
            nowNs += TimeUnit.MICROSECONDS.toNanos(500);
        }
        assertThat(lines).as("one line per cause").hasSize(4);
        assertThat(lines).filteredOn(l -> l.contains("JOIN credential")).singleElement().asString()
            .contains("job 3 worker 0").doesNotContain("not logged");

        nowNs += TimeUnit.SECONDS.toNanos(1);
        log.badCredential(3, 1, 11);
        log.spoofed(3, 1, 67);
        log.badCredential(3, 1, 11);
        assertThat(lines).hasSize(6);
        assertThat(lines.get(4)).contains("it does not show the worker's JOIN credential")
            .contains("(999 more like it since the last such line, not logged)");
        assertThat(lines.get(5)).contains("not the worker's registered source").contains("(999 more like it");
    }
}
