/**
 * The parameter server of two-level aggregation as a process ({@code inagg ps}): a context validated once
 * ({@link org.inagg.services.ps.ParameterServerContext}) and {@link org.inagg.services.ps.ParameterServerNode#launch},
 * which opens its UDP port and runs {@code p4.esa.ParameterServer} on an agent thread until closed (through
 * {@link org.inagg.services.NodeLifecycle}: the thread, then the counters; a failed launch closes what it opened). The
 * command in module cli only maps options onto the context.
 */
package org.inagg.services.ps;
