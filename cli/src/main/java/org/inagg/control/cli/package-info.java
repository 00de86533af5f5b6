/** The command line: {@code plan} (topology file in, plan file out) and {@code simulate} (tables and PNG charts). */
package org.inagg.control.cli;
