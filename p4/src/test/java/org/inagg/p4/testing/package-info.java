/**
 * Test fixtures shared by the p4 module's tests that need the switch's classes: {@code CaptureTransport} (the
 * test-support module's recording transport, with the messages switch tests deliver), the fuzz tests' junk and seeds.
 * Fakes that need only the datapath live in the test-support module ({@code org.inagg.testing}).
 */
package org.inagg.p4.testing;
