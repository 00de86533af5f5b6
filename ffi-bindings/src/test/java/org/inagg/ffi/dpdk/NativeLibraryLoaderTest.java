package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The lookup chain, each case in a fresh JVM (a class loader loads the shim once). */
@Timeout(60)
class NativeLibraryLoaderTest
{
    @TempDir
    Path dir;

    @Test
    void shouldListEveryAttemptAndHowToInstallDpdkWhenNothingLoads() throws Exception
    {
        final Path classes = copyWithoutNativeLibraries(codeSource(NativeLibraryLoader.class));
        final String classPath = classes + File.pathSeparator + codeSource(LoaderProbeMain.class);

        final String output = run(classPath, "/nonexistent/libinagg_dpdk_shim.so");

        assertThat(output)
            .contains("LOAD-FAILED")
            .contains("cannot load the inagg DPDK shim (libinagg_dpdk_shim.so); tried:")
            .contains("-Dinagg.dpdk.shim.path /nonexistent/libinagg_dpdk_shim.so: ")
            .contains("classpath resource META-INF/native/linux-x86_64/libinagg_dpdk_shim.so: not found")
            .contains("System.loadLibrary(\"inagg_dpdk_shim\") on java.library.path=")
            .contains("apt-get install dpdk libdpdk-dev");
    }

    @Test
    void shouldLoadFromJarResourceWhenNoPathIsGiven() throws Exception
    {
        DpdkTestEnvironment.assumeDpdk();

        final String output = run(System.getProperty("java.class.path"), null);

        assertThat(output).contains("LOADED-FROM classpath ").contains("libinagg_dpdk_shim.so").contains("ETH-CONF-SIZE ");
    }

    @Test
    void shouldPreferExplicitPathProperty() throws Exception
    {
        DpdkTestEnvironment.assumeDpdk();
        final Path shim = codeSource(NativeLibraryLoader.class).resolve(NativeLibraryLoader.resourcePath());
        final Path copy = Files.copy(shim, dir.resolve("libcopy.so"));

        final String output = run(System.getProperty("java.class.path"), copy.toString());

        assertThat(output).contains("LOADED-FROM -Dinagg.dpdk.shim.path (" + copy + ")");
    }

    private String run(final String classPath, final String shimPath) throws IOException, InterruptedException
    {
        final Path out = dir.resolve("probe-" + System.nanoTime() + ".log");
        final List<String> jvmArgs = shimPath == null ?
            List.of() : List.of("-D" + NativeLibraryLoader.SHIM_PATH_PROP_NAME + "=" + shimPath);
        final Process p = DpdkTestEnvironment.startJava(out, List.of(), classPath, jvmArgs, LoaderProbeMain.class, List.of());
        final DpdkTestEnvironment.ChildResult result = DpdkTestEnvironment.await(p, out, 45);
        assertThat(result.exitCode()).as(result.output()).isZero();
        return result.output();
    }

    private static Path codeSource(final Class<?> type) throws Exception
    {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private Path copyWithoutNativeLibraries(final Path classes) throws IOException
    {
        final Path target = dir.resolve("classes");
        try (Stream<Path> files = Files.walk(classes))
        {
            for (final Path file : (Iterable<Path>)files::iterator)
            {
                final Path relative = classes.relativize(file);
                if (relative.toString().startsWith("META-INF/native"))
                {
                    continue;
                }
                final Path to = target.resolve(relative.toString());
                if (Files.isDirectory(file))
                {
                    Files.createDirectories(to);
                }
                else
                {
                    Files.copy(file, to);
                }
            }
        }
        return target;
    }
}
