package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Two processes, two EALs, one memif link: a client sends, a server echoes. */
class MemifTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(180)
    void shouldExchangePacketsIntactBetweenTwoProcessesOverMemifAndShutDownCleanly() throws Exception
    {
        DpdkTestEnvironment.assumeDpdk();
        final int count = 20_000;
        final String socket = dir.resolve("memif.sock").toString();
        final Path serverLog = dir.resolve("server.log");
        final Path clientLog = dir.resolve("client.log");

        final Process server = DpdkTestEnvironment.startJava(
            serverLog, MemifPeerMain.class, List.of("server", socket, Integer.toString(count)));
        final long deadline = System.nanoTime() + 60_000_000_000L;
        while (!java.nio.file.Files.exists(Path.of(socket)) && server.isAlive() && System.nanoTime() - deadline < 0)
        {
            Thread.sleep(20); // the server creates the socket when its port starts; the client connects to it
        }
        final Process client = DpdkTestEnvironment.startJava(
            clientLog, MemifPeerMain.class, List.of("client", socket, Integer.toString(count)));
        final DpdkTestEnvironment.ChildResult clientResult = DpdkTestEnvironment.await(client, clientLog, 150);
        final DpdkTestEnvironment.ChildResult serverResult = DpdkTestEnvironment.await(server, serverLog, 30);

        assertThat(clientResult.output())
            .as("client:\n%s\nserver:\n%s", clientResult.output(), serverResult.output())
            .contains("client: LINK-UP")
            .contains("client: SENT " + count + " RECEIVED " + count + " CORRUPT 0")
            .containsPattern("client: POOL start=(\\d+) end=\\1\\b")
            .contains("client: SHUTDOWN-OK");
        assertThat(serverResult.output()).as(serverResult.output())
            .contains("server: ECHOED " + count)
            .containsPattern("server: POOL start=(\\d+) end=\\1\\b")
            .contains("server: SHUTDOWN-OK");
        assertThat(clientResult.exitCode()).as(clientResult.output()).isZero();
        assertThat(serverResult.exitCode()).as(serverResult.output()).isZero();
    }
}
