/**
 * The software switch as a process ({@code inagg switch}): a context validated once
 * ({@link org.inagg.services.softswitch.SwitchContext}: jobs, their workers' registered sources, the control port,
 * two-level aggregation, the transport) and {@link org.inagg.services.softswitch.SwitchNode#launch}, which opens the
 * transport, installs the jobs and runs {@code p4.softswitch.SoftwareSwitch} (with the control port of
 * {@code services.switchcontrol}) on an agent thread until closed. {@link org.inagg.services.softswitch.Admission} is
 * the rule every switch's static jobs follow. The command in module cli only maps options onto the context (and opens
 * DPDK through the context's transport opener).
 */
package org.inagg.services.softswitch;
