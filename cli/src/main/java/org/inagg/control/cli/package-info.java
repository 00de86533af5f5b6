/**
 * The planners' commands of {@code bin/inagg}: {@code plan} (topology file in, plan file out), {@code simulate}
 * (tables and PNG charts) and {@code deploy} (a plan on software switches, checked against the flat all-reduce).
 */
package org.inagg.control.cli;
