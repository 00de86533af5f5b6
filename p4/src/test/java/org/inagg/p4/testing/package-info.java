/** Test fixtures shared by the p4 module's tests: a transport that records what a switch sends. */
package org.inagg.p4.testing;
