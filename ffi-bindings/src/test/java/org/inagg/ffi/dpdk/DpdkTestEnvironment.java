package org.inagg.ffi.dpdk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * One EAL per test JVM (EAL initialises once per process): every test class in the surefire fork shares it, each
 * with its own virtual device. Multi-process and init/shutdown tests start child JVMs with {@link #runJava}.
 *
 * <p>Without DPDK the tests skip with the loader's reason, unless {@code -Dinagg.dpdk.tests.require=true} (CI), where
 * they fail. Tests that also need root (veth pairs, network namespaces) skip without it, unless
 * {@code -Dinagg.root.tests.require=true} (CI, which runs as root), where they fail too.
 */
final class DpdkTestEnvironment
{
    static final String RING_DEVICE = "net_ring0";
    static final String NULL_DEVICE = "net_null0";
    /** True in CI: a test that needs root (veth pairs, network namespaces) fails instead of skipping without it. */
    static final String ROOT_REQUIRE_PROP_NAME = "inagg.root.tests.require";

    private static Eal eal;

    private DpdkTestEnvironment()
    {
    }

    /** Skips (or, when required, fails) the calling test when the shim or DPDK cannot be loaded. */
    static void assumeDpdk()
    {
        final String reason = NativeLibraryLoader.unavailableReason();
        if (reason != null)
        {
            if (Boolean.getBoolean("inagg.dpdk.tests.require"))
            {
                Assertions.fail("DPDK is required here (-Dinagg.dpdk.tests.require=true) but " + reason);
            }
            System.err.println("[inagg-ffi-bindings] skipping a DPDK test: " + reason);
            Assumptions.abort("DPDK not available: " + reason);
        }
    }

    /**
     * Skips (or, when {@value #ROOT_REQUIRE_PROP_NAME} is true, fails) the calling test when {@code failure}, what went
     * wrong setting up {@code what}, is not null.
     */
    static void assumeSetUp(final String what, final String failure)
    {
        if (failure != null)
        {
            final String reason = "cannot set up " + what + " (needs root or CAP_NET_ADMIN, and iproute2): " + failure;
            if (Boolean.getBoolean(ROOT_REQUIRE_PROP_NAME))
            {
                Assertions.fail("root tests are required here (-D" + ROOT_REQUIRE_PROP_NAME + "=true) but " + reason);
            }
            System.err.println("[inagg-ffi-bindings] skipping: " + reason);
            Assumptions.abort(reason);
        }
    }

    /** EAL configuration every test process uses: no hugepages, no PCI, its own file prefix. */
    static EalConfig baseConfig(final String prefixTag)
    {
        return new EalConfig()
            .lcores("0")
            .noHuge(true)
            .memoryMb(512)
            .noPci(true)
            .filePrefix("inagg-test-" + prefixTag + "-" + ProcessHandle.current().pid());
    }

    /** The shared EAL of this JVM, with {@link #RING_DEVICE} and {@link #NULL_DEVICE}. */
    static synchronized Eal eal()
    {
        assumeDpdk();
        if (eal == null)
        {
            eal = Eal.init(baseConfig("shared").vdev(RING_DEVICE).vdev(NULL_DEVICE));
        }
        return eal;
    }

    /** Result of a child JVM. */
    record ChildResult(int exitCode, String output)
    {
    }

    /** Starts {@code java <mainClass> args} with this JVM's class path and native access; returns its process. */
    static Process startJava(final Path outputFile, final Class<?> mainClass, final List<String> args)
        throws IOException
    {
        return startJava(outputFile, List.of(), System.getProperty("java.class.path"), List.of(), mainClass, args);
    }

    /**
     * Starts {@code <wrapper> java <jvmArgs> -cp <classPath> <mainClass> args} with native access; the wrapper is
     * e.g. {@code ip netns exec ns1}.
     */
    static Process startJava(
        final Path outputFile,
        final List<String> wrapper,
        final String classPath,
        final List<String> jvmArgs,
        final Class<?> mainClass,
        final List<String> args) throws IOException
    {
        final List<String> command = new ArrayList<>(wrapper);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-Xmx256m");
        final String shimPath = System.getProperty(NativeLibraryLoader.SHIM_PATH_PROP_NAME);
        if (shimPath != null)
        {
            command.add("-D" + NativeLibraryLoader.SHIM_PATH_PROP_NAME + "=" + shimPath);
        }
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(classPath);
        command.add(mainClass.getName());
        command.addAll(args);
        return new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(outputFile.toFile())
            .start();
    }

    /** Waits for a child, killing it after the timeout; returns its exit code and output. */
    static ChildResult await(final Process process, final Path outputFile, final long timeoutSeconds)
        throws IOException, InterruptedException
    {
        final boolean exited = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!exited)
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        final String output = Files.readString(outputFile);
        return new ChildResult(exited ? process.exitValue() : -1, output);
    }

    static ChildResult runJava(final Path dir, final Class<?> mainClass, final long timeoutSeconds, final String... args)
        throws IOException, InterruptedException
    {
        final Path out = dir.resolve(mainClass.getSimpleName() + "-" + System.nanoTime() + ".log");
        return await(startJava(out, mainClass, List.of(args)), out, timeoutSeconds);
    }
}
