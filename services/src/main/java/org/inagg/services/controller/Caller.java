package org.inagg.services.controller;

import java.net.InetAddress;

/**
 * Who sends a request, as far as the controller can tell: whether it showed the operator's token, the job secret it
 * showed (or null), and the IP address its HTTP connection comes from.
 *
 * @param operator  the request carried the operator's token: it may act on every job.
 * @param jobSecret the {@link JobSecret#HEADER} value, well-formed, or null.
 * @param address   the remote IP address of the HTTP connection.
 */
record Caller(boolean operator, String jobSecret, InetAddress address)
{
    /** An operator on this host (tests, embedding code). */
    static Caller embedded()
    {
        return new Caller(true, null, InetAddress.getLoopbackAddress());
    }
}
