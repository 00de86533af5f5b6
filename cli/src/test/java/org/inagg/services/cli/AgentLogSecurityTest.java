package org.inagg.services.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The agent's log in a tmpfs (docs/security.md): capped with one rotation, owner only, never through a link. */
class AgentLogSecurityTest
{
    @TempDir
    Path dir;

    private static LogRecord line(final int i)
    {
        return new LogRecord(Level.WARNING, "agent x: refused a connection of user mallory, attempt " + i);
    }

    @Test
    void shouldNeverHoldMoreThanTwiceItsCapHoweverMuchIsLogged() throws Exception
    {
        final Path log = dir.resolve("agent.log");
        final BoundedLogHandler handler = new BoundedLogHandler(log, 4096);
        for (int i = 0; i < 10_000; i++)
        {
            handler.publish(line(i));
        }
        handler.close();
        assertThat(Files.size(log)).isLessThanOrEqualTo(4096);
        assertThat(Files.size(dir.resolve("agent.log.1"))).isBetween(3000L, 4096L);
        assertThat(Files.readString(log)).contains("attempt 9999");
        try (var files = Files.list(dir))
        {
            assertThat(files).hasSize(2);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(log))).isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("agent.log.1"))))
            .isEqualTo("rw-------");
    }

    @Test
    void shouldAppendToTheLogOfTheRunBefore() throws Exception
    {
        final Path log = Files.writeString(dir.resolve("agent.log"), "before\n");
        final BoundedLogHandler handler = new BoundedLogHandler(log, 4096);
        handler.publish(line(1));
        handler.close();
        assertThat(Files.readString(log)).startsWith("before\n").contains("attempt 1");
    }

    @Test
    void shouldRefuseToWriteThroughALink() throws Exception
    {
        final Path target = Files.writeString(dir.resolve("elsewhere"), "keep\n");
        final Path log = Files.createSymbolicLink(dir.resolve("agent.log"), target);
        assertThatThrownBy(() -> new BoundedLogHandler(log, 4096)).hasMessageContaining("cannot open the log " + log);
        assertThat(Files.readString(target)).isEqualTo("keep\n");
        assertThat(Files.isSymbolicLink(log)).isTrue();
    }
}
