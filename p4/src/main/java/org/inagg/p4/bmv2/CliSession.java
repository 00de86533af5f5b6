package org.inagg.p4.bmv2;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One long-lived {@code simple_switch_CLI} process: commands go to its stdin, and a reader thread cuts its output at
 * the prompts it prints before reading each line, so the k-th piece after the banner is the k-th command's answer.
 * Kept open because each start costs ~0.7 s (the CLI fetches the program's 14 MB JSON from the switch) while a command
 * costs ~0.1 ms. Not thread-safe: {@link SimpleSwitchCli} serialises the batches.
 */
final class CliSession implements AutoCloseable
{
    /** The CLI's prompt, printed (unbuffered) before it reads each command. */
    static final String PROMPT = "RuntimeCmd: ";

    /** Output up to a prompt, or (last) whatever came after the last prompt when the CLI ended. */
    private record Chunk(String text, boolean last)
    {
    }

    private final Process process;
    private final BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
    private final Writer stdin;
    private volatile boolean ended;

    private CliSession(final Process process)
    {
        this.process = process;
        this.stdin = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8),
            1 << 16);
        Thread.ofPlatform().daemon().name("simple_switch_CLI reader " + process.pid()).start(this::readOutput);
    }

    /**
     * Starts the CLI and waits for its first prompt.
     *
     * @throws Bmv2Exception with what the CLI printed if it ends or stalls before the prompt (no switch there).
     */
    static CliSession start(final ProcessBuilder builder, final Duration timeout, final String description)
    {
        builder.environment().put("PYTHONUNBUFFERED", "1"); // stdout and stderr in the order written, prompts at once
        builder.redirectErrorStream(true);
        final Process process;
        try
        {
            process = builder.start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("starting " + description, ex);
        }
        final CliSession session = new CliSession(process);
        try
        {
            final Chunk banner = session.chunks.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (banner == null || banner.last())
            {
                session.close();
                throw new Bmv2Exception(description + (banner == null ? " printed no prompt within " + timeout
                    : " ended (exit " + session.exitCode() + ") before its prompt") + "; is simple_switch running"
                    + " there? It printed: " + P4Toolchain.tail(banner == null ? "" : banner.text(), 2000));
            }
            return session;
        }
        catch (final InterruptedException ex)
        {
            session.close();
            Thread.currentThread().interrupt();
            throw new Bmv2Exception("interrupted while starting " + description, ex);
        }
    }

    private void readOutput()
    {
        final StringBuilder pending = new StringBuilder();
        final char[] buffer = new char[1 << 14];
        try (Reader out = new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))
        {
            int read;
            while ((read = out.read(buffer)) >= 0)
            {
                pending.append(buffer, 0, read);
                int prompt;
                while ((prompt = pending.indexOf(PROMPT)) >= 0)
                {
                    chunks.add(new Chunk(pending.substring(0, prompt), false));
                    pending.delete(0, prompt + PROMPT.length());
                }
            }
        }
        catch (final IOException ignored)
        {
            // the process went away: what came so far is its last word
        }
        finally
        {
            ended = true;
            chunks.add(new Chunk(pending.toString(), true));
        }
    }

    /** True until the CLI ended (end of input, a crash, or {@link #close()}). */
    boolean isAlive()
    {
        return !ended && process.isAlive();
    }

    /**
     * Sends commands (one line each) and collects one answer per command. Fewer answers than commands: the CLI ended
     * after the last of them (a crash: the last answer holds the traceback), and this session is over.
     *
     * @throws Bmv2Exception if the answers do not all come within {@code timeout} (the session is then closed).
     */
    List<String> execute(final List<String> commands, final Duration timeout)
    {
        final Thread writer = Thread.ofVirtual().name("simple_switch_CLI writer").start(() -> write(commands));
        final List<String> answers = new ArrayList<>(commands.size());
        final long deadline = System.nanoTime() + timeout.toNanos();
        try
        {
            while (answers.size() < commands.size())
            {
                final Chunk chunk = chunks.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (chunk == null)
                {
                    close();
                    throw new Bmv2Exception("simple_switch_CLI answered " + answers.size() + " of " + commands.size()
                        + " commands within " + timeout + "; stuck at: " + commands.get(answers.size()));
                }
                answers.add(chunk.text());
                if (chunk.last())
                {
                    break;
                }
            }
            writer.join(Duration.ofSeconds(1));
            return answers;
        }
        catch (final InterruptedException ex)
        {
            close();
            Thread.currentThread().interrupt();
            throw new Bmv2Exception("interrupted while waiting for simple_switch_CLI", ex);
        }
    }

    private void write(final List<String> commands)
    {
        try
        {
            for (final String command : commands)
            {
                stdin.write(command);
                stdin.write('\n');
            }
            stdin.flush();
        }
        catch (final IOException ignored)
        {
            // the CLI ended: its output says why
        }
    }

    private int exitCode()
    {
        try
        {
            return process.waitFor(1, TimeUnit.SECONDS) ? process.exitValue() : -1;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Ends the CLI: end of input, then a kill if it lingers. */
    @Override
    public void close()
    {
        try
        {
            stdin.close();
        }
        catch (final IOException ignored)
        {
            // already gone
        }
        try
        {
            if (!process.waitFor(2, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor(2, TimeUnit.SECONDS);
            }
        }
        catch (final InterruptedException ex)
        {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
