/**
 * Generated, jextract-shaped FFM bindings: {@code inagg_dpdk_shim_h} for the C shim (every function of
 * {@code src/main/c/inagg_dpdk_shim.h}; the fast-path ones linked with {@code Linker.Option.critical(false)}) and
 * {@code dpdk_h} for the DPDK 22.11 functions the hand-written API calls. Do not edit: regenerate with
 * {@code scripts/regenerate-bindings.sh}. Hand-written code lives in {@code org.inagg.ffi.dpdk}.
 */
package org.inagg.ffi.dpdk.extr;
