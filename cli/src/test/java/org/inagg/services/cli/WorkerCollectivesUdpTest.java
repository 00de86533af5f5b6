package org.inagg.services.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code inagg worker --collective C --op O}, four of them in this JVM over UDP on loopback through a software switch
 * (also in this JVM): every worker exits 0 with its result checked against the reference.
 */
class WorkerCollectivesUdpTest
{
    private static final int WORKERS = 4;

    @TempDir
    Path counters;

    private AgentRunner switchRunner;
    private SoftwareSwitch sw;
    private InetSocketAddress switchAddress;

    @BeforeEach
    void setUp()
    {
        final UdpTransport udp = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0), List.of(), 16, 16,
            InaggHeader.messageLength(256), 64);
        switchAddress = udp.localAddress();
        sw = new SoftwareSwitch(udp, new CounterRegistry(64), 64);
        sw.addJob(new SwitchJobConfig(1, WORKERS, 32, 256));
        switchRunner = new AgentRunner(new SleepingMillisIdleStrategy(0), Throwable::printStackTrace, null, sw);
        AgentRunner.startOnThread(switchRunner);
    }

    @AfterEach
    void tearDown()
    {
        switchRunner.close();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({
        "all-reduce, min, float32", "all-reduce, max, int32",
        "reduce-scatter, sum, float32", "reduce-scatter, sum, int32", "reduce-scatter, min, float32",
        "reduce-scatter, max, int32",
        "all-gather, sum, float32", "all-gather, sum, int32",
        "broadcast, sum, float32", "broadcast, sum, int32"})
    @Timeout(120)
    void shouldRunEveryCollectiveAndCheckItsResult(final String collective, final String op, final String dtype)
        throws Exception
    {
        final ExecutorService threads = Executors.newFixedThreadPool(WORKERS);
        try
        {
            final List<Future<String>> runs = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++)
            {
                final int worker = w;
                runs.add(threads.submit(() -> worker(worker, collective, op, dtype)));
            }
            for (final Future<String> run : runs)
            {
                final String log = run.get(100, TimeUnit.SECONDS);
                assertThat(log).contains("exit 0").contains("collective check       yes")
                    .contains(collective + " " + op);
            }
        }
        finally
        {
            threads.shutdownNow();
        }
        assertThat(sw.counter(SwitchCounter.CONTRIBUTIONS)).isPositive();
        assertThat(sw.counter(SwitchCounter.DROP_UNSUPPORTED)).isZero();
    }

    private String worker(final int worker, final String collective, final String op, final String dtype)
    {
        final StringWriter text = new StringWriter();
        final CommandLine command = new CommandLine(new WorkerCommand());
        command.setOut(new PrintWriter(text, true));
        command.setErr(new PrintWriter(text, true));
        final int exit = command.execute("--switch", switchAddress.getHostString() + ":" + switchAddress.getPort(),
            "--bind", "127.0.0.1:0", "--worker-id", Integer.toString(worker), "-w", Integer.toString(WORKERS),
            "-n", "10000", "-i", "2", "--seed", "3", "--dtype", dtype, "--collective", collective, "--op", op,
            "--no-progress", "--counters-dir", counters.toString(), "--peer-timeout-ms", "30000");
        return text + "\nexit " + exit;
    }
}
