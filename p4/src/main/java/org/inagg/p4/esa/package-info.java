/**
 * ESA-style sharing of switch memory (docs/esa.md): one pool of aggregators shared by every job, taken by the first
 * packet of a block and freed as soon as the block's sum leaves, preempted by packets of higher-priority jobs, with a
 * {@link org.inagg.p4.esa.ParameterServer} that finishes whatever the switch could not aggregate (ATP's fallback) and
 * the upper level of two-level jobs. {@link org.inagg.p4.esa.EsaSwitch} and the server are the {@code pipeline}'s node
 * with the strategies {@code EsaAggregation} and {@code ServerAggregation}; {@link org.inagg.p4.esa.EsaWire} is the
 * switch-to-server message; {@code sim} a deterministic virtual-time harness that compares ESA with SwitchML and ATP.
 * Depends on {@code pipeline}, never on {@code softswitch}.
 */
package org.inagg.p4.esa;
