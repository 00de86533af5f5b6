/**
 * Path-aware multicast (ICC 2025): before each distribution round a PS reserves a multicast tree whose links have
 * the bandwidth it needs, forwards along it with per-hop port bitmaps, and releases it after. Also the baselines:
 * unicast, and multicast on a random shortest-path tree with no reservation.
 */
package org.inagg.control.multicast;
