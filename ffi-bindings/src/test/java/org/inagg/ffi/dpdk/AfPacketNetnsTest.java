package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two processes in two network namespaces, joined by a veth pair, each driving its end with net_af_packet. Needs
 * iproute2 and CAP_NET_ADMIN (namespaces and veth); skips, saying so, without (fails instead with
 * {@code -Dinagg.root.tests.require=true}, as in CI).
 */
class AfPacketNetnsTest
{
    private static final String TAG = "inagg" + (ProcessHandle.current().pid() % 100_000);
    private static final String NS_SEND = TAG + "s";
    private static final String NS_RECEIVE = TAG + "r";
    private static final String VETH_SEND = TAG + "vs";
    private static final String VETH_RECEIVE = TAG + "vr";

    @TempDir
    Path dir;

    private final List<String> namespaces = new ArrayList<>();

    @Test
    @Timeout(120)
    void shouldCarryFramesBetweenProcessesInTwoNetworkNamespaces() throws Exception
    {
        DpdkTestEnvironment.assumeDpdk();
        final String failure = setUpNamespaces();
        DpdkTestEnvironment.assumeSetUp("network namespaces and a veth pair", failure);
        final int count = 3000;

        final Path receiveLog = dir.resolve("receive.log");
        final Process receiver = DpdkTestEnvironment.startJava(receiveLog, List.of("ip", "netns", "exec", NS_RECEIVE),
            System.getProperty("java.class.path"), List.of(), AfPacketPeerMain.class,
            List.of("receive", VETH_RECEIVE, Integer.toString(count)));
        final long deadline = System.nanoTime() + 60_000_000_000L;
        while (receiver.isAlive() && System.nanoTime() - deadline < 0 &&
            !Files.readString(receiveLog, StandardCharsets.UTF_8).contains("receive: READY"))
        {
            Thread.sleep(20);
        }
        final Path sendLog = dir.resolve("send.log");
        final Process sender = DpdkTestEnvironment.startJava(sendLog, List.of("ip", "netns", "exec", NS_SEND),
            System.getProperty("java.class.path"), List.of(), AfPacketPeerMain.class,
            List.of("send", VETH_SEND, Integer.toString(count)));
        final DpdkTestEnvironment.ChildResult sent = DpdkTestEnvironment.await(sender, sendLog, 60);
        final DpdkTestEnvironment.ChildResult received = DpdkTestEnvironment.await(receiver, receiveLog, 60);

        assertThat(sent.output()).as(sent.output()).contains("send: SENT " + count).contains("send: SHUTDOWN-OK");
        assertThat(received.output()).as("receiver:\n%s\nsender:\n%s", received.output(), sent.output())
            .contains("receive: RECEIVED " + count + " CORRUPT 0")
            .containsPattern("receive: POOL start=(\\d+) end=\\1\\b")
            .contains("receive: SHUTDOWN-OK");
        assertThat(sent.exitCode()).as(sent.output()).isZero();
        assertThat(received.exitCode()).as(received.output()).isZero();
    }

    @AfterEach
    void tearDown() throws Exception
    {
        for (final String ns : namespaces)
        {
            run("ip", "netns", "del", ns); // takes its veth end, and so the pair, with it
        }
    }

    private String setUpNamespaces() throws IOException, InterruptedException
    {
        String failure = run("ip", "netns", "add", NS_SEND);
        if (failure != null)
        {
            return failure;
        }
        namespaces.add(NS_SEND);
        failure = run("ip", "netns", "add", NS_RECEIVE);
        if (failure != null)
        {
            return failure;
        }
        namespaces.add(NS_RECEIVE);
        for (final String[] step : new String[][] {
            {"ip", "link", "add", VETH_SEND, "netns", NS_SEND, "type", "veth", "peer", "name", VETH_RECEIVE,
                "netns", NS_RECEIVE},
            {"ip", "-n", NS_SEND, "link", "set", VETH_SEND, "up"},
            {"ip", "-n", NS_RECEIVE, "link", "set", VETH_RECEIVE, "up"}})
        {
            failure = run(step);
            if (failure != null)
            {
                return failure;
            }
        }
        return null;
    }

    private static String run(final String... command) throws IOException, InterruptedException
    {
        try
        {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return p.waitFor() == 0 ? null : String.join(" ", command) + ": " + out.strip();
        }
        catch (final IOException ex)
        {
            return String.join(" ", command) + ": " + ex.getMessage();
        }
    }
}
