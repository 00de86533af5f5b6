/**
 * inagg: in-network aggregation of gradients. The data flow is tensor (api) → fixed point (fixedpoint) → worker slot
 * protocol (protocol) → transport (transport) → switch (module p4) → back the same way. This package holds the errors
 * every layer reports.
 */
package org.inagg;
