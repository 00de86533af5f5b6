/** Shared duty-cycle plumbing: idle strategies by name and the counters registry agents report through. */
package org.inagg.agent;
