package org.inagg.services.agent;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;

import jdk.net.UnixDomainPrincipal;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The agent on a shared host (docs/security.md): private directory, owner-only files, peer credentials, leftovers. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostAgentSecurityTest
{
    /** A Python that user nobody may run (not one under root's home). */
    private static final String SYSTEM_PYTHON = "/usr/bin/python3";
    private static final UserPrincipalLookupService USERS = FileSystems.getDefault().getUserPrincipalLookupService();

    @TempDir
    Path tmp;

    private static HostAgentContext context(final Path directory)
    {
        return new HostAgentContext().name("sec").directory(directory).slotBytes(4096).reducerThreads(1);
    }

    private static String mode(final Path path) throws IOException
    {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private static boolean root()
    {
        return PrivateDirectory.currentUid() == 0;
    }

    /**
     * Skips the calling test unless {@code available}; fails instead with {@code -Dinagg.root.tests.require=true} (CI,
     * which runs as root and has setpriv and the system Python).
     */
    private static void assumeRootTool(final boolean available, final String why)
    {
        if (!available && Boolean.getBoolean("inagg.root.tests.require"))
        {
            Assertions.fail("root tests are required here (-Dinagg.root.tests.require=true) but this test " + why);
        }
        Assumptions.assumeTrue(available, why);
    }

    @Test
    void shouldCreateItsDirectoryForItsUserOnlyAndItsFilesOwnerOnlyWithUnguessableNames() throws Exception
    {
        final Path dir = tmp.resolve("agent");
        try (HostAgent agent = HostAgent.launch(context(dir));
             TestRank a = new TestRank(agent.context().socketPath(), 0, 1, 0, 1, "job-a"))
        {
            assertThat(mode(dir)).isEqualTo("rwx------");
            assertThat(Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS)).isEqualTo(PrivateDirectory.currentUser());
            assertThat(mode(agent.context().socketPath())).isEqualTo("rw-------");
            assertThat(a.status).isEqualTo(AgentProtocol.OK);
            assertThat(a.file.getParent()).isEqualTo(dir);
            assertThat(mode(a.file)).isEqualTo("rw-------");
            assertThat(a.file.getFileName().toString()).matches("inagg-sec\\+[0-9a-f]{32}\\.shm");
            try (TestRank b = new TestRank(agent.context().socketPath(), 0, 1, 0, 1, "job-b"))
            {
                assertThat(b.file.getFileName().toString()).isNotEqualTo(a.file.getFileName().toString())
                    .doesNotContain(Long.toString(ProcessHandle.current().pid()));
            }
        }
    }

    @Test
    void shouldOpenItsDirectoryAndFilesToTheAllowedGroupOnly() throws Exception
    {
        assumeRootTool(root(), "needs root to give files to a group it is not in");
        final Path dir = tmp.resolve("grouped");
        try (HostAgent agent = HostAgent.launch(context(dir).allowGroup("nogroup"));
             TestRank a = new TestRank(agent.context().socketPath(), 0, 1, 0, 1, "job-g"))
        {
            assertThat(mode(dir)).isEqualTo("rwx--x---");
            assertThat(mode(agent.context().socketPath())).isEqualTo("rw-rw----");
            assertThat(mode(a.file)).isEqualTo("rw-rw----");
            for (final Path p : new Path[] {dir, agent.context().socketPath(), a.file})
            {
                assertThat(Files.readAttributes(p, java.nio.file.attribute.PosixFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS).group().getName()).isEqualTo("nogroup");
            }
        }
        // The same directory, now without the group: its group bits are refused.
        assertThatThrownBy(() -> HostAgent.launch(context(dir)))
            .hasMessageContaining("is not private: its group has access");
    }

    @Test
    void shouldRefuseADirectoryOthersCanReadNamingItsOwnerAndMode() throws Exception
    {
        final Path dir = Files.createDirectory(tmp.resolve("open"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThatThrownBy(() -> HostAgent.launch(context(dir)))
            .hasMessageContaining("agent directory " + dir + " is not private: other users have access")
            .hasMessageContaining("owner " + PrivateDirectory.currentUser().getName())
            .hasMessageContaining("mode rwxr-xr-x");
        assertThat(dir).isEmptyDirectory();
    }

    @Test
    void shouldRefuseASymbolicLinkToADirectory() throws Exception
    {
        final Path real = Files.createDirectory(tmp.resolve("real"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        final Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        assertThatThrownBy(() -> HostAgent.launch(context(link)))
            .hasMessageContaining("agent directory " + link + " is not private: it is a symbolic link");
        assertThat(real).isEmptyDirectory();
    }

    @Test
    void shouldRefuseADirectoryOfAnotherUser() throws Exception
    {
        assumeRootTool(root(), "needs root to give a directory to nobody");
        final Path dir = Files.createDirectory(tmp.resolve("theirs"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.setOwner(dir, USERS.lookupPrincipalByName("nobody"));
        assertThatThrownBy(() -> HostAgent.launch(context(dir)))
            .hasMessageContaining("is not private: it belongs to another user (owner nobody");
    }

    @Test
    void shouldAllowOnlyItsUserOrTheAllowedGroupByPeerCredentials() throws Exception
    {
        final UserPrincipal self = PrivateDirectory.currentUser();
        final UserPrincipal nobody = USERS.lookupPrincipalByName("nobody");
        final GroupPrincipal rootGroup = Files.readAttributes(Path.of("/"),
            java.nio.file.attribute.PosixFileAttributes.class).group();
        final GroupPrincipal nogroup = USERS.lookupPrincipalByGroupName("nogroup");
        Assumptions.assumeFalse(self.equals(nobody), "runs as nobody");
        final PeerPolicy ownerOnly = new PeerPolicy(self, null);
        assertThat(ownerOnly.allows(new UnixDomainPrincipal(self, rootGroup))).isTrue();
        assertThat(ownerOnly.allows(new UnixDomainPrincipal(self, nogroup))).isTrue();
        assertThat(ownerOnly.allows(new UnixDomainPrincipal(nobody, nogroup))).isFalse();
        assertThat(ownerOnly.allows(new UnixDomainPrincipal(nobody, rootGroup))).isFalse();
        final PeerPolicy withGroup = new PeerPolicy(self, nogroup);
        assertThat(withGroup.allows(new UnixDomainPrincipal(nobody, nogroup))).isTrue();
        assertThat(withGroup.allows(new UnixDomainPrincipal(nobody, rootGroup))).isFalse();
        assertThat(withGroup.allowed()).isEqualTo("user " + self.getName() + " or group nogroup");
    }

    @Test
    void shouldCloseAnotherUsersConnectionBeforeReadingItsHelloAndCountIt() throws Exception
    {
        assumeRootTool(root(), "needs root to connect as another user (setpriv)");
        assumeRootTool(Files.isExecutable(Path.of("/usr/bin/setpriv")), "needs setpriv");
        assumeRootTool(Files.isExecutable(Path.of(SYSTEM_PYTHON)), "needs " + SYSTEM_PYTHON);
        // A socket others can reach (the private directory is not: an operator's explicit --socket elsewhere, or a
        // mode set wrong by hand): only the peer check stands between them and the agent.
        final Path open = Files.createTempDirectory(Path.of("/tmp"), "inagg-sec-open");
        final java.util.logging.Logger logger = java.util.logging.Logger.getLogger(HostAgent.class.getName());
        final List<String> warnings = new CopyOnWriteArrayList<>();
        final Handler capture = new Handler()
        {
            @Override
            public void publish(final LogRecord record)
            {
                if (record.getLevel() == java.util.logging.Level.WARNING)
                {
                    warnings.add(new SimpleFormatter().formatMessage(record));
                }
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
        try
        {
            Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
            final Path socket = open.resolve("agent.sock");
            logger.addHandler(capture);
            try (HostAgent agent = HostAgent.launch(context(tmp.resolve("agent")).socketPath(socket)))
            {
                Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
                final byte[] hello = TestRank.hello(AgentProtocol.VERSION, 0, 1, 0, 1, "stolen").array();
                final Process rank = new ProcessBuilder("/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                    "--clear-groups", SYSTEM_PYTHON, "-c", """
                        import socket, sys
                        for attempt in range(3):
                            s = socket.socket(socket.AF_UNIX)
                            s.connect(sys.argv[1])
                            s.settimeout(20)
                            try:
                                s.sendall(bytes.fromhex(sys.argv[2]))
                                print("reply of", len(s.recv(512)), "bytes")
                            except OSError as ex:  # closed before or while the hello went: pipe or reset
                                print("error", type(ex).__name__)
                            s.close()
                        """, socket.toString(), java.util.HexFormat.of().formatHex(hello))
                    .redirectErrorStream(true).start();
                assertThat(rank.waitFor(30, TimeUnit.SECONDS)).isTrue();
                final String out = new String(rank.getInputStream().readAllBytes()).trim();
                assertThat(out.lines()).hasSize(3)
                    .allMatch(line -> line.matches("reply of 0 bytes|error (BrokenPipeError|ConnectionResetError)"));
                // The agent counts a refusal after closing the connection, so the rank may see its third close first.
                final long countedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (agent.context().counters().sum(HostAgentCounter.PEERS_REFUSED.typeId()) < 3
                    && System.nanoTime() - countedBy < 0)
                {
                    Thread.onSpinWait();
                }
                assertThat(agent.context().counters().sum(HostAgentCounter.PEERS_REFUSED.typeId())).isEqualTo(3);
                // Three within a second: one line (rate-limited), naming who knocked and who may.
                assertThat(warnings).hasSize(1);
                assertThat(warnings.get(0)).contains("refused a connection of user nobody, group nogroup on " + socket
                    + ": only user " + PrivateDirectory.currentUser().getName() + " may use this agent");
                assertThat(agent.activeJobs()).isZero();
                assertThat(agent.context().counters().sum(HostAgentCounter.HELLOS_REFUSED.typeId())).isZero();
                try (TestRank mine = new TestRank(socket, 0, 1, 0, 1, "mine"))
                {
                    assertThat(mine.status).isEqualTo(AgentProtocol.OK);
                }
            }
        }
        finally
        {
            logger.removeHandler(capture);
            Files.deleteIfExists(open.resolve("agent.sock"));
            Files.delete(open);
        }
    }

    @Test
    void shouldRefuseToStartWhileALiveAgentHoldsTheLockAndCleanUpAfterItDied() throws Exception
    {
        final Path dir = Files.createDirectory(tmp.resolve("agent"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        // What a SIGKILLed agent leaves: its socket (bound, never unlinked), its jobs' files, its lock file.
        final Path socket = dir.resolve("inagg-agent-sec.sock");
        ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(socket)).close();
        final Path leftover = Files.write(dir.resolve(AgentLock.filePrefix("sec") + "0123456789abcdef0123456789abcdef"
            + AgentLock.FILE_SUFFIX), new byte[] {1, 2, 3});
        final Path otherAgents = Files.write(dir.resolve(AgentLock.filePrefix("sec-2") + "00" + AgentLock.FILE_SUFFIX),
            new byte[] {1});
        final Path lockFile = dir.resolve("inagg-agent-sec.lock");
        // A live agent: another process holding the lock (fcntl, as the JDK's FileChannel.lock).
        final Process holder = new ProcessBuilder("python3", "-c", """
            import fcntl, sys, time
            f = open(sys.argv[1], "a")
            fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            print("locked", flush=True)
            time.sleep(60)
            """, lockFile.toString()).redirectErrorStream(true).start();
        try
        {
            assertThat(new String(holder.getInputStream().readNBytes(6))).isEqualTo("locked");
            assertThatThrownBy(() -> HostAgent.launch(context(dir)))
                .hasMessageContaining("another agent is listening on " + socket)
                .hasMessageContaining("holds " + lockFile);
            assertThat(leftover).exists();
        }
        finally
        {
            holder.destroyForcibly().waitFor();
        }
        try (HostAgent agent = HostAgent.launch(context(dir)))
        {
            assertThat(leftover).doesNotExist();
            assertThat(otherAgents).exists();
            assertThat(mode(lockFile)).isEqualTo("rw-------");
            try (TestRank rank = new TestRank(agent.context().socketPath(), 0, 1, 0, 1, "job"))
            {
                assertThat(rank.status).isEqualTo(AgentProtocol.OK);
            }
        }
    }
}
