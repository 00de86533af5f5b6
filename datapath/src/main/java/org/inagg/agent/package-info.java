/**
 * The counters registry agents report through, with the descriptors of its counters (type id, label, exported name)
 * and their keys; {@code counters} puts a registry in a mapped file and exports it. It depends on no other package of
 * the datapath (the transports count into it; the idle strategies by name live in {@code org.inagg.transport}, as one
 * of them waits on a transport).
 */
package org.inagg.agent;
