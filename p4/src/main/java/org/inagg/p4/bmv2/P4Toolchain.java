package org.inagg.p4.bmv2;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Where the P4 tools live (p4c's {@code p4c-bm2-ss}, bmv2's {@code simple_switch} and {@code simple_switch_CLI}): one
 * folder laid out like the project's {@code ../shared/p4tools} ({@code bin}, {@code lib}, {@code lib/python},
 * {@code p4include}), and the environment its {@code env.sh} would set, so that no caller has to source it.
 * <p>
 * Looked up, first found wins: system property {@value #PROPERTY}, environment variable {@value #ENV}, then
 * {@code ../shared/p4tools} next to the project root (the nearest folder holding {@code mvnw}, walking up from the
 * working directory). One variable to set on a machine where the tools live elsewhere, and none on the build machine.
 */
public final class P4Toolchain
{
    /** Environment variable naming the tools folder. */
    public static final String ENV = "INAGG_P4TOOLS";
    /** System property naming the tools folder; wins over {@link #ENV}. */
    public static final String PROPERTY = "inagg.p4tools";
    /** The tools folder relative to the project root when neither is set. */
    public static final String PROJECT_RELATIVE = "../shared/p4tools";

    public static final String P4C_BM2_SS = "p4c-bm2-ss";
    public static final String SIMPLE_SWITCH = "simple_switch";
    public static final String SIMPLE_SWITCH_CLI = "simple_switch_CLI";
    private static final List<String> TOOLS = List.of(P4C_BM2_SS, SIMPLE_SWITCH, SIMPLE_SWITCH_CLI);

    private static final Object LOCK = new Object();
    private static P4Toolchain located;
    private static String unavailableReason;
    private static boolean probed;

    private final Path home;

    private P4Toolchain(final Path home)
    {
        this.home = home;
    }

    /**
     * The tools in {@code home}, checked for the three tools.
     *
     * @throws Bmv2Exception if one is missing or not executable.
     */
    public static P4Toolchain at(final Path home)
    {
        final Path absolute = home.toAbsolutePath().normalize();
        final List<String> missing = missingTools(absolute);
        if (!missing.isEmpty())
        {
            throw new Bmv2Exception("P4 tools folder " + absolute + " lacks " + String.join(", ", missing)
                + " (expected bin/" + P4C_BM2_SS + ", bin/" + SIMPLE_SWITCH + ", bin/" + SIMPLE_SWITCH_CLI
                + " as in ../shared/p4tools)");
        }
        return new P4Toolchain(absolute);
    }

    /**
     * The tools found by the lookup in the class comment, their CLI's Python dependencies checked once.
     *
     * @throws Bmv2Exception naming {@value #ENV}, the paths tried and what to do, when none is usable.
     */
    public static P4Toolchain locate()
    {
        synchronized (LOCK)
        {
            probe();
            if (located == null)
            {
                throw new Bmv2Exception(unavailableReason);
            }
            return located;
        }
    }

    /** True when {@link #locate()} finds usable tools. For tests that skip without them. */
    public static boolean available()
    {
        return unavailableReason() == null;
    }

    /** Why {@link #locate()} fails, or null when the tools are there. */
    public static String unavailableReason()
    {
        synchronized (LOCK)
        {
            probe();
            return unavailableReason;
        }
    }

    private static void probe()
    {
        if (probed)
        {
            return;
        }
        probed = true;
        final List<String> tried = new ArrayList<>();
        final Path home = candidate(tried);
        if (home == null)
        {
            unavailableReason = "no P4 tools (p4c-bm2-ss, simple_switch, simple_switch_CLI) found; tried "
                + String.join("; ", tried) + ". Set the environment variable " + ENV + " (or -D" + PROPERTY
                + ") to a folder laid out like the project's ../shared/p4tools (bin/, lib/, lib/python/, p4include/;"
                + " see its README.md and install-deps.sh for the Debian runtime packages)";
            return;
        }
        final P4Toolchain toolchain = new P4Toolchain(home);
        final String cliProblem = toolchain.cliProblem();
        if (cliProblem != null)
        {
            unavailableReason = "P4 tools at " + home + ": " + cliProblem;
            return;
        }
        located = toolchain;
    }

    /** The first usable folder of the lookup, each one tried described in {@code tried}. */
    private static Path candidate(final List<String> tried)
    {
        final String property = System.getProperty(PROPERTY);
        if (property != null && !property.isBlank())
        {
            return check(Path.of(property), "-D" + PROPERTY + "=" + property, tried);
        }
        final String env = System.getenv(ENV);
        if (env != null && !env.isBlank())
        {
            return check(Path.of(env), ENV + "=" + env, tried);
        }
        final Path root = projectRoot(Path.of("").toAbsolutePath());
        if (root == null)
        {
            tried.add(PROJECT_RELATIVE + " next to the project root (no folder holding mvnw above "
                + Path.of("").toAbsolutePath() + "); " + ENV + " not set");
            return null;
        }
        return check(root.resolve(PROJECT_RELATIVE), PROJECT_RELATIVE + " from project root " + root + " (" + ENV
            + " not set)", tried);
    }

    private static Path check(final Path folder, final String source, final List<String> tried)
    {
        final Path absolute = folder.toAbsolutePath().normalize();
        final List<String> missing = missingTools(absolute);
        if (missing.isEmpty())
        {
            return absolute;
        }
        tried.add(absolute + " [" + source + "]: " + (Files.isDirectory(absolute) ? "lacks " + String.join(", ",
            missing) : "no such folder"));
        return null;
    }

    private static List<String> missingTools(final Path home)
    {
        final List<String> missing = new ArrayList<>();
        for (final String tool : TOOLS)
        {
            if (!Files.isExecutable(home.resolve("bin").resolve(tool)))
            {
                missing.add("bin/" + tool);
            }
        }
        return missing;
    }

    /** The nearest folder at or above {@code from} that holds {@code mvnw}, or null. */
    static Path projectRoot(final Path from)
    {
        for (Path folder = from; folder != null; folder = folder.getParent())
        {
            if (Files.isRegularFile(folder.resolve("mvnw")))
            {
                return folder;
            }
        }
        return null;
    }

    /** Null when {@code simple_switch_CLI --help} runs (python3 with its thrift module), else why not. */
    private String cliProblem()
    {
        try
        {
            final Process process = processBuilder(SIMPLE_SWITCH_CLI, List.of("--help")).redirectErrorStream(true)
                .start();
            process.getOutputStream().close();
            final byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return SIMPLE_SWITCH_CLI + " --help did not finish in 30 s";
            }
            if (process.exitValue() != 0)
            {
                return SIMPLE_SWITCH_CLI + " --help failed (exit " + process.exitValue() + "; needs python3 and"
                    + " python3-thrift, see install-deps.sh): " + tail(new String(output, StandardCharsets.UTF_8),
                    2000);
            }
            return null;
        }
        catch (final IOException ex)
        {
            return SIMPLE_SWITCH_CLI + " does not start: " + ex.getMessage();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "interrupted while checking " + SIMPLE_SWITCH_CLI;
        }
    }

    /** The tools folder. */
    public Path home()
    {
        return home;
    }

    /** The executable of a tool, e.g. {@link #SIMPLE_SWITCH}. */
    public Path tool(final String name)
    {
        return home.resolve("bin").resolve(name);
    }

    /** The P4_16 include folder (core.p4, v1model.p4). */
    public Path p4include()
    {
        return home.resolve("p4include");
    }

    /**
     * The variables {@code env.sh} sets, each list prepended to the current value: {@code PATH},
     * {@code LD_LIBRARY_PATH}, {@code PYTHONPATH}, and {@code P4C_16_INCLUDE_PATH}, {@code P4TOOLS_TNA_INCLUDE}.
     */
    public Map<String, String> environment()
    {
        final Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", prepend(home.resolve("bin"), System.getenv("PATH")));
        env.put("LD_LIBRARY_PATH", prepend(home.resolve("lib"), System.getenv("LD_LIBRARY_PATH")));
        env.put("PYTHONPATH", prepend(home.resolve("lib").resolve("python"), System.getenv("PYTHONPATH")));
        env.put("P4C_16_INCLUDE_PATH", p4include().toString());
        env.put("P4TOOLS_TNA_INCLUDE", home.resolve("p4include-tofino").toString());
        return env;
    }

    private static String prepend(final Path folder, final String list)
    {
        if (list == null || list.isEmpty())
        {
            return folder.toString();
        }
        for (final String entry : list.split(File.pathSeparator))
        {
            if (entry.equals(folder.toString()))
            {
                return list;
            }
        }
        return folder + File.pathSeparator + list;
    }

    /** A process builder running a tool (by its absolute path) with {@link #environment()}. */
    public ProcessBuilder processBuilder(final String tool, final List<String> args)
    {
        return processBuilder(List.of(), tool, args);
    }

    /**
     * A process builder running {@code prefix tool args} with {@link #environment()}: a prefix such as
     * {@code ip netns exec NS} runs the tool inside a network namespace (the tool is named by its absolute path, so
     * the prefix need not pass PATH on).
     */
    public ProcessBuilder processBuilder(final List<String> prefix, final String tool, final List<String> args)
    {
        final List<String> command = new ArrayList<>(prefix);
        command.add(tool(tool).toString());
        command.addAll(args);
        final ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(environment());
        return builder;
    }

    /** The last {@code max} characters of {@code text}, marked when cut. */
    static String tail(final String text, final int max)
    {
        final String trimmed = text.strip();
        return trimmed.length() <= max ? trimmed : "..." + trimmed.substring(trimmed.length() - max);
    }

    @Override
    public String toString()
    {
        return "P4Toolchain[" + home + "]";
    }
}
