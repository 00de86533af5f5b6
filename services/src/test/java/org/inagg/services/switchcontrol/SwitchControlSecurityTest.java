package org.inagg.services.switchcontrol;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.services.http.HttpServers;
import org.inagg.services.http.IdleConnections;
import org.inagg.services.http.JsonHttp;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The switch's control port under connections that hold its threads (issue 24). */
class SwitchControlSecurityTest
{
    @Test
    @Timeout(60)
    void shouldAnswerARealRequestWhileIdleConnectionsHoldEveryThread() throws Exception
    {
        final UdpTransport transport = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0), List.of(), 16,
            InaggHeader.messageLength(256), 16);
        final SoftwareSwitch softwareSwitch = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
        try (SwitchControlServer control = SwitchControlServer.launch(new SwitchControlServer.Context()
                .softwareSwitch(softwareSwitch).transport(transport).bind(new InetSocketAddress("127.0.0.1", 0)));
            AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
                new CompositeAgent(softwareSwitch, control));
            IdleConnections idle = new IdleConnections(control.address(), 2 * SwitchControlServer.HTTP_THREADS);
            HttpClient client = HttpClient.newHttpClient())
        {
            AgentRunner.startOnThread(runner);
            final long start = System.nanoTime();
            final JsonHttp.Answer answer = IdleConnections.retryWithin(Duration.ofSeconds(20), () -> JsonHttp.call(
                client, "GET", URI.create("http://127.0.0.1:" + control.address().getPort() + "/v1/jobs"), null,
                Duration.ofSeconds(20)));
            final long seconds = Duration.ofNanos(System.nanoTime() - start).toSeconds();
            assertThat(answer.status()).isEqualTo(200);
            assertThat(seconds).as("answered once the idle connections timed out")
                .isLessThanOrEqualTo(HttpServers.MAX_REQUEST_SECONDS_DEFAULT + 5);
        }
    }
}
