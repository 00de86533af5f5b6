/*
 * inagg DPDK shim: ordinary, exported functions for what DPDK 22.11 offers only as
 * static inline functions or macros (the rx/tx burst and mbuf fast path, rte_errno,
 * per-lcore state), plus flattened port statistics and link status so that Java
 * does not have to mirror large DPDK structs.
 *
 * Every prototype below is bound in org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h;
 * BindingsMatchHeaderTest parses this file and fails when the two disagree.
 * Keep one prototype per line, with only the C types listed in that test.
 */
#ifndef INAGG_DPDK_SHIM_H
#define INAGG_DPDK_SHIM_H

#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;

#define INAGG_ETH_STATS_COUNT 8  /* ipackets opackets ibytes obytes imissed ierrors oerrors rx_nombuf */
#define INAGG_ETH_LINK_COUNT 4   /* speed(Mbps) duplex autoneg status */
/* offsetof buf_addr data_off pkt_len data_len buf_len, sizeof(struct rte_mbuf), offsetof ol_flags packet_type,
 * RTE_PKTMBUF_HEADROOM */
#define INAGG_MBUF_LAYOUT_COUNT 9

/* ---- fast path (bound with Linker.Option.critical) ---- */
uint16_t inagg_rx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t inagg_tx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **tx_pkts, uint16_t nb_pkts);
uint16_t inagg_tx_burst_free_unsent(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **tx_pkts, uint16_t nb_pkts);
struct rte_mbuf *inagg_pktmbuf_alloc(struct rte_mempool *mp);
int inagg_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs, uint32_t count);
int inagg_mbuf_raw_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs, uint32_t count);
void inagg_pktmbuf_free(struct rte_mbuf *m);
void inagg_pktmbuf_free_bulk(struct rte_mbuf **mbufs, uint32_t count);
void *inagg_pktmbuf_mtod(struct rte_mbuf *m);
uint16_t inagg_pktmbuf_data_len(struct rte_mbuf *m);
uint32_t inagg_pktmbuf_pkt_len(struct rte_mbuf *m);
void inagg_pktmbuf_set_data_len(struct rte_mbuf *m, uint16_t len);
void inagg_pktmbuf_set_pkt_len(struct rte_mbuf *m, uint32_t len);
void inagg_pktmbuf_set_len(struct rte_mbuf *m, uint16_t len);
uint16_t inagg_pktmbuf_headroom(struct rte_mbuf *m);
uint16_t inagg_pktmbuf_tailroom(struct rte_mbuf *m);

/* ---- slow path ---- */
int inagg_errno(void);
uint32_t inagg_lcore_id(void);
int inagg_thread_register(void);
void inagg_thread_unregister(void);
int inagg_thread_pin(uint32_t cpu);
size_t inagg_eth_conf_size(void);
int inagg_eth_dev_configure_rss(uint16_t port_id, uint16_t nb_rx, uint16_t nb_tx, uint64_t rss_hf, uint64_t *applied_rss_hf);
int inagg_mbuf_layout(uint32_t *out);
int inagg_eth_stats(uint16_t port_id, uint64_t *out);
int inagg_eth_link(uint16_t port_id, uint32_t *out);
int inagg_log_capture_start(void);
size_t inagg_log_capture_stop(char *buf, size_t capacity);

#endif /* INAGG_DPDK_SHIM_H */
