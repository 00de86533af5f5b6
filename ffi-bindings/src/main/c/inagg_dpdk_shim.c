/*
 * Exported wrappers around DPDK's static inline fast path. Each is a single call or
 * field access; built with -O3 so the wrapper costs one call/return on top of DPDK.
 */
#define _GNU_SOURCE
#include "inagg_dpdk_shim.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define INAGG_EXPORT __attribute__((visibility("default")))

INAGG_EXPORT uint16_t inagg_rx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **rx_pkts, uint16_t nb_pkts)
{
    return rte_eth_rx_burst(port_id, queue_id, rx_pkts, nb_pkts);
}

INAGG_EXPORT uint16_t inagg_tx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
    return rte_eth_tx_burst(port_id, queue_id, tx_pkts, nb_pkts);
}

/* testpmd's io-mode step: send, then free what the queue did not take. Returns the number sent. */
INAGG_EXPORT uint16_t inagg_tx_burst_free_unsent(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
    uint16_t sent = rte_eth_tx_burst(port_id, queue_id, tx_pkts, nb_pkts);
    if (unlikely(sent < nb_pkts))
        rte_pktmbuf_free_bulk(&tx_pkts[sent], nb_pkts - sent);
    return sent;
}

INAGG_EXPORT struct rte_mbuf *inagg_pktmbuf_alloc(struct rte_mempool *mp)
{
    return rte_pktmbuf_alloc(mp);
}

INAGG_EXPORT int inagg_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs, uint32_t count)
{
    return rte_pktmbuf_alloc_bulk(mp, mbufs, count);
}

/*
 * rte_mempool_get_bulk without rte_pktmbuf_reset: mbufs come as freeing left them (next NULL, nb_segs 1, refcnt 1)
 * and the caller sets data_off, lengths and flags in the same pass that writes the packet, as testpmd's txonly does.
 * Measured on net_null this is about twice as fast as alloc_bulk followed by a second pass over the mbufs.
 */
INAGG_EXPORT int inagg_mbuf_raw_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs, uint32_t count)
{
    return rte_mempool_get_bulk(mp, (void **)mbufs, count);
}

INAGG_EXPORT void inagg_pktmbuf_free(struct rte_mbuf *m)
{
    rte_pktmbuf_free(m);
}

INAGG_EXPORT void inagg_pktmbuf_free_bulk(struct rte_mbuf **mbufs, uint32_t count)
{
    rte_pktmbuf_free_bulk(mbufs, count);
}

INAGG_EXPORT void *inagg_pktmbuf_mtod(struct rte_mbuf *m)
{
    return rte_pktmbuf_mtod(m, void *);
}

INAGG_EXPORT uint16_t inagg_pktmbuf_data_len(struct rte_mbuf *m)
{
    return rte_pktmbuf_data_len(m);
}

INAGG_EXPORT uint32_t inagg_pktmbuf_pkt_len(struct rte_mbuf *m)
{
    return rte_pktmbuf_pkt_len(m);
}

INAGG_EXPORT void inagg_pktmbuf_set_data_len(struct rte_mbuf *m, uint16_t len)
{
    m->data_len = len;
}

INAGG_EXPORT void inagg_pktmbuf_set_pkt_len(struct rte_mbuf *m, uint32_t len)
{
    m->pkt_len = len;
}

/* Single-segment packets: data_len and pkt_len in one call. */
INAGG_EXPORT void inagg_pktmbuf_set_len(struct rte_mbuf *m, uint16_t len)
{
    m->data_len = len;
    m->pkt_len = len;
}

INAGG_EXPORT uint16_t inagg_pktmbuf_headroom(struct rte_mbuf *m)
{
    return rte_pktmbuf_headroom(m);
}

INAGG_EXPORT uint16_t inagg_pktmbuf_tailroom(struct rte_mbuf *m)
{
    return rte_pktmbuf_tailroom(m);
}

/* rte_errno is a per-lcore (thread-local) macro: unreachable from Java without this. */
INAGG_EXPORT int inagg_errno(void)
{
    return rte_errno;
}

INAGG_EXPORT uint32_t inagg_lcore_id(void)
{
    return rte_lcore_id();
}

/* Gives the calling (Java) thread an lcore id, hence a mempool cache. Returns the id or -1. */
INAGG_EXPORT int inagg_thread_register(void)
{
    if (rte_thread_register() != 0)
        return -1;
    return (int)rte_lcore_id();
}

INAGG_EXPORT void inagg_thread_unregister(void)
{
    rte_thread_unregister();
}

