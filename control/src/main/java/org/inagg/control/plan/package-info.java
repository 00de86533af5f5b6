/**
 * The plan: what the rest of inagg reads. For every worker and PS, where its share is aggregated (a switch or the
 * PS) and the path to it; for every switch, its job table (one entry per aggregation group: how many contributions
 * to expect, from whom, where the sum goes); the multicast trees as per-hop port bitmaps. Serialised as JSON,
 * format in {@code control/README.md}.
 */
package org.inagg.control.plan;
