package org.inagg.p4.bmv2;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Talks to a running simple_switch through {@code simple_switch_CLI}: batches of commands sent to one long-lived CLI
 * process ({@link CliSession}), its output cut at its {@code RuntimeCmd: } prompts so each command gets its own answer
 * back ({@link CommandResult}). bmv2's CLI keeps going after a refused command, so a batch gives every command's
 * answer; a command that crashes the CLI (a Python traceback) ends the batch, the ones after it are reported as not
 * run, and the next batch starts a new CLI.
 * <p>
 * Starting the CLI costs ~0.7 s (it fetches the program's 14 MB JSON from the switch; its {@code --json} option is
 * broken in this bmv2); a command then costs ~0.1 ms (clearing a 4096-slot job's registers, 73,728 writes, ~7 s).
 * Thread-safe: batches run one at a time. With a command prefix ({@code ip netns exec NS}) the CLI runs where the
 * switch's Thrift server listens. {@link #close()} ends the CLI process (it also ends with its input when the JVM
 * exits).
 */
public final class SimpleSwitchCli implements AutoCloseable
{
    private static final Pattern REGISTER_VALUE = Pattern.compile("^\\S+\\[(\\d+)\\]=\\s*(-?\\d+)\\s*$");
    private static final Pattern REGISTER_ALL = Pattern.compile("^\\S+=\\s*(.*)$");
    private static final Pattern COUNTER_VALUE =
        Pattern.compile("^\\S+\\[(\\d+)\\]=\\s*\\((\\d+) bytes, (\\d+) packets\\)\\s*$");
    private static final Duration BASE_TIMEOUT = Duration.ofSeconds(60);

    private final P4Toolchain toolchain;
    private final int thriftPort;
    private final List<String> commandPrefix;
    private final Object lock = new Object();
    private CliSession session;
    private boolean closed;

    /** A CLI for the switch whose Thrift server listens on {@code thriftPort} of this host. */
    public SimpleSwitchCli(final P4Toolchain toolchain, final int thriftPort)
    {
        this(toolchain, thriftPort, List.of());
    }

    /**
     * A CLI for the switch whose Thrift server listens on {@code thriftPort} of localhost as seen by
     * {@code commandPrefix} (e.g. {@code ip netns exec NS}: the switch's namespace).
     */
    public SimpleSwitchCli(final P4Toolchain toolchain, final int thriftPort, final List<String> commandPrefix)
    {
        if (thriftPort < 1 || thriftPort > 0xFFFF)
        {
            throw new IllegalArgumentException("Thrift port must be in 1..65535, got " + thriftPort);
        }
        this.toolchain = toolchain;
        this.thriftPort = thriftPort;
        this.commandPrefix = List.copyOf(commandPrefix);
    }

    public int thriftPort()
    {
        return thriftPort;
    }

    public List<String> commandPrefix()
    {
        return commandPrefix;
    }

    /**
     * Runs a batch and returns every command's answer, refusals included.
     *
     * @throws IllegalArgumentException if a command is blank or spans lines (the CLI would repeat its previous command
     *                                  on an empty line).
     * @throws Bmv2Exception            if the CLI does not reach its prompt (no switch on the port) or the answers do
     *                                  not come within a minute (plus 2 ms a command).
     */
    public List<CommandResult> runAll(final List<String> commands)
    {
        for (final String command : commands)
        {
            if (command.isBlank() || command.indexOf('\n') >= 0 || command.indexOf('\r') >= 0)
            {
                throw new IllegalArgumentException("not a single simple_switch_CLI command: '" + command + "'");
            }
        }
        if (commands.isEmpty())
        {
            return List.of();
        }
        final Duration timeout = BASE_TIMEOUT.plusMillis(2L * commands.size());
        synchronized (lock)
        {
            if (closed)
            {
                throw new IllegalStateException("simple_switch_CLI for Thrift port " + thriftPort + " is closed");
            }
            if (session == null || !session.isAlive())
            {
                session = CliSession.start(toolchain.processBuilder(commandPrefix, P4Toolchain.SIMPLE_SWITCH_CLI,
                    List.of("--thrift-port", Integer.toString(thriftPort))), BASE_TIMEOUT, description());
            }
            final List<String> answers = session.execute(commands, timeout);
            if (answers.size() < commands.size())
            {
                session.close();
                session = null;
            }
            return parse(commands, answers);
        }
    }

    private String description()
    {
        return (commandPrefix.isEmpty() ? "" : String.join(" ", commandPrefix) + " ") + "simple_switch_CLI"
            + " --thrift-port " + thriftPort;
    }

    /** Ends the CLI process; later batches are refused. */
    @Override
    public void close()
    {
        synchronized (lock)
        {
            closed = true;
            if (session != null)
            {
                session.close();
                session = null;
            }
        }
    }

    /**
     * Runs a batch.
     *
     * @return every command's answer, all of them successful.
     * @throws Bmv2CommandException for the first command bmv2 refused (the later ones have run).
     */
    public List<CommandResult> run(final List<String> commands)
    {
        final List<CommandResult> results = runAll(commands);
        for (final CommandResult result : results)
        {
            if (!result.ok())
            {
                throw result.exception(null);
            }
        }
        return results;
    }

    /** Runs one command; its output. */
    public String run(final String command)
    {
        return run(List.of(command)).getFirst().output();
    }

