package org.inagg.services.http;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * An attacker's connections that each send the start of a request and then nothing: every one holds a server thread
 * blocked in reading the headers until the server gives up on it.
 */
public final class IdleConnections implements AutoCloseable
{
    private final List<Socket> sockets = new ArrayList<>();

    /** Opens {@code count} connections to {@code server}, each with a partial request. */
    public IdleConnections(final InetSocketAddress server, final int count) throws IOException
    {
        for (int i = 0; i < count; i++)
        {
            final Socket socket = new Socket(server.getAddress(), server.getPort());
            sockets.add(socket);
            final OutputStream out = socket.getOutputStream();
            out.write("GET /v1/jobs HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }
    }

    /**
     * Sends {@code request} until it is answered, within {@code limit}: a request queued behind the idle connections
     * can be closed with them when the server gives up on them all at once; a client's retry then gets through.
     *
     * @throws IOException the last failure, once {@code limit} passed.
     */
    public static <T> T retryWithin(final java.time.Duration limit, final java.util.concurrent.Callable<T> request)
        throws Exception
    {
        final long deadline = System.nanoTime() + limit.toNanos();
        while (true)
        {
            try
            {
                return request.call();
            }
            catch (final IOException ex)
            {
                if (System.nanoTime() - deadline > 0)
                {
                    throw ex;
                }
                Thread.sleep(100);
            }
        }
    }

    @Override
    public void close() throws IOException
    {
        for (final Socket socket : sockets)
        {
            socket.close();
        }
    }
}
