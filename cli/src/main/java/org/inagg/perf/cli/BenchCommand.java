package org.inagg.perf.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code inagg bench}: the JMH benchmarks of the perf module, with JMH's own options. */
@Command(
    name = "bench",
    description = "Run the JMH benchmarks (codec, fixed point with a memory-copy baseline, switch aggregation). "
        + "Arguments go to JMH, e.g. 'bench FixedPoint -f 1 -wi 3 -i 5'; 'bench -h' lists JMH's options.")
final class BenchCommand implements Callable<Integer>
{
    @Parameters(arity = "0..*", description = "JMH arguments (benchmark regexps and options).")
    private List<String> jmhArguments = new ArrayList<>();

    @picocli.CommandLine.Unmatched
    private List<String> unmatched = new ArrayList<>();

    @Override
    public Integer call() throws Exception
    {
        final List<String> arguments = new ArrayList<>(jmhArguments);
        arguments.addAll(unmatched);
        org.openjdk.jmh.Main.main(arguments.toArray(String[]::new));
        return 0;
    }
}
