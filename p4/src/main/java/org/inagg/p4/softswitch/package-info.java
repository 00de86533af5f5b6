/**
 * The software switch: {@link org.inagg.p4.softswitch.SoftwareSwitch} runs the P4 programs' pipeline (job table,
 * worker and slot checks, the {@code SlotPool} register actions, completion multicast and retransmission replies) over
 * any transport, and is the reference the P4 programs' conformance vectors are checked against.
 */
package org.inagg.p4.softswitch;
