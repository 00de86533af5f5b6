package org.inagg.services.cli;

import java.net.InetSocketAddress;

/** Parses {@code host:port} arguments with errors that say what was wrong. */
final class Addresses
{
    private Addresses()
    {
    }

    static InetSocketAddress parse(final String option, final String text)
    {
        final int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1)
        {
            throw new IllegalArgumentException(option + " wants host:port, got '" + text + "'");
        }
        final int port;
        try
        {
            port = Integer.parseInt(text.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(option + ": port of '" + text + "' is not a number");
        }
        if (port < 0 || port > 65535)
        {
            throw new IllegalArgumentException(option + ": port " + port + " is out of range");
        }
        final InetSocketAddress address = new InetSocketAddress(text.substring(0, colon), port);
        if (address.isUnresolved())
        {
            throw new IllegalArgumentException(option + ": cannot resolve host '" + text.substring(0, colon) + "'");
        }
        return address;
    }
}
