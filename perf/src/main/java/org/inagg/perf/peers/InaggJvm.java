package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The command line of a child {@code inagg} JVM: this JVM's runtime and class path, the options bin/inagg passes
 * (the serial collector unless the extra options pick one). */
public final class InaggJvm
{
    private static final List<String> JVM_OPTIONS = List.of("--add-modules", "jdk.incubator.vector",
        "--enable-native-access=ALL-UNNAMED", "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED");

    private InaggJvm()
    {
    }

    /** {@code java [options] [extra] -cp CLASSPATH org.inagg.perf.cli.InaggCli args...}. */
    public static List<String> command(final List<String> extraJvmOptions, final List<String> args)
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        if (extraJvmOptions.stream().noneMatch(option -> option.matches("-XX:\\+Use\\w*GC")))
        {
            command.add("-XX:+UseSerialGC"); // as bin/inagg: small heaps, nothing allocated per packet
        }
        command.addAll(extraJvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.inagg.perf.cli.InaggCli"));
        command.addAll(args);
        return command;
    }
}
