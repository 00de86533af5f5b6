/**
 * A thin layer over ojAlgo's {@code ExpressionsBasedModel}: variables by index, constraints as sparse rows, and a
 * solution that fails loudly when the solver does not prove optimality; and how planning is stopped, by interrupting
 * its thread ({@link org.inagg.control.lp.Cancellation}). No solver is written here.
 */
package org.inagg.control.lp;
