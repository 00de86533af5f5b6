/**
 * The inagg wire format: the header codec (drawn in {@link org.inagg.wire.InaggHeader}), message types and the checks a
 * receiver applies before trusting a message. Everything here reads and writes in place, without allocation.
 */
package org.inagg.wire;
