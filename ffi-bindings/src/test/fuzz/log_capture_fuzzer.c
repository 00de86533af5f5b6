/*
 * libFuzzer harness for the only code of the DPDK shim that copies bytes between buffers of computed lengths:
 * inagg_log_capture_start / inagg_log_capture_stop, which capture EAL's log so that a failed rte_eal_init can report
 * what EAL said (docs/fuzzing.md explains why the shim has no packet parsing or building to fuzz: it only wraps DPDK's
 * inline burst and mbuf functions, and frames are built and parsed in Java).
 *
 * Input: two bytes of capacity (little-endian, 0..65535), then the log text EAL "writes". Invariants, checked by
 * AddressSanitizer and by the asserts below: stop never writes outside the caller's buffer of exactly `capacity`
 * bytes, returns the full length written, and leaves the last capacity-1 bytes of the text, NUL-terminated.
 * Built and run by run.sh in this directory; needs clang (libFuzzer) and DPDK's development files, not a running EAL.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "inagg_dpdk_shim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t capacity = (size_t)data[0] | (size_t)data[1] << 8;
    const uint8_t *text = data + 2;
    size_t length = size - 2;

    int rc = inagg_log_capture_start();
    assert(rc == 0);
    assert(inagg_log_capture_start() != 0); /* a second start while capturing is refused */
    FILE *stream = rte_log_get_stream();
    assert(stream != NULL);
    assert(fwrite(text, 1, length, stream) == length);

    char *buf = capacity > 0 ? malloc(capacity) : NULL;
    size_t captured = inagg_log_capture_stop(buf, capacity);
    assert(captured == length);
    if (capacity > 0) {
        size_t kept = length < capacity - 1 ? length : capacity - 1;
        assert(buf[kept] == '\0');
        assert(memcmp(buf, text + (length - kept), kept) == 0);
    }
    free(buf);
    /* Stopping again without a capture gives an empty string. */
    char empty = 'x';
    assert(inagg_log_capture_stop(&empty, 1) == 0 && empty == '\0');
    return 0;
}
