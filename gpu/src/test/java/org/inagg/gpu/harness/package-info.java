/**
 * Test and benchmark harness: a software switch with several jobs over in-process rings ({@code InProcessFabric}) and
 * one thread per simulated host ({@code Hosts}). Built on inagg-p4 and the datapath only, never on inagg-perf.
 */
package org.inagg.gpu.harness;
