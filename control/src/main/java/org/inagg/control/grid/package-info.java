/**
 * GRID (ToN 2023): for one PS, choose where each worker's gradient is aggregated (a programmable switch or the PS)
 * and on which path, maximising the minimum sending rate under link bandwidth, switch capacity and PS ingress: the
 * LP relaxation, then seeded randomized rounding, best of k draws. Also the baselines it is compared with: no INA,
 * SwitchML's and ATP's nearest-switch rules.
 */
package org.inagg.control.grid;
