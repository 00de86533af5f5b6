package org.inagg.control.esa;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/** The comparisons the ESA paper makes, on a mix of jobs of different sizes arriving over time. */
public final class EsaScenarios {

    private EsaScenarios() {
    }

    /**
     * {@code jobCount} jobs with 8 to 64 workers, 200 to 2000 chunks per iteration, 5 iterations, arriving
     * within the first 2000 ticks.
     */
    public static List<EsaJob> mixedJobs(int jobCount, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<EsaJob> jobs = new ArrayList<>();
        for (int j = 0; j < jobCount; j++) {
            jobs.add(new EsaJob(8 << random.nextInt(4), 200 + random.nextInt(1801), 5, 200 + random.nextInt(400),
                random.nextInt(2000)));
        }
        return jobs;
    }

    /** Every policy on the same jobs and switch. */
    public static Map<AllocationPolicy, ContentionResult> compare(ContentionSettings settings, List<EsaJob> jobs) {
        Map<AllocationPolicy, ContentionResult> results = new EnumMap<>(AllocationPolicy.class);
        for (AllocationPolicy policy : AllocationPolicy.values()) {
            results.put(policy, MemoryContentionSimulator.run(policy, settings, jobs));
        }
        return results;
    }
}
