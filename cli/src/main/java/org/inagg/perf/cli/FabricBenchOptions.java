package org.inagg.perf.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.inagg.control.topology.Topology;
import org.inagg.perf.lab.LinkRate;
import org.inagg.perf.lab.TopologyFabric;
import picocli.CommandLine.Option;

/**
 * What the benchmarks on a routed fabric of a topology file ({@code bench-plans}, {@code bench-multicast}) share: the
 * file, its scale, the tensor, the timed and untimed all-reduces, the links' queue and the workers' extra options.
 */
final class FabricBenchOptions
{
    @Option(names = "--topology", required = true, description = "Topology file (control/README.md).")
    Path topologyFile;

    @Option(names = "--per-gbps", defaultValue = "10mbit", paramLabel = "RATE",
        description = "The emulated rate of one Gb/s of the file (default ${DEFAULT-VALUE}).")
    String perGbps;

    @Option(names = {"-n", "--elements"}, defaultValue = "262144",
        description = "float32 per worker (default ${DEFAULT-VALUE}).")
    int elements;

    @Option(names = {"-i", "--iterations"}, defaultValue = "5", description = "Timed all-reduces (default 5).")
    int iterations;

    @Option(names = "--warmup", defaultValue = "2", description = "Untimed all-reduces first (default 2).")
    int warmup;

    @Option(names = "--queue-ms", defaultValue = "20", description = "Each link's queue (default 20 ms).")
    int queueMs;

    @Option(names = "--worker-option", description = "Extra option of every inagg worker (repeatable).")
    List<String> workerOptions = new ArrayList<>();

    /** @throws IllegalArgumentException naming the file and what is wrong with it. */
    Topology topology()
    {
        return TopologyFabric.read(topologyFile);
    }

    /** @throws IllegalArgumentException for a rate that is not one. */
    LinkRate rate()
    {
        return LinkRate.parse(perGbps);
    }
}
