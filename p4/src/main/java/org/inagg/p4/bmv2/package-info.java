/**
 * bmv2 at run time: the control plane's jobs ({@link org.inagg.p4.control.JobSpec},
 * {@link org.inagg.p4.control.EsaJobSpec}) programmed into a running {@code simple_switch} with
 * {@code inagg_v1model.p4}, added and removed without restarting it ({@link org.inagg.p4.bmv2.Bmv2Switch}; the
 * handles bmv2 gave each job's rows kept by {@code InstalledJob}), next to the software switch and the written
 * configurations of {@link org.inagg.p4.control.JobTable}.
 * <p>
 * The pieces, each usable alone: {@link org.inagg.p4.bmv2.P4Toolchain} finds p4c and bmv2 (one variable,
 * {@code INAGG_P4TOOLS}, defaulting to the project's {@code ../shared/p4tools}); {@link org.inagg.p4.bmv2.Bmv2Program}
 * compiles the program from the class path once per source change (a cache keyed by the sources' SHA-256);
 * {@link org.inagg.p4.bmv2.SimpleSwitchProcess} runs a switch as a child process (optionally in a network namespace);
 * {@link org.inagg.p4.bmv2.SimpleSwitchCli} drives {@code simple_switch_CLI}, mapping each answer back to its command,
 * and {@link org.inagg.p4.bmv2.Bmv2CommandException} names the command bmv2 refused and why.
 */
package org.inagg.p4.bmv2;
