package org.inagg.perf.peers;

import java.util.List;

/**
 * Where a peer's processes run and which addresses they use: every rank and the switch on this machine's loopback
 * interface ({@link #LOOPBACK}), or rank r on emulated host r + 1 and the switch in the switch's namespace of an
 * emulated cluster ({@code org.inagg.perf.lab.EmulatedCluster}), where every byte between ranks crosses a
 * rate-limited link.
 */
public interface Placement
{
    /** Every process on this machine's loopback interface. */
    Placement LOOPBACK = new Placement()
    {
        @Override
        public List<String> rankExec(final int rank)
        {
            return List.of();
        }

        @Override
        public String rankAddress(final int rank)
        {
            return "127.0.0.1";
        }

        @Override
        public List<String> switchExec()
        {
            return List.of();
        }

        @Override
        public String switchAddress()
        {
            return "127.0.0.1";
        }

        @Override
        public boolean isLoopback()
        {
            return true;
        }

        @Override
        public java.util.Map<String, String> rankEnvironment()
        {
            return java.util.Map.of();
        }

        @Override
        public String describe()
        {
            return "loopback";
        }
    };

    /** The prefix that runs a command where rank {@code rank} lives (empty: here). */
    List<String> rankExec(int rank);

    /** The IPv4 address rank {@code rank} binds and is reached at. */
    String rankAddress(int rank);

    /** The prefix that runs a command where the switch (or parameter server) lives. */
    List<String> switchExec();

    /** The IPv4 address a switch binds there. */
    String switchAddress();

    /**
     * Environment every rank needs there, beside the peer's own: on an emulated cluster gloo must be told its
     * interface ({@code GLOO_SOCKET_IFNAME=eth0}), or it binds what the machine's host name resolves to.
     */
    java.util.Map<String, String> rankEnvironment();

    /** True when every process shares this machine's loopback interface (ports must then be picked free). */
    boolean isLoopback();

    /** One line for tables and logs ("loopback", "4 hosts, 100 Mbit/s links"). */
    String describe();

    /** {@code prefix + command}. */
    static List<String> prefixed(final List<String> prefix, final List<String> command)
    {
        if (prefix.isEmpty())
        {
            return command;
        }
        final List<String> all = new java.util.ArrayList<>(prefix);
        all.addAll(command);
        return all;
    }
}
