package org.inagg.p4.bmv2;

import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What bmv2 answered to one {@code simple_switch_CLI} command: the command, everything the CLI printed for it (between
 * its prompts), and, when bmv2 refused it or it never ran, the error line.
 *
 * @param command the command as sent.
 * @param output  the CLI's output for it (empty if it never ran).
 * @param error   null when it succeeded; else bmv2's error line ({@code Invalid table operation (DUPLICATE_ENTRY)},
 *                {@code Error: ...}, {@code *** Unknown syntax: ...}, the last line of a Python traceback) or why it
 *                never ran.
 */
public record CommandResult(String command, String output, String error)
{
    private static final Pattern ENTRY_HANDLE = Pattern.compile("Entry has been added with handle (\\d+)");
    private static final Pattern NODE_HANDLE = Pattern.compile("node was created with handle (\\d+)");
    private static final Pattern ERROR_CODE = Pattern.compile("^Invalid [\\w ]+ operation \\(([A-Z0-9_]+)\\)$");

    /** True when bmv2 did what the command said. */
    public boolean ok()
    {
        return error == null;
    }

    /** The handle of a {@code table_add}'s entry. */
    public OptionalInt entryHandle()
    {
        return find(ENTRY_HANDLE);
    }

    /** The handle of an {@code mc_node_create}'s node. */
    public OptionalInt nodeHandle()
    {
        return find(NODE_HANDLE);
    }

    private OptionalInt find(final Pattern pattern)
    {
        final Matcher matcher = pattern.matcher(output);
        return matcher.find() ? OptionalInt.of(Integer.parseInt(matcher.group(1))) : OptionalInt.empty();
    }

    /** bmv2's reason: the code of an "Invalid ... operation (CODE)" answer, else the error line less "Error: ". */
    public String reason()
    {
        if (error == null)
        {
            return null;
        }
        final Matcher matcher = ERROR_CODE.matcher(error);
        if (matcher.matches())
        {
            return matcher.group(1);
        }
        return error.startsWith("Error: ") ? error.substring("Error: ".length()) : error;
    }

    /** This refusal as an exception, {@code context} saying what the command was for (or null). */
    public Bmv2CommandException exception(final String context)
    {
        if (error == null)
        {
            throw new IllegalStateException("not refused: " + command);
        }
        return new Bmv2CommandException(command, context, reason(), output);
    }
}
