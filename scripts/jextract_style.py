#!/usr/bin/env python3
"""Writes the org.inagg.ffi.dpdk.extr bindings in jextract's output shape.

jextract (https://jdk.java.net/jextract/) cannot be installed from Maven Central or apt, so the
committed bindings come from this script; regenerate-bindings.sh runs the real jextract instead
when it is on PATH. Inputs:
  * the shim header (every prototype, one per line; the '/* ---- fast path' section is bound
    with Linker.Option.critical(false)),
  * DPDK_FUNCTIONS below: the DPDK 22.11 functions the hand-written API calls, copied from
    /usr/include/dpdk (BindingsMatchHeaderTest checks them against those headers when present).
Usage: jextract_style.py <shim header> <output dir for org/inagg/ffi/dpdk/extr>
"""
import re
import sys
from pathlib import Path

DPDK_FUNCTIONS = """
int rte_eal_init(int argc, char **argv);
int rte_eal_cleanup(void);
const char *rte_strerror(int errnum);
unsigned int rte_lcore_count(void);
unsigned int rte_socket_id(void);
int rte_dev_probe(const char *devargs);
struct rte_mempool *rte_pktmbuf_pool_create(const char *name, unsigned int n, unsigned int cache_size, uint16_t priv_size, uint16_t data_room_size, int socket_id);
void rte_mempool_free(struct rte_mempool *mp);
unsigned int rte_mempool_avail_count(const struct rte_mempool *mp);
unsigned int rte_mempool_in_use_count(const struct rte_mempool *mp);
uint16_t rte_eth_dev_count_avail(void);
int rte_eth_dev_get_port_by_name(const char *name, uint16_t *port_id);
int rte_eth_dev_get_name_by_port(uint16_t port_id, char *name);
int rte_eth_dev_socket_id(uint16_t port_id);
int rte_eth_dev_configure(uint16_t port_id, uint16_t nb_rx_queue, uint16_t nb_tx_queue, const struct rte_eth_conf *eth_conf);
int rte_eth_rx_queue_setup(uint16_t port_id, uint16_t rx_queue_id, uint16_t nb_rx_desc, unsigned int socket_id, const struct rte_eth_rxconf *rx_conf, struct rte_mempool *mb_pool);
int rte_eth_tx_queue_setup(uint16_t port_id, uint16_t tx_queue_id, uint16_t nb_tx_desc, unsigned int socket_id, const struct rte_eth_txconf *tx_conf);
int rte_eth_dev_start(uint16_t port_id);
int rte_eth_dev_stop(uint16_t port_id);
int rte_eth_dev_close(uint16_t port_id);
int rte_eth_promiscuous_enable(uint16_t port_id);
int rte_eth_stats_reset(uint16_t port_id);
"""

PROTO = re.compile(r'^\s*(?P<ret>[\w\s\*]+?)\s*(?P<name>\w+)\s*\((?P<params>[^)]*)\)\s*;')

LAYOUT = {'int': 'C_INT', 'unsigned int': 'C_INT', 'uint32_t': 'C_INT', 'uint16_t': 'C_SHORT',
          'uint64_t': 'C_LONG', 'size_t': 'C_LONG'}
CARRIER = {'C_INT': 'int', 'C_SHORT': 'short', 'C_LONG': 'long', 'C_POINTER': 'MemorySegment'}


def c_type(decl):
    decl = decl.replace('const ', '').strip()
    if '*' in decl:
        return 'C_POINTER'
    decl = re.sub(r'\bstruct\s+\w+', '', decl).strip()
    if decl not in LAYOUT:
        raise SystemExit(f'unmapped C type: {decl!r}')
    return LAYOUT[decl]


def parse(text, critical_after=None):
    functions = []
    critical = False
    for line in text.splitlines():
        if critical_after and critical_after in line:
            critical = True
        elif line.strip().startswith('/* ----'):
            critical = False
        m = PROTO.match(line)
        if not m or line.lstrip().startswith(('#', '/*', '*')):
            continue
        ret = m.group('ret').strip()
        params = []
        for p in [p.strip() for p in m.group('params').split(',')]:
            if p == 'void' or not p:
                continue
            pm = re.match(r'(.*?)(\w+)$', p)
            params.append((c_type(pm.group(1) if pm.group(1).strip() else p), pm.group(2)))
        functions.append({'name': m.group('name'),
                          'ret': None if ret == 'void' else c_type(ret),
                          'params': params, 'critical': critical,
                          'proto': ' '.join(line.split())})
    return functions


