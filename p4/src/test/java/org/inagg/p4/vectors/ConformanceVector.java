package org.inagg.p4.vectors;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One conformance vector (p4/src/test/vectors/README.md): setup commands in simple_switch_CLI syntax, then packets in
 * and the frames expected out, each {@code expect} belonging to the {@code packet} before it, then software switch
 * counter checks.
 */
record ConformanceVector(
    String name, List<String> setup, List<Step> steps, Map<String, Long> softswitchCounters)
{
    /** A frame sent into {@code port}, and the frames expected from the switch in answer. */
    record Step(int port, byte[] frame, List<Expected> expected)
    {
    }

    record Expected(int port, byte[] frame)
    {
    }

    static ConformanceVector read(final Path file) throws IOException
    {
        final List<String> setup = new ArrayList<>();
        final List<Step> steps = new ArrayList<>();
        final Map<String, Long> counters = new LinkedHashMap<>();
        int lineNumber = 0;
        for (final String raw : Files.readAllLines(file))
        {
            lineNumber++;
            final int hash = raw.indexOf('#');
            final String line = (hash >= 0 ? raw.substring(0, hash) : raw).strip();
            if (line.isEmpty())
            {
                continue;
            }
            final String[] words = line.split("\\s+");
            switch (words[0])
            {
                case "packet" -> steps.add(new Step(Integer.parseInt(words[1]), hex(words), new ArrayList<>()));
                case "expect" ->
                {
                    if (steps.isEmpty())
                    {
                        throw new IllegalArgumentException(file + ":" + lineNumber + ": expect before any packet");
                    }
                    steps.getLast().expected().add(new Expected(Integer.parseInt(words[1]), hex(words)));
                }
                case "softswitch_counter" -> counters.put(words[1], Long.parseLong(words[2]));
                default ->
                {
                    if (!steps.isEmpty())
                    {
                        throw new IllegalArgumentException(file + ":" + lineNumber + ": setup after the first packet");
                    }
                    setup.add(line);
                }
            }
        }
        final String fileName = file.getFileName().toString();
        return new ConformanceVector(fileName.substring(0, fileName.lastIndexOf('.')), setup, steps, counters);
    }

    private static byte[] hex(final String[] words)
    {
        final StringBuilder text = new StringBuilder();
        for (int i = 2; i < words.length; i++)
        {
            text.append(words[i]);
        }
        return HexFormat.of().parseHex(text);
    }
}
