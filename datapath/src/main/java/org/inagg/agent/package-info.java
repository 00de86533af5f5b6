/**
 * Shared duty-cycle plumbing: idle strategies by name and the counters registry agents report through, with the
 * descriptors of its counters (type id, label, exported name) and their keys; {@code counters} puts a registry in a
 * mapped file and exports it.
 */
package org.inagg.agent;
