/**
 * Profiles that can be trusted: async-profiler's CPU sampling (perf events, kernel frames included) in every inagg
 * process a benchmark starts, over its steady state ({@link org.inagg.perf.profile.ProfileOptions},
 * {@code org.inagg.services.cli.ProfileWindow}), one flame graph per process, and
 * a summary of where each role's CPU goes ({@link org.inagg.perf.profile.ProfileReport},
 * {@link org.inagg.perf.profile.CpuCategory}). JFR's samples misattributed the worker's time (docs/performance.md).
 */
package org.inagg.perf.profile;
