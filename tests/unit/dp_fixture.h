/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * dp_fixture.h -- the TX unit's test fixture, shared by test_datapath.c and
 * test_marker_align.c.
 *
 * A real but tiny EAL runs in the test process: no hugepages, no PCI, no
 * shared files (--no-shconf; DPDK 22.11 refuses --in-memory together with
 * --no-huge), one lcore, and one net_null port whose TX frees what it is
 * given.  The manager's global `mgr` is set up by hand the way main.c's
 * init_shared() does it, with 64-slot rings (63 usable) so "full" is cheap.
 *
 * Fixture (re-made before every test by setup()):
 *   NF slot 0: service 1      NF slot 1: service 2      NF slot 2: service 3
 *   NF slot 3 (SPARE_SLOT): free, with rings, for a test to give a service
 *   chain 0 = 1 -> 2, dropped at the end;  chain 1 = 1, exits to port 0
 *   service 4 has no instance; port 0 is net_null0, ports 1.. do not exist.
 */
#ifndef DP_FIXTURE_H
#define DP_FIXTURE_H

#include <stdint.h>

#include "mgr.h"

#define NB_SLOTS   4 /* NF slots with rings */
#define SPARE_SLOT 3
#define RING_SIZE  64 /* 63 usable */
#define RING_CAP   (RING_SIZE - 1)
#define PKT_LEN	   64

extern struct rte_ring *rx_rings[NB_SLOTS], *tx_rings[NB_SLOTS], *alloc_rings[NB_SLOTS],
	*port_ring;
extern uint16_t null_port;

int group_setup(void **state);
int group_teardown(void **state);
int setup(void **state);
int teardown(void **state);
void set_instances(uint16_t svc, const uint16_t *inst, uint16_t n);
void set_chain(uint16_t id, const uint16_t *svcs, uint16_t len, int exit_port);
void drain_and_free(struct rte_ring *r);
void drain_all(void);
struct rte_mbuf *pkt(uint8_t action, uint16_t destination, uint16_t chain, uint8_t index);
/* NF `slot` emits `n` packets with this metadata. */
void nf_emit(uint16_t slot, unsigned int n, uint8_t action, uint16_t destination, uint16_t chain,
	     uint8_t index);
/* Put `n` packets on NF `slot`'s RX ring, as if it had not read them yet. */
void fill_rx(uint16_t slot, unsigned int n);
uint64_t drops(enum mgr_drop_reason r);
uint64_t drops_total(void);
unsigned int in_use(void);
/* A drop of `n` packets for `reason` and nothing else, all mbufs returned. */
void assert_only_drops(enum mgr_drop_reason reason, uint64_t n);
/* Nothing dropped and every mbuf back in the pool. */
void assert_no_drops_and_pool_full(void);

#endif /* DP_FIXTURE_H */
