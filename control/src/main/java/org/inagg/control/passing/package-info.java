/**
 * PASSING (2024): the cost model of hybrid in-host plus in-network aggregation against hierarchical ring, flat ring
 * and per-GPU in-network aggregation.
 */
package org.inagg.control.passing;
