/**
 * The routing-with-aggregation model that GRID and InArt share. Every worker sends its gradient, split among the
 * parameter servers, either straight to a PS or to a programmable switch on a path towards it; a switch sums what
 * reaches it into one stream per (switch, PS, upstream path) <em>aggregation group</em>. Links, switch aggregation
 * capacity and PS ingress bound the rates. {@link org.inagg.control.aggregation.AggregationLp} solves the
 * fractional problem with ojAlgo, {@link org.inagg.control.aggregation.RandomizedRounding} turns it into one
 * choice per worker, and {@link org.inagg.control.aggregation.IntegralRouting} evaluates such a choice.
 *
 * <p>Workers behind the same access switch with the same host link (and, for ECMP schemes, the same hash bucket)
 * form a {@link org.inagg.control.aggregation.WorkerClass}: the program is symmetric in them, so the fractional
 * optimum can be taken equal within a class (average any optimum over permutations of the class) and the program
 * has one set of variables per class, not per worker. This is what lets it scale to 10,000 workers.
 */
package org.inagg.control.aggregation;
