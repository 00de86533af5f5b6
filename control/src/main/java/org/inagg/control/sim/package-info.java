/**
 * The flow-level simulator: flows are {@link org.inagg.control.sim.FlowUnit}s that use shared resources (link
 * directions, switch aggregation capacity, PS ingress) with a coefficient each, rates are max-min fair
 * (progressive filling), and {@link org.inagg.control.sim.FlowSimulator} advances from one completion to the next.
 * An aggregation group is one unit: its members and its stream move in lock-step, as a switch can only emit a sum
 * when every member's share has arrived. Scenarios turn each paper's plan into units.
 */
package org.inagg.control.sim;
