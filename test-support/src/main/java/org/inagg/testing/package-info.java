/**
 * Test fakes shared by the modules above the datapath, used with test scope only: {@link
 * org.inagg.testing.RecordingTransport} (keeps what a node sends, hands it what a test queued, can refuse claims) and
 * {@link org.inagg.testing.HeapNetwork} (endpoints in one thread joined by queues of exact-length byte arrays). The
 * datapath's own tests keep theirs: a module cannot depend on one that depends on it. Fakes that need the switch's
 * classes (the p4 module's {@code CaptureTransport} message builders, gpu's {@code InProcessFabric}) stay beside the
 * tests of their module.
 */
package org.inagg.testing;
