package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.switchcontrol.SwitchControlServer;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A controller without {@code --lanes} sizes its jobs' packets by its switch: what a software switch reports (the
 * lanes that fill its interface's MTU), the P4 programs' 256 where the switch cannot say.
 */
class SwitchDefaultLanesTest
{
    @Test
    @Timeout(20)
    void shouldTakeTheSoftwareSwitchsLanesUnlessTheOperatorNamesThem()
    {
        final int mtuFilling = InaggHeader.MAX_ELEMENTS_FOR_1500_MTU;
        try (UdpTransport transport = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0), List.of(), 16,
            InaggHeader.messageLength(mtuFilling), 16))
        {
            final SoftwareSwitch softwareSwitch = new SoftwareSwitch(transport, new CounterRegistry(64), 16);
            try (SwitchControlServer control = SwitchControlServer.launch(new SwitchControlServer.Context()
                .softwareSwitch(softwareSwitch).transport(transport).bind(new InetSocketAddress("127.0.0.1", 0))
                .defaultLanes(mtuFilling));
                AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace,
                    null, new CompositeAgent(softwareSwitch, control)))
            {
                AgentRunner.startOnThread(runner);
                try (SoftwareSwitchBackend backend = new SoftwareSwitchBackend(URI.create("http://127.0.0.1:"
                    + control.address().getPort()), null, Duration.ofSeconds(2)))
                {
                    assertThat(backend.defaultLanes().lanes()).isEqualTo(mtuFilling);
                    final ControllerContext fromSwitch = new ControllerContext().switchBackend(backend).conclude();
                    assertThat(fromSwitch.lanes()).as("no --lanes: the switch's").isEqualTo(mtuFilling);
                    assertThat(fromSwitch.lanesWhy()).contains("software switch's default");
                    assertThat(new ControllerContext().switchBackend(backend).lanes(100).conclude().lanes())
                        .as("--lanes 100").isEqualTo(100);
                }
            }
        }
    }

    @Test
    @Timeout(20)
    void shouldGiveTheP4ProgramsLanesWhereTheSwitchCannotSay() throws IOException
    {
        final int closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            closedPort = probe.getLocalPort(); // closed below: nothing listens there any more
        }
        try (SoftwareSwitchBackend unreachable = new SoftwareSwitchBackend(URI.create("http://127.0.0.1:" + closedPort),
            new InetSocketAddress("127.0.0.1", 9000), Duration.ofMillis(500)))
        {
            assertThat(unreachable.defaultLanes().lanes()).isEqualTo(SwitchJobConfig.DEFAULT_LANES);
            final ControllerContext fallback = new ControllerContext().switchBackend(unreachable).conclude();
            assertThat(fallback.lanes()).isEqualTo(SwitchJobConfig.DEFAULT_LANES);
            assertThat(fallback.lanesWhy()).as("the start line says it is a fallback")
                .contains("could not be asked");
        }
        assertThatThrownBy(() -> new SwitchControlServer.Context().defaultLanes(0))
            .hasMessageContaining("default lanes must be in 1..363, got 0");
        assertThatThrownBy(() -> new SwitchControlServer.Context().defaultLanes(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU
            + 1)).hasMessageContaining("got 364");
    }
}
