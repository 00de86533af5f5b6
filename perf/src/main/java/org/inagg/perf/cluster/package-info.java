/** A whole job (software switch and workers) in one process, for the CLI's local mode and end-to-end tests. */
package org.inagg.perf.cluster;
