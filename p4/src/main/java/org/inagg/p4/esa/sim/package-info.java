/**
 * A deterministic, single-threaded, virtual-time harness for the shared-pool experiments of docs/esa.md: a star network
 * of links with a rate and a propagation delay ({@link org.inagg.p4.esa.sim.VirtualNetwork}), scripted workers that
 * stream int32 blocks through a window and check every result against the exact int sum
 * ({@link org.inagg.p4.esa.sim.ScriptedWorker}), and {@link org.inagg.p4.esa.sim.EsaExperiment}, which runs the same
 * jobs over ESA, ATP and SwitchML's static partition (the real {@code SoftwareSwitch}). The switch and the server are
 * the production classes, driven through their {@code MessageHandler}s.
 */
package org.inagg.p4.esa.sim;
