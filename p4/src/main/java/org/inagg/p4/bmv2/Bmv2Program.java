package org.inagg.p4.bmv2;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemNotFoundException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The bmv2 build of {@code inagg_v1model.p4}: compiled by {@code p4c-bm2-ss} only when its sources change, since one
 * compile takes ~95 s on a 2-core machine.
 * <p>
 * The sources come from the class path ({@value #RESOURCE_ROOT}{@code inagg_v1model.p4} and
 * {@code generated/inagg_v1model_*.p4}, packed from {@code p4/src/main/p4}), so a jar compiles the program it was built
 * with. Compiled programs are kept in a cache folder ({@value #CACHE_ENV}, else {@code ~/.cache/inagg/p4}) as
 * {@code inagg_v1model-KEY.json}, KEY the first 16 hex digits of the SHA-256 of {@code inagg_v1model.p4}, then the
 * {@code generated/inagg_v1model_*.p4} files in byte order of their names, then what {@code p4c-bm2-ss --version}
 * prints: the key {@code p4/scripts/run-vectors-bmv2.sh} computes, so both share one compiled file. A changed source
 * or compiler compiles afresh; everything else reuses the file. A compile goes to a temp file moved into place
 * atomically, under a file lock, so concurrent JVMs (parallel test forks) compile once and never read half a file.
 */
public final class Bmv2Program
{
    /** Environment variable naming the cache folder. */
    public static final String CACHE_ENV = "INAGG_P4_CACHE";
    /** Class path folder of the P4 sources. */
    public static final String RESOURCE_ROOT = "p4/";
    /** The v1model program's main file. */
    public static final String V1MODEL_MAIN = "inagg_v1model.p4";
    private static final String GENERATED = "generated/";
    private static final Pattern LOCAL_INCLUDE = Pattern.compile("^\\s*#\\s*include\\s+\"([^\"]+)\"",
        Pattern.MULTILINE);
    private static final Duration COMPILE_TIMEOUT = Duration.ofMinutes(30);
    private static final int OUTPUT_TAIL = 6000;
    /** File locks are per JVM: threads of one JVM queue here first. */
    private static final Object COMPILE_LOCK = new Object();

    private Bmv2Program()
    {
    }

    /** {@link #v1modelJson(P4Toolchain, Path)} with the located toolchain and the default cache. */
    public static Path v1modelJson()
    {
        return v1modelJson(P4Toolchain.locate(), cacheFolder());
    }

    /**
     * The compiled {@code inagg_v1model.json} for the current sources, compiling it into {@code cache} if no file
     * there matches them.
     *
     * @throws Bmv2Exception with the compiler's output tail if it refuses the program.
     */
    public static Path v1modelJson(final P4Toolchain toolchain, final Path cache)
    {
        final Map<String, byte[]> sources = sources();
        final String compilerVersion = compilerVersion(toolchain);
        final String key = key(sources, compilerVersion);
        final Path json = cache.resolve("inagg_v1model-" + key + ".json");
        if (Files.isRegularFile(json))
        {
            return json;
        }
        synchronized (COMPILE_LOCK)
        {
            return compileOnce(toolchain, sources, cache, key, json);
        }
    }

    private static Path compileOnce(
        final P4Toolchain toolchain, final Map<String, byte[]> sources, final Path cache, final String key,
        final Path json)
    {
        try
        {
            Files.createDirectories(cache);
            try (FileChannel lockFile = FileChannel.open(cache.resolve("inagg_v1model-" + key + ".lock"),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock ignored = lockFile.lock())
            {
                if (!Files.isRegularFile(json)) // another JVM may have compiled it while this one waited
                {
                    compile(toolchain, sources, V1MODEL_MAIN, json);
                }
            }
            return json;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("compiling " + V1MODEL_MAIN + " into " + cache, ex);
        }
    }

    /** {@value #CACHE_ENV}, else {@code ~/.cache/inagg/p4}. */
    public static Path cacheFolder()
    {
        final String env = System.getenv(CACHE_ENV);
        if (env != null && !env.isBlank())
        {
            return Path.of(env).toAbsolutePath();
        }
        return Path.of(System.getProperty("user.home"), ".cache", "inagg", "p4");
    }

    /**
     * The v1model program's sources from the class path, keyed by path relative to {@value #RESOURCE_ROOT}, in key
     * order: {@code inagg_v1model.p4}, then {@code generated/inagg_v1model_*.p4} in byte order of their names, then any
     * other file included with {@code #include "..."} (architecture headers such as {@code <v1model.p4>} are the
     * compiler's).
     */
    static Map<String, byte[]> sources()
    {
        final Map<String, byte[]> sources = new LinkedHashMap<>();
        sources.put(V1MODEL_MAIN, resource(V1MODEL_MAIN));
        for (final String name : generatedV1modelNames())
        {
            sources.put(GENERATED + name, resource(GENERATED + name));
        }
        final Deque<String> pending = new ArrayDeque<>(sources.keySet());
        while (!pending.isEmpty())
        {
            final String path = pending.pop();
            final byte[] text = sources.computeIfAbsent(path, Bmv2Program::resource);
            final Matcher include = LOCAL_INCLUDE.matcher(new String(text, StandardCharsets.UTF_8));
            final String folder = path.contains("/") ? path.substring(0, path.lastIndexOf('/') + 1) : "";
            while (include.find())
            {
                final String included = Path.of(folder + include.group(1)).normalize().toString().replace('\\', '/');
                if (!sources.containsKey(included))
                {
                    pending.push(included);
                }
            }
        }
        return sources;
    }

    /** Names of the {@code generated/inagg_v1model_*.p4} resources, sorted; from a folder or a jar. */
    static List<String> generatedV1modelNames()
    {
        final URL main = Bmv2Program.class.getClassLoader().getResource(RESOURCE_ROOT + V1MODEL_MAIN);
        if (main == null)
        {
            resource(V1MODEL_MAIN); // throws the explanation
        }
        try
        {
            final URI uri = main.toURI();
            final List<String> names = new ArrayList<>();
            if ("jar".equals(uri.getScheme()))
            {
                FileSystem jar;
                boolean opened = false;
                try
                {
                    jar = FileSystems.getFileSystem(uri);
                }
                catch (final FileSystemNotFoundException ex)
                {
                    jar = FileSystems.newFileSystem(uri, Map.of());
                    opened = true;
                }
                try
                {
                    listGenerated(jar.getPath("/" + RESOURCE_ROOT + GENERATED), names);
                }
                finally
                {
                    if (opened)
                    {
                        jar.close();
                    }
                }
            }
            else
            {
                listGenerated(Path.of(uri).resolveSibling(GENERATED), names);
            }
            names.sort(Comparator.naturalOrder());
            return names;
        }
        catch (final URISyntaxException ex)
        {
            throw new IllegalStateException("class path URL of " + V1MODEL_MAIN + ": " + main, ex);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("listing " + RESOURCE_ROOT + GENERATED + " next to " + main, ex);
        }
    }

    private static void listGenerated(final Path folder, final List<String> names) throws IOException
    {
        if (!Files.isDirectory(folder))
        {
            return;
        }
        try (Stream<Path> files = Files.list(folder))
        {
            files.map(file -> file.getFileName().toString())
                .filter(name -> name.startsWith("inagg_v1model_") && name.endsWith(".p4"))
                .forEach(names::add);
        }
    }

    /** A P4 source from the class path, by path relative to {@value #RESOURCE_ROOT}. */
    static String source(final String path)
    {
        return new String(resource(path), StandardCharsets.UTF_8);
    }

    private static byte[] resource(final String path)
    {
        final String name = RESOURCE_ROOT + path;
        try (InputStream in = Bmv2Program.class.getClassLoader().getResourceAsStream(name))
        {
            if (in == null)
            {
                throw new Bmv2Exception("P4 source " + name + " is not on the class path (the p4 module packs"
                    + " p4/src/main/p4 there; rebuild it)");
            }
            return in.readAllBytes();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("reading " + name, ex);
        }
    }

    /** The first 16 hex digits of the SHA-256 of the sources' contents, in order, then the compiler's version. */
    static String key(final Map<String, byte[]> sources, final String compilerVersion)
    {
        try
        {
            final MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (final byte[] source : sources.values())
            {
                digest.update(source);
            }
            digest.update(compilerVersion.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest.digest()).substring(0, 16);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 missing from this JVM", ex);
        }
    }

    private static String compilerVersion(final P4Toolchain toolchain)
    {
        final RunResult version = runTool(toolchain, List.of("--version"), null, Duration.ofSeconds(60));
        if (version.exitCode != 0)
        {
            throw new Bmv2Exception(P4Toolchain.P4C_BM2_SS + " --version failed (exit " + version.exitCode + "): "
                + P4Toolchain.tail(version.output, OUTPUT_TAIL));
        }
        // p4c prints the name it was run by first: the key says p4c-bm2-ss, as a shell running it from PATH does.
        return version.output.replace(toolchain.tool(P4Toolchain.P4C_BM2_SS).toString(), P4Toolchain.P4C_BM2_SS);
    }

    /**
     * Extracts the sources to a temp folder, compiles {@code main} there, moves the JSON to {@code json} atomically.
     *
     * @throws Bmv2Exception with the compiler's output tail if it refuses the program.
     */
    static void compile(
        final P4Toolchain toolchain, final Map<String, byte[]> sources, final String main, final Path json)
        throws IOException
    {
        final Path work = Files.createTempDirectory("inagg-p4c-");
        try
        {
            for (final Map.Entry<String, byte[]> source : sources.entrySet())
            {
                final Path file = work.resolve(source.getKey());
                Files.createDirectories(file.getParent());
                Files.write(file, source.getValue());
            }
            final Path output = work.resolve("program.json");
            final RunResult result = runTool(toolchain,
                List.of("--std", "p4-16", "-o", output.toString(), main), work, COMPILE_TIMEOUT);
            if (result.exitCode != 0 || !Files.isRegularFile(output))
            {
                throw new Bmv2Exception(P4Toolchain.P4C_BM2_SS + " refused " + main + " (exit "
                    + result.exitCode + "): " + P4Toolchain.tail(result.output, OUTPUT_TAIL));
            }
            final Path temp = Files.createTempFile(json.getParent(), ".inagg_v1model-", ".json.tmp");
            try
            {
                Files.copy(output, temp, StandardCopyOption.REPLACE_EXISTING);
                try
                {
                    Files.move(temp, json, StandardCopyOption.ATOMIC_MOVE);
                }
                catch (final AtomicMoveNotSupportedException ex)
                {
                    Files.move(temp, json, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            finally
            {
                Files.deleteIfExists(temp);
            }
        }
        finally
        {
            try (Stream<Path> paths = Files.walk(work))
            {
                for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
                {
                    Files.deleteIfExists(path);
                }
            }
        }
    }

    private record RunResult(int exitCode, String output)
    {
    }

    private static RunResult runTool(
        final P4Toolchain toolchain, final List<String> args, final Path directory, final Duration timeout)
    {
        Path outputFile = null;
        try
        {
            outputFile = Files.createTempFile("inagg-p4c-", ".out");
            final ProcessBuilder builder = toolchain.processBuilder(P4Toolchain.P4C_BM2_SS, args)
                .redirectErrorStream(true).redirectOutput(outputFile.toFile());
            if (directory != null)
            {
                builder.directory(directory.toFile());
            }
            final Process process = builder.start();
            process.getOutputStream().close();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new Bmv2Exception(P4Toolchain.P4C_BM2_SS + " " + String.join(" ", args) + " ran past "
                    + timeout + ": " + P4Toolchain.tail(Files.readString(outputFile, StandardCharsets.UTF_8),
                    OUTPUT_TAIL));
            }
            return new RunResult(process.exitValue(), Files.readString(outputFile, StandardCharsets.UTF_8));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("running " + toolchain.tool(P4Toolchain.P4C_BM2_SS), ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new Bmv2Exception("interrupted while running " + P4Toolchain.P4C_BM2_SS, ex);
        }
        finally
        {
            if (outputFile != null)
            {
                try
                {
                    Files.deleteIfExists(outputFile);
                }
                catch (final IOException ignored)
                {
                    // a temp file left behind
                }
            }
        }
    }
}
