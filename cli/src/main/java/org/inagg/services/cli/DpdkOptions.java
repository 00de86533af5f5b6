package org.inagg.services.cli;

import java.util.ArrayList;
import java.util.List;

import picocli.CommandLine.Option;

/** The EAL and device options of {@code --transport dpdk}, shared by the switch and worker commands. */
final class DpdkOptions
{
    @Option(names = "--eal-args", defaultValue = "",
        description = "Further EAL arguments, space separated, e.g. \"--no-huge -m 512 --no-pci\" (tests, VMs) or "
            + "\"-a 0000:3b:00.0\" (a NIC bound to vfio-pci).")
    String ealArgs;

    @Option(names = "--vdev", description = "An EAL virtual device, e.g. net_memif0,role=client,socket=/tmp/m.sock; "
        + "repeatable.")
    List<String> vdevs = new ArrayList<>();

    @Option(names = "--lcores", defaultValue = "0", description = "EAL -l: lcores (default ${DEFAULT-VALUE}).")
    String lcores;

    @Option(names = "--file-prefix", description = "EAL --file-prefix, distinct per DPDK process on a host "
        + "(default inagg-<role>-<pid>).")
    String filePrefix;

    @Option(names = "--port", description = "A DPDK port (device name such as net_memif0 or 0000:3b:00.0, or a port "
        + "id), optionally @QUEUE; repeatable: one link per port (a switch over point-to-point devices has one per "
        + "worker).")
    List<String> ports = new ArrayList<>();

    @Option(names = "--local-mac", description = "MAC address frames are sent from, e.g. 02:00:00:00:00:01.")
    String localMac;

    @Option(names = "--local-ip", description = "IPv4 address frames are sent from and must be sent to.")
    String localIp;

    @Option(names = "--udp-port", defaultValue = "9000", description = "Local UDP port (default ${DEFAULT-VALUE}).")
    int udpPort;

    @Option(names = "--peer", description = "A peer as MAC/IP:PORT[@LINK], numbered from 0 in order (a worker's "
        + "first peer is its switch); a switch learns its workers, or registers them with --source. Repeatable.")
    List<String> peers = new ArrayList<>();

    @Option(names = "--mbufs", defaultValue = "8191", description = "Mbufs in the pool (default ${DEFAULT-VALUE}).")
    int mbufs;

    @Option(names = "--burst", defaultValue = "32", description = "Frames per rx/tx burst (default ${DEFAULT-VALUE}).")
    int burst;

    @Option(names = "--link-timeout-ms", defaultValue = "30000",
        description = "How long a worker waits for its links to come up (default ${DEFAULT-VALUE}).")
    long linkTimeoutMs;

    /** Whether a {@code --transport} value asks for DPDK; throws for anything but udp and dpdk. */
    static boolean isDpdk(final String transport)
    {
        return switch (transport.toLowerCase(java.util.Locale.ROOT))
        {
            case "dpdk" -> true;
            case "udp" -> false;
            default -> throw new IllegalArgumentException("--transport is udp or dpdk, got '" + transport + "'");
        };
    }
}