INAGG_EXPORT int inagg_thread_pin(uint32_t cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Java passes a zeroed buffer of this size to rte_eth_dev_configure: the all-defaults configuration. */
INAGG_EXPORT size_t inagg_eth_conf_size(void)
{
    return sizeof(struct rte_eth_conf);
}

/*
 * rte_eth_dev_configure with receive-side scaling: rxmode.mq_mode = RTE_ETH_MQ_RX_RSS, rss_hf = the asked hash types
 * the device offers (dev_info.flow_type_rss_offloads), DPDK's default key (NULL). When nb_rx is 1 or the device
 * offers none of the asked types (virtual devices such as net_ring, net_null), configures without RSS (mq_mode NONE).
 * Everything else is DPDK's default, as for the zeroed configuration. *applied_rss_hf gets the hash types in use
 * (0 = no RSS); returns rte_eth_dev_info_get's error, else rte_eth_dev_configure's result.
 */
INAGG_EXPORT int inagg_eth_dev_configure_rss(uint16_t port_id, uint16_t nb_rx, uint16_t nb_tx, uint64_t rss_hf, uint64_t *applied_rss_hf)
{
    struct rte_eth_dev_info info;
    struct rte_eth_conf conf;
    uint64_t hf = 0;
    int rc;

    if (applied_rss_hf != NULL)
        *applied_rss_hf = 0;
    memset(&conf, 0, sizeof(conf));
    if (nb_rx > 1) {
        rc = rte_eth_dev_info_get(port_id, &info);
        if (rc != 0)
            return rc;
        hf = rss_hf & info.flow_type_rss_offloads;
    }
    if (hf != 0) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_key = NULL;
        conf.rx_adv_conf.rss_conf.rss_hf = hf;
    } else {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
    }
    rc = rte_eth_dev_configure(port_id, nb_rx, nb_tx, &conf);
    if (rc == 0 && applied_rss_hf != NULL)
        *applied_rss_hf = hf;
    return rc;
}

/*
 * Field offsets of struct rte_mbuf, so that Java can read and write the few per-packet fields in place (no downcall,
 * no allocation) without hard-coding DPDK's ABI. The widths are fixed here at compile time.
 */
_Static_assert(sizeof(((struct rte_mbuf *)0)->buf_addr) == 8, "buf_addr is a 64-bit pointer");
_Static_assert(sizeof(((struct rte_mbuf *)0)->data_off) == 2, "data_off is uint16_t");
_Static_assert(sizeof(((struct rte_mbuf *)0)->pkt_len) == 4, "pkt_len is uint32_t");
_Static_assert(sizeof(((struct rte_mbuf *)0)->data_len) == 2, "data_len is uint16_t");
_Static_assert(sizeof(((struct rte_mbuf *)0)->buf_len) == 2, "buf_len is uint16_t");
_Static_assert(sizeof(((struct rte_mbuf *)0)->ol_flags) == 8, "ol_flags is uint64_t");
_Static_assert(sizeof(((struct rte_mbuf *)0)->packet_type) == 4, "packet_type is uint32_t");

INAGG_EXPORT int inagg_mbuf_layout(uint32_t *out)
{
    out[0] = offsetof(struct rte_mbuf, buf_addr);
    out[1] = offsetof(struct rte_mbuf, data_off);
    out[2] = offsetof(struct rte_mbuf, pkt_len);
    out[3] = offsetof(struct rte_mbuf, data_len);
    out[4] = offsetof(struct rte_mbuf, buf_len);
    out[5] = sizeof(struct rte_mbuf);
    out[6] = offsetof(struct rte_mbuf, ol_flags);
    out[7] = offsetof(struct rte_mbuf, packet_type);
    out[8] = RTE_PKTMBUF_HEADROOM;
    return INAGG_MBUF_LAYOUT_COUNT;
}

INAGG_EXPORT int inagg_eth_stats(uint16_t port_id, uint64_t *out)
{
    struct rte_eth_stats s;
    int rc = rte_eth_stats_get(port_id, &s);
    if (rc != 0)
        return rc;
    out[0] = s.ipackets;
    out[1] = s.opackets;
    out[2] = s.ibytes;
    out[3] = s.obytes;
    out[4] = s.imissed;
    out[5] = s.ierrors;
    out[6] = s.oerrors;
    out[7] = s.rx_nombuf;
    return 0;
}

INAGG_EXPORT int inagg_eth_link(uint16_t port_id, uint32_t *out)
{
    struct rte_eth_link link;
    memset(&link, 0, sizeof(link));
    int rc = rte_eth_link_get_nowait(port_id, &link);
    if (rc != 0)
        return rc;
    out[0] = link.link_speed;
    out[1] = link.link_duplex;
    out[2] = link.link_autoneg;
    out[3] = link.link_status;
    return 0;
}

/*
 * EAL log capture, so that a failed rte_eal_init can report what EAL said.
 * Captured text is also echoed to stderr on stop, so nothing is hidden from the operator.
 */
static FILE *capture_stream;
static char *capture_buf;
static size_t capture_len;

INAGG_EXPORT int inagg_log_capture_start(void)
{
    if (capture_stream != NULL)
        return -EBUSY;
    capture_stream = open_memstream(&capture_buf, &capture_len);
    if (capture_stream == NULL)
        return -errno;
    return rte_openlog_stream(capture_stream);
}

/* Stops capturing, copies the last (capacity - 1) bytes of the log into buf, NUL-terminated. Returns the full length. */
INAGG_EXPORT size_t inagg_log_capture_stop(char *buf, size_t capacity)
{
    if (capture_stream == NULL) {
        if (capacity > 0)
            buf[0] = '\0';
        return 0;
    }
    rte_openlog_stream(NULL);
    fflush(capture_stream);
    fclose(capture_stream);
    capture_stream = NULL;
    size_t len = capture_len;
    if (len > 0)
        fwrite(capture_buf, 1, len, stderr);
    if (capacity > 0) {
        size_t n = len < capacity - 1 ? len : capacity - 1;
        memcpy(buf, capture_buf + (len - n), n);
        buf[n] = '\0';
    }
    free(capture_buf);
    capture_buf = NULL;
    capture_len = 0;
    return len;
}