def emit_function(cls, f):
    name = f['name']
    args = ',\n            '.join(f'{cls}.{t}' for t, _ in f['params'])
    if f['ret']:
        desc = f'FunctionDescriptor.of(\n            {cls}.{f["ret"]}' + (f',\n            {args}' if args else '') + '\n        )'
    else:
        desc = 'FunctionDescriptor.ofVoid(' + (f'\n            {args}\n        ' if args else '') + ')'
    link = f'Linker.nativeLinker().downcallHandle(ADDR, DESC{", Linker.Option.critical(false)" if f["critical"] else ""})'
    jret = CARRIER[f['ret']] if f['ret'] else 'void'
    jparams = ', '.join(f'{CARRIER[t]} {n}' for t, n in f['params'])
    names = ', '.join(n for _, n in f['params'])
    call = f'mh$.invokeExact({names})'
    body = f'return ({jret}){call};' if f['ret'] else f'{call};'
    trace = f'traceDowncall("{name}"' + (f', {names}' if names else '') + ')'
    return f'''
    private static class {name} {{
        public static final FunctionDescriptor DESC = {desc};

        public static final MemorySegment ADDR = {cls}.findOrThrow("{name}");

        public static final MethodHandle HANDLE = {link};
    }}

    /**
     * Function descriptor for:
     * {{@snippet lang=c :
     * {f['proto']}
     * }}
     */
    public static FunctionDescriptor {name}$descriptor() {{
        return {name}.DESC;
    }}

    /**
     * Downcall method handle for:
     * {{@snippet lang=c :
     * {f['proto']}
     * }}
     */
    public static MethodHandle {name}$handle() {{
        return {name}.HANDLE;
    }}

    /**
     * Address for:
     * {{@snippet lang=c :
     * {f['proto']}
     * }}
     */
    public static MemorySegment {name}$address() {{
        return {name}.ADDR;
    }}

    /**
     * {{@snippet lang=c :
     * {f['proto']}
     * }}
     */
    public static {jret} {name}({jparams}) {{
        var mh$ = {name}.HANDLE;
        try {{
            if (TRACE_DOWNCALLS) {{
                {trace};
            }}
            {body}
        }} catch (Error | RuntimeException ex) {{
           throw ex;
        }} catch (Throwable ex$) {{
           throw new AssertionError("should not reach here", ex$);
        }}
    }}
'''


def emit_class(cls, source, functions):
    out = [f'''// Generated by jextract-style script; do not edit.
// Source: {source}. Regenerate with scripts/regenerate-bindings.sh.

package org.inagg.ffi.dpdk.extr;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Bindings for {source}. The library must already be loaded into this class loader
 * (org.inagg.ffi.dpdk.NativeLibraryLoader does that); symbols resolve through the loader lookup.
 */
@SuppressWarnings({{"unused", "restricted"}}) // restricted: FFM linking is what this class is for
public final class {cls} {{

    {cls}() {{
        // Should not be called directly
    }}

    static final SymbolLookup SYMBOL_LOOKUP = SymbolLookup.loaderLookup()
            .or(Linker.nativeLinker().defaultLookup());

    static final boolean TRACE_DOWNCALLS = Boolean.getBoolean("jextract.trace.downcalls");

    static void traceDowncall(String name, Object... args) {{
         String traceArgs = Arrays.stream(args)
                       .map(Object::toString)
                       .collect(Collectors.joining(", "));
         System.out.printf("%s(%s)\\n", name, traceArgs);
    }}

    static MemorySegment findOrThrow(String symbol) {{
        return SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol));
    }}

    public static final ValueLayout.OfBoolean C_BOOL = ValueLayout.JAVA_BOOLEAN;
    public static final ValueLayout.OfByte C_CHAR = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort C_SHORT = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG_LONG = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfFloat C_FLOAT = ValueLayout.JAVA_FLOAT;
    public static final ValueLayout.OfDouble C_DOUBLE = ValueLayout.JAVA_DOUBLE;
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, ValueLayout.JAVA_BYTE));
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;
''']
    for f in functions:
        out.append(emit_function(cls, f))
    out.append('}\n')
    return ''.join(out)


def main():
    header, outdir = Path(sys.argv[1]), Path(sys.argv[2])
    outdir.mkdir(parents=True, exist_ok=True)
    shim = parse(header.read_text(), critical_after='/* ---- fast path')
    (outdir / 'inagg_dpdk_shim_h.java').write_text(emit_class('inagg_dpdk_shim_h', 'inagg_dpdk_shim.h', shim))
    dpdk = parse(DPDK_FUNCTIONS)
    (outdir / 'dpdk_h.java').write_text(emit_class('dpdk_h', 'DPDK 22.11 headers (rte_eal.h, rte_errno.h, rte_lcore.h, rte_dev.h, rte_mbuf.h, rte_mempool.h, rte_ethdev.h)', dpdk))
    print(f'wrote {len(shim)} shim and {len(dpdk)} DPDK bindings to {outdir}')


if __name__ == '__main__':
    main()
