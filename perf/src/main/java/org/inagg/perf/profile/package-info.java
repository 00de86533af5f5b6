/**
 * Profiles that can be trusted: async-profiler's CPU sampling (perf events, kernel frames included) loaded into every
 * inagg process a benchmark starts ({@link org.inagg.perf.profile.AsyncProfilerAgent}), one flame graph per process, and
 * a summary of where each role's CPU goes ({@link org.inagg.perf.profile.ProfileReport},
 * {@link org.inagg.perf.profile.CpuCategory}). JFR's samples misattributed the worker's time (docs/performance.md).
 */
package org.inagg.perf.profile;
