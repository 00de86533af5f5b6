/**
 * Fixed-point conversion between float tensors and the int32 lanes the switch adds: per-block exponents, the shift
 * that keeps a W-worker sum from overflowing ({@link org.inagg.fixedpoint.FixedPoint}), and scalar and Vector API
 * converters with bit-identical output.
 */
package org.inagg.fixedpoint;
