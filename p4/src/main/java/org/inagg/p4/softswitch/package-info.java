/**
 * The software switch: {@link org.inagg.p4.softswitch.SoftwareSwitch} is the {@code pipeline}'s node with the slot
 * strategy ({@code SlotAggregation}: worker and slot checks, the {@code SlotPool} register actions, the collectives and
 * MIN/MAX), whose complete rounds go to the workers ({@code ResultMulticast}) or, for a two-level job
 * ({@link org.inagg.p4.softswitch.UpstreamAggregation}), up to the job's parameter server ({@code UpstreamForwarding}).
 * It is the reference the P4 programs' conformance vectors are checked against. Depends on {@code pipeline} and, for
 * the PARTIAL codec of two-level jobs, on {@code esa}'s {@code EsaWire}.
 */
package org.inagg.p4.softswitch;
