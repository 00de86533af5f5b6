package org.inagg.gpu;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.util.List;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * Runs the module's tests without Maven, for a CUDA machine that has only a Java runtime: the bundle built by
 * {@code gpu/scripts/gpu-bundle.sh} calls it with {@code -Dinagg.gpu.tests.require=true}, so a missing GPU fails
 * instead of skipping. Exit status 0 only if every test passed and none failed or was skipped by an abort.
 */
public final class GpuTestMain
{
    private GpuTestMain()
    {
    }

    public static void main(final String[] args)
    {
        final List<String> classes = args.length > 0 ? List.of(args) : List.of(CudaReducerTest.class.getName(),
            "org.inagg.gpu.passing.CudaPassingTest", CpuReducerTest.class.getName(),
            ReductionDevicesTest.class.getName(), "org.inagg.gpu.passing.PassingAllReduceTest",
            "org.inagg.gpu.passing.ExponentAgreementTest");
        final LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
            .selectors(classes.stream().map(c -> selectClass(c.startsWith("org.") ? c : "org.inagg.gpu." + c)).toList())
            .build();
        final Launcher launcher = LauncherFactory.create();
        final SummaryGeneratingListener listener = new SummaryGeneratingListener();
        final Progress progress = new Progress();
        launcher.execute(request, listener, progress);
        final PrintWriter out = new PrintWriter(System.out, true);
        listener.getSummary().printTo(out);
        listener.getSummary().printFailuresTo(out, 30);
        final long failed = listener.getSummary().getTotalFailureCount();
        // Tests of the no-GPU fallback (ReductionDevicesTest) abort where a GPU is present; a CUDA test that aborts
        // means the GPU was not usable.
        final boolean gpuRan = !Boolean.getBoolean("inagg.gpu.tests.require") || progress.cudaAborted == 0;
        if (!gpuRan)
        {
            out.println("[inagg-gpu] " + progress.cudaAborted + " CUDA test(s) aborted: no usable GPU");
        }
        System.exit(failed == 0 && gpuRan ? 0 : 1);
    }

    /** One line per finished test, as it finishes, so a slow or stuck test shows where it is. */
    private static final class Progress implements TestExecutionListener
    {
        private final java.util.Map<String, Long> started = new java.util.concurrent.ConcurrentHashMap<>();
        private int cudaAborted;

        @Override
        public void executionStarted(final TestIdentifier test)
        {
            started.put(test.getUniqueId(), System.nanoTime());
        }

        @Override
        public void executionFinished(final TestIdentifier test, final TestExecutionResult result)
        {
            if (test.isTest())
            {
                final long ms = (System.nanoTime() - started.getOrDefault(test.getUniqueId(), System.nanoTime()))
                    / 1_000_000;
                final String type = test.getSource().filter(MethodSource.class::isInstance)
                    .map(source -> ((MethodSource)source).getJavaClass().getSimpleName()).orElse("?");
                System.out.printf("[inagg-gpu] %-10s %s.%s (%d ms)%n", result.getStatus(), type, test.getDisplayName(),
                    ms);
                if (result.getStatus() == TestExecutionResult.Status.ABORTED && type.startsWith("Cuda"))
                {
                    cudaAborted++;
                }
            }
        }
    }
}
