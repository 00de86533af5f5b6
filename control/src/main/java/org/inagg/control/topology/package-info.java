/**
 * The network a plan is made for: workers, parameter servers and switches joined by full-duplex links,
 * builders for the usual data-centre shapes and the papers' small examples, path enumeration, and the
 * JSON file format a user writes a topology in (documented in {@code control/README.md}).
 */
package org.inagg.control.topology;
