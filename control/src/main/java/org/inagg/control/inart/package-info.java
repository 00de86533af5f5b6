/**
 * InArt (WebConf 2024): several parameter servers. Phase 1 splits the model among them; phase 2 picks aggregation
 * switches and paths by LP relaxation and randomized rounding (the engine of
 * {@link org.inagg.control.aggregation}).
 */
package org.inagg.control.inart;
