package org.inagg.services.cli;

import java.io.PrintStream;

/**
 * A one-line progress bar on a terminal (redrawn with carriage returns), or a line every 10% when the output is a
 * file or a CI log.
 */
public final class ProgressBar
{
    private static final int WIDTH = 30;

    private final PrintStream out;
    private final boolean interactive;
    private final boolean enabled;
    private final long total;
    private int lastDecile = -1;

    public ProgressBar(final PrintStream out, final long total, final boolean enabled)
    {
        this.out = out;
        this.total = total;
        this.enabled = enabled;
        this.interactive = System.console() != null;
    }

    public void update(final long done, final String detail)
    {
        if (!enabled)
        {
            return;
        }
        final double fraction = total == 0 ? 1 : (double)done / total;
        final int filled = (int)Math.round(fraction * WIDTH);
        final String line = String.format("[%s%s] %3.0f%% %d/%d %s", "#".repeat(filled), ".".repeat(WIDTH - filled),
            fraction * 100, done, total, detail);
        if (interactive)
        {
            out.print("\r" + line);
            if (done == total)
            {
                out.println();
            }
        }
        else
        {
            final int decile = (int)(fraction * 10);
            if (decile != lastDecile)
            {
                lastDecile = decile;
                out.println(line);
            }
        }
        out.flush();
    }
}
