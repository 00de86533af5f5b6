/**
 * A timed harness (a main, not a test) for the ESA switch's packet rate on one core: {@link
 * org.inagg.p4.esa.bench.EsaSwitchThroughput}.
 */
package org.inagg.p4.esa.bench;
