package org.inagg.gpu;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;

import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
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
        final LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
            .selectors(selectClass(CudaReducerTest.class), selectClass("org.inagg.gpu.passing.CudaPassingTest"),
                selectClass(CpuReducerTest.class), selectClass(ReductionDevicesTest.class),
                selectClass("org.inagg.gpu.passing.PassingAllReduceTest"),
                selectClass("org.inagg.gpu.passing.ExponentAgreementTest"))
            .build();
        final Launcher launcher = LauncherFactory.create();
        final SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(request, listener);
        final PrintWriter out = new PrintWriter(System.out, true);
        listener.getSummary().printTo(out);
        listener.getSummary().printFailuresTo(out, 30);
        final long failed = listener.getSummary().getTotalFailureCount();
        final boolean gpuRan = Boolean.getBoolean("inagg.gpu.tests.require")
            ? listener.getSummary().getTestsAbortedCount() == 0 : true;
        System.exit(failed == 0 && gpuRan ? 0 : 1);
    }
}
