package org.inagg.p4.bmv2;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What one job holds on a running bmv2 switch, by the handles bmv2 answered, in the order they were made: table
 * entries, multicast groups, nodes and their associations. bmv2 numbers entries and nodes itself, reusing freed
 * numbers, so every handle is parsed from its answer and kept; {@link #install} runs a job's rows (each
 * {@code mc_node_associate} rewritten with the handle bmv2 gave the node, the job table row last) and
 * {@link #teardown()} gives the commands that remove them (the job table row first). Used by {@link Bmv2Switch},
 * which guards it.
 */
final class InstalledJob
{
    /** A table entry bmv2 added, by its handle. */
    private record Entry(String table, int handle)
    {
    }

    private final List<Entry> entries = new ArrayList<>();
    private final List<Integer> groups = new ArrayList<>();
    /** Handles of the job's nodes in creation order; null where bmv2 refused the node. */
    private final List<Integer> nodes = new ArrayList<>();
    /** (group, node handle) pairs associated. */
    private final List<int[]> associations = new ArrayList<>();

    private InstalledJob()
    {
    }

    /**
     * Runs a job's rows: everything but the associations and the job table row, then (with the node handles bmv2
     * answered) the associations and the job table row. A refusal undoes what was added.
     *
     * @throws Bmv2CommandException naming the first refused command and {@code context}.
     */
    static InstalledJob install(final SimpleSwitchCli cli, final List<String> rows, final String context)
    {
        final List<String> first = new ArrayList<>();
        final List<String> last = new ArrayList<>();
        for (final String row : rows)
        {
            if (row.startsWith("mc_node_associate ") || row.startsWith("table_add " + Bmv2Switch.JOB_TABLE + " "))
            {
                last.add(row);
            }
            else
            {
                first.add(row);
            }
        }
        final InstalledJob job = new InstalledJob();
        CommandResult refused = job.record(cli.runAll(first));
        if (refused == null)
        {
            final List<String> second = new ArrayList<>(last.size());
            for (final String row : last)
            {
                second.add(row.startsWith("mc_node_associate ") ? job.withNodeHandle(row) : row);
            }
            refused = job.record(cli.runAll(second));
        }
        if (refused != null)
        {
            final Bmv2CommandException ex = refused.exception(context);
            try
            {
                cli.runAll(job.teardown());
            }
            catch (final RuntimeException undo)
            {
                ex.addSuppressed(undo);
            }
            throw ex;
        }
        return job;
    }

    /** {@code mc_node_associate G k} with k the job's k-th node: the handle bmv2 gave that node. */
    private String withNodeHandle(final String row)
    {
        final String[] words = row.split(" ");
        final int node = Integer.parseInt(words[2]);
        if (node >= nodes.size() || nodes.get(node) == null)
        {
            throw new IllegalStateException("'" + row + "' names node " + node + " of " + nodes.size());
        }
        return words[0] + " " + words[1] + " " + nodes.get(node);
    }

    /** Keeps what each successful command made; the first refused command, or null. */
    private CommandResult record(final List<CommandResult> results)
    {
        CommandResult refused = null;
        for (final CommandResult result : results)
        {
            final String[] words = result.command().split(" ");
            if (!result.ok())
            {
                refused = refused == null ? result : refused;
                if ("mc_node_create".equals(words[0]))
                {
                    nodes.add(null);
                }
                continue;
            }
            switch (words[0])
            {
                case "table_add" -> entries.add(new Entry(words[1], result.entryHandle().orElseThrow(
                    () -> new Bmv2Exception("no entry handle in the answer to " + result.command() + ": "
                        + result.output().strip()))));
                case "mc_mgrp_create" -> groups.add(Integer.parseInt(words[1]));
                case "mc_node_create" -> nodes.add(result.nodeHandle().orElseThrow(
                    () -> new Bmv2Exception("no node handle in the answer to " + result.command() + ": "
                        + result.output().strip())));
                case "mc_node_associate" ->
                    associations.add(new int[] {Integer.parseInt(words[1]), Integer.parseInt(words[2])});
                default ->
                {
                }
            }
        }
        return refused;
    }

    /** Commands that remove what the job holds: job table row first, then the other rows, nodes, groups. */
    List<String> teardown()
    {
        final List<String> commands = new ArrayList<>();
        final List<Entry> sorted = new ArrayList<>(entries);
        // stable: the job table row first, the others in the order they were made
        sorted.sort(Comparator.comparing(entry -> !Bmv2Switch.JOB_TABLE.equals(entry.table())));
        for (final Entry entry : sorted)
        {
            commands.add("table_delete " + entry.table() + " " + entry.handle());
        }
        for (final int[] association : associations)
        {
            commands.add("mc_node_dissociate " + association[0] + " " + association[1]);
        }
        for (final Integer node : nodes)
        {
            if (node != null)
            {
                commands.add("mc_node_destroy " + node);
            }
        }
        for (final int group : groups)
        {
            commands.add("mc_mgrp_destroy " + group);
        }
        return commands;
    }
}
