package org.inagg.ffi.dpdk;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads {@code libinagg_dpdk_shim.so}, and through its dependencies the system DPDK libraries, into this
 * class loader so that the {@code extr} bindings resolve their symbols with {@code SymbolLookup.loaderLookup()}.
 *
 * <p>Lookup chain, first success wins:
 * <ol>
 *   <li>{@value #SHIM_PATH_PROP_NAME}: an explicit path to the library;</li>
 *   <li>the jar (or {@code target/classes}): {@code META-INF/native/<os>-<arch>/libinagg_dpdk_shim.so}, extracted
 *       to a temporary file, as Netty does for its native transports;</li>
 *   <li>the system: {@code System.loadLibrary("inagg_dpdk_shim")} over {@code java.library.path}.</li>
 * </ol>
 * When all fail, the error lists every attempt with its cause and says how to install DPDK.
 */
public final class NativeLibraryLoader
{
    /** System property naming an explicit path to {@code libinagg_dpdk_shim.so}. */
    public static final String SHIM_PATH_PROP_NAME = "inagg.dpdk.shim.path";

    /** Library name for {@link System#loadLibrary(String)}. */
    public static final String LIBRARY_NAME = "inagg_dpdk_shim";

    /** Packages to install on Debian/Ubuntu for the runtime libraries and the build. */
    public static final String INSTALL_HINT =
        "install DPDK 22.11 with 'apt-get install dpdk libdpdk-dev' (and dpdk-dev for dpdk-testpmd), then rebuild " +
        "ffi-bindings so that the shim is compiled into the jar, or point -D" + SHIM_PATH_PROP_NAME +
        " at a libinagg_dpdk_shim.so";

    private static final System.Logger LOGGER = System.getLogger(NativeLibraryLoader.class.getName());

    private static String loadedFrom;
    private static UnsatisfiedLinkError failure;

    private NativeLibraryLoader()
    {
    }

    /** Resource path of the shim inside the jar for this platform. */
    public static String resourcePath()
    {
        return "META-INF/native/" + platform() + "/" + System.mapLibraryName(LIBRARY_NAME);
    }

    /**
     * Loads the shim once per class loader; later calls return at once or rethrow the first failure.
     *
     * @return a description of where the library came from.
     * @throws UnsatisfiedLinkError naming every attempt when none succeeded.
     */
    public static synchronized String load()
    {
        if (loadedFrom != null)
        {
            return loadedFrom;
        }
        if (failure != null)
        {
            throw failure;
        }

        final List<String> attempts = new ArrayList<>();
        final String explicit = System.getProperty(SHIM_PATH_PROP_NAME);
        if (explicit != null && !explicit.isBlank())
        {
            if (tryLoad(Path.of(explicit).toAbsolutePath(), "-D" + SHIM_PATH_PROP_NAME, attempts))
            {
                return loadedFrom;
            }
        }
        else
        {
            attempts.add("-D" + SHIM_PATH_PROP_NAME + ": not set");
        }

        final String resource = resourcePath();
        final URL url = NativeLibraryLoader.class.getClassLoader().getResource(resource);
        if (url == null)
        {
            attempts.add("classpath resource " + resource + ": not found (was the shim built? see the Maven log)");
        }
        else
        {
            try
            {
                final Path extracted = extract(url);
                if (tryLoad(extracted, "classpath " + url, attempts))
                {
                    return loadedFrom;
                }
            }
            catch (final IOException ex)
            {
                attempts.add("classpath " + url + ": cannot extract: " + ex);
            }
        }

        try
        {
            System.loadLibrary(LIBRARY_NAME);
            loadedFrom = "System.loadLibrary(" + LIBRARY_NAME + ")";
            LOGGER.log(Level.DEBUG, "loaded DPDK shim from {0}", loadedFrom);
            return loadedFrom;
        }
        catch (final UnsatisfiedLinkError ex)
        {
            attempts.add("System.loadLibrary(\"" + LIBRARY_NAME + "\") on java.library.path=" +
                System.getProperty("java.library.path") + ": " + ex.getMessage());
        }

        failure = new UnsatisfiedLinkError(
            "cannot load the inagg DPDK shim (" + System.mapLibraryName(LIBRARY_NAME) + "); tried:\n  - " +
            String.join("\n  - ", attempts) + "\nTo fix: " + INSTALL_HINT);
        throw failure;
    }

    /** {@code null} when the shim loads, otherwise why it does not (for tests and tools that skip). */
    public static String unavailableReason()
    {
        try
        {
            load();
            return null;
        }
        catch (final UnsatisfiedLinkError ex)
        {
            return ex.getMessage();
        }
    }

    private static boolean tryLoad(final Path path, final String source, final List<String> attempts)
    {
        try
        {
            System.load(path.toString());
            loadedFrom = source + " (" + path + ")";
            LOGGER.log(Level.DEBUG, "loaded DPDK shim from {0}", loadedFrom);
            return true;
        }
        catch (final UnsatisfiedLinkError | SecurityException ex)
        {
            attempts.add(source + " " + path + ": " + ex.getMessage());
            return false;
        }
    }

    private static Path extract(final URL url) throws IOException
    {
        if ("file".equals(url.getProtocol()))
        {
            try
            {
                return Path.of(url.toURI());
            }
            catch (final java.net.URISyntaxException | IllegalArgumentException ignore)
            {
                // fall through and copy
            }
        }
        final Path dir = Files.createTempDirectory("inagg-native-");
        final Path file = dir.resolve(System.mapLibraryName(LIBRARY_NAME));
        try (InputStream in = url.openStream())
        {
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        }
        file.toFile().deleteOnExit();
        dir.toFile().deleteOnExit();
        return file;
    }

    private static String platform()
    {
        final String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux") ?
            "linux" : System.getProperty("os.name", "unknown").toLowerCase(Locale.ROOT).replace(' ', '_');
        final String arch = switch (System.getProperty("os.arch", ""))
        {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> System.getProperty("os.arch");
        };
        return os + "-" + arch;
    }
}