    /** {@code register_read}: one cell. */
    public long registerRead(final String register, final int index)
    {
        final String output = run("register_read " + register + " " + index).strip();
        final Matcher matcher = REGISTER_VALUE.matcher(lastLine(output));
        if (!matcher.matches())
        {
            throw new Bmv2Exception("unexpected register_read answer for " + register + "[" + index + "]: " + output);
        }
        return Long.parseLong(matcher.group(2));
    }

    /** {@code register_read} of a whole register array. */
    public long[] registerReadAll(final String register)
    {
        final String output = run("register_read " + register).strip();
        final Matcher matcher = REGISTER_ALL.matcher(lastLine(output));
        if (!matcher.matches())
        {
            throw new Bmv2Exception("unexpected register_read answer for " + register + ": "
                + P4Toolchain.tail(output, 500));
        }
        final String values = matcher.group(1).strip();
        if (values.isEmpty())
        {
            return new long[0];
        }
        final String[] words = values.split(",\\s*");
        final long[] cells = new long[words.length];
        for (int i = 0; i < words.length; i++)
        {
            cells[i] = Long.parseLong(words[i].strip());
        }
        return cells;
    }

    /** {@code register_write}: one cell. */
    public void registerWrite(final String register, final int index, final long value)
    {
        run(List.of(registerWriteCommand(register, index, value)));
    }

    /** {@code register_write} of cells {@code [from, from + count)}, one batch. */
    public void registerFill(final String register, final int from, final int count, final long value)
    {
        final List<String> commands = new ArrayList<>(count);
        for (int index = from; index < from + count; index++)
        {
            commands.add(registerWriteCommand(register, index, value));
        }
        run(commands);
    }

    static String registerWriteCommand(final String register, final int index, final long value)
    {
        return "register_write " + register + " " + index + " " + value;
    }

    /** {@code counter_read}: the packets of one cell. */
    public long counterRead(final String counter, final int index)
    {
        return counterReads(counter, index)[0];
    }

    /** {@code counter_read} of several cells in one batch: their packets, in the order asked. */
    public long[] counterReads(final String counter, final int... indices)
    {
        final List<String> commands = new ArrayList<>(indices.length);
        for (final int index : indices)
        {
            commands.add("counter_read " + counter + " " + index);
        }
        final List<CommandResult> results = run(commands);
        final long[] packets = new long[indices.length];
        for (int i = 0; i < indices.length; i++)
        {
            packets[i] = parseCounter(results.get(i));
        }
        return packets;
    }

    /** Packets of a {@code counter_read} answer. */
    static long parseCounter(final CommandResult result)
    {
        final Matcher matcher = COUNTER_VALUE.matcher(lastLine(result.output().strip()));
        if (!matcher.matches())
        {
            throw new Bmv2Exception("unexpected answer to " + result.command() + ": " + result.output().strip());
        }
        return Long.parseLong(matcher.group(3));
    }

    /** {@code table_num_entries}. */
    public int tableNumEntries(final String table)
    {
        final String output = run("table_num_entries " + table).strip();
        try
        {
            return Integer.parseInt(lastLine(output));
        }
        catch (final NumberFormatException ex)
        {
            throw new Bmv2Exception("unexpected table_num_entries answer for " + table + ": " + output, ex);
        }
    }

    /** {@code table_dump}: every entry and the default, as the CLI prints them. */
    public String tableDump(final String table)
    {
        return run("table_dump " + table);
    }

    /** {@code table_dump_entry}: one entry by handle, as the CLI prints it. */
    public String tableDumpEntry(final String table, final int handle)
    {
        return run("table_dump_entry " + table + " " + handle);
    }

    /** {@code mc_dump}: multicast groups and their nodes, as the CLI prints them. */
    public String mcDump()
    {
        return run("mc_dump");
    }

    private static String lastLine(final String text)
    {
        final int newline = text.lastIndexOf('\n');
        return newline < 0 ? text : text.substring(newline + 1).strip();
    }

    /**
     * Pairs commands with the CLI's answers, in order; fewer answers than commands: the CLI crashed at the last answer
     * (a Python traceback), and the commands after it did not run.
     */
    static List<CommandResult> parse(final List<String> commands, final List<String> answers)
    {
        final List<CommandResult> results = new ArrayList<>(commands.size());
        int crashedAt = -1;
        for (int i = 0; i < commands.size(); i++)
        {
            final String command = commands.get(i);
            if (i >= answers.size())
            {
                final String why = crashedAt >= 0
                    ? "not run: simple_switch_CLI stopped at command " + (crashedAt + 1) + " ("
                    + commands.get(crashedAt) + ")"
                    : "not run: simple_switch_CLI ended before it";
                results.add(new CommandResult(command, "", why));
                continue;
            }
            final String answer = answers.get(i);
            String error = errorLine(answer);
            if (i == answers.size() - 1 && answers.size() < commands.size())
            {
                crashedAt = i;
                error = error != null ? error : "simple_switch_CLI ended here: " + P4Toolchain.tail(answer, 500);
            }
            results.add(new CommandResult(command, answer, error));
        }
        return results;
    }

    /** The line saying a command failed, or null. */
    static String errorLine(final String chunk)
    {
        if (chunk.contains("Traceback (most recent call last)"))
        {
            final String[] lines = chunk.strip().split("\n");
            return "simple_switch_CLI crashed: " + lines[lines.length - 1].strip();
        }
        for (final String raw : chunk.split("\n"))
        {
            final String line = raw.strip();
            if (line.startsWith("Error:") || line.startsWith("Invalid ") || line.startsWith("*** "))
            {
                return line;
            }
        }
        return null;
    }
}
