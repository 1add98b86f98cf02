/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * dp_fixture.c -- the TX unit's test fixture (dp_fixture.h): a tiny EAL in
 * the test process and the manager's global `mgr` set up by hand.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "dp_fixture.h"

struct rte_ring *rx_rings[NB_SLOTS], *tx_rings[NB_SLOTS], *alloc_rings[NB_SLOTS],
	*port_ring;
uint16_t null_port;
static bool eal_up;
static char runtime_dir[PATH_MAX];

/* ---- EAL and manager state ------------------------------------------------------- */

static int
start_null_port(void)
{
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_get_port_by_name("net_null0", &null_port) != 0 ||
	    rte_eth_dev_configure(null_port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(null_port, 0, 64, rte_socket_id(), NULL, mgr.pool) != 0 ||
	    rte_eth_tx_queue_setup(null_port, 0, 64, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(null_port) != 0)
		return -1;
	/* The data path uses the manager's port index as the ethdev port id. */
	return null_port == 0 ? 0 : -1;
}

int
group_setup(void **state)
{
	static const struct rte_mbuf_dynfield meta_desc = {
	    .name = ONVM_PKT_META_DYNFIELD,
	    .size = sizeof(struct onvm_pkt_meta),
	    .align = __alignof__(struct onvm_pkt_meta),
	};
	char prefix[64];
	/* clang-format off */
	char *argv[] = {
		"test_datapath", "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
		"--no-telemetry", "-l", "0", "--log-level=lib.*:error", prefix,
		"--vdev", "net_null0", NULL,
	};
	/* clang-format on */
	int argc = (int)RTE_DIM(argv) - 1;

	(void)state;
	snprintf(prefix, sizeof(prefix), "--file-prefix=test_datapath_%d", (int)getpid());
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	eal_up = true;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	/* No per-lcore cache: rte_mempool_in_use_count() is then exact. */
	mgr.pool = rte_pktmbuf_pool_create("test_dp_pool", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   rte_socket_id());
	mgr.dyn_off = rte_mbuf_dynfield_register(&meta_desc);
	mgr.shm = aligned_alloc(RTE_CACHE_LINE_SIZE,
				RTE_ALIGN_CEIL(sizeof(*mgr.shm), RTE_CACHE_LINE_SIZE));
	if (mgr.pool == NULL || mgr.dyn_off < 0 || mgr.shm == NULL)
		return -1;
	for (int i = 0; i < NB_SLOTS; i++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), ONVM_NF_RX_RING_FMT, i);
		rx_rings[i] = rte_ring_create(name, RING_SIZE, rte_socket_id(), RING_F_SC_DEQ);
		snprintf(name, sizeof(name), ONVM_NF_TX_RING_FMT, i);
		tx_rings[i] = rte_ring_create(name, RING_SIZE, rte_socket_id(),
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), ONVM_NF_ALLOC_RING_FMT, i);
		alloc_rings[i] = rte_ring_create(name, ONVM_NF_ALLOC_RING_SIZE, rte_socket_id(),
						 RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (rx_rings[i] == NULL || tx_rings[i] == NULL || alloc_rings[i] == NULL)
			return -1;
	}
	mgr.ctl_free_ring = rte_ring_create("test_ctl_free", 2 * MGR_TX_FREE_BURSTS * ONVM_BURST,
					    rte_socket_id(), RING_F_SC_DEQ);
	if (mgr.ctl_free_ring == NULL)
		return -1;
	port_ring = rte_ring_create("test_port0_tx", RING_SIZE, rte_socket_id(), RING_F_SC_DEQ);
	if (port_ring == NULL || start_null_port() < 0)
		return -1;
	return 0;
}

int
group_teardown(void **state)
{
	(void)state;
	if (!eal_up)
		return 0;
	rte_eth_dev_stop(null_port);
	rte_eth_dev_close(null_port);
	for (int i = 0; i < NB_SLOTS; i++) {
		rte_ring_free(rx_rings[i]);
		rte_ring_free(tx_rings[i]);
	}
	rte_ring_free(port_ring);
	rte_mempool_free(mgr.pool);
	free(mgr.shm);
	rte_eal_cleanup();
	/* --no-shconf keeps EAL from writing any file, but not from making
	 * its (empty) runtime directory. */
	rmdir(runtime_dir);
	return 0;
}

void
set_instances(uint16_t svc, const uint16_t *inst, uint16_t n)
{
	struct onvm_service *sv = &mgr.shm->services[svc];
	uint32_t next = (sv->active & 1) ^ 1;

	memcpy(sv->inst[next], inst, n * sizeof(inst[0]));
	sv->n[next] = n;
	sv->active = next;
}

void
set_chain(uint16_t id, const uint16_t *svcs, uint16_t len, int exit_port)
{
	mgr_chain_set(&mgr.shm->chains[id], NULL, svcs, len, exit_port);
}

void
drain_and_free(struct rte_ring *r)
{
	void *objs[RING_SIZE];
	unsigned int n;

	while ((n = rte_ring_dequeue_burst(r, objs, RING_SIZE, NULL)) > 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
}

void
drain_all(void)
{
	for (int i = 0; i < NB_SLOTS; i++) {
		drain_and_free(rx_rings[i]);
		drain_and_free(tx_rings[i]);
		drain_and_free(alloc_rings[i]);
	}
	drain_and_free(port_ring);
	drain_and_free(mgr.ctl_free_ring);
}

int
setup(void **state)
{
	static const uint16_t chain0[] = {1, 2}, chain1[] = {1};
	struct onvm_shm *shm = mgr.shm;

	(void)state;
	mgr_align_reset();
	drain_all();
	if (rte_mempool_in_use_count(mgr.pool) != 0)
		return -1;
	memset(shm, 0, sizeof(*shm));
	memset(mgr.dp, 0, sizeof(mgr.dp));
	memset(mgr.port_stats, 0, sizeof(mgr.port_stats));
	mgr_dp_init();
	mgr.nf_slots_used = ONVM_MAX_NFS; /* slots are set up by hand below */
	shm->magic = ONVM_SHM_MAGIC;
	shm->version = ONVM_SHM_VERSION;
	shm->dynfield_offset = mgr.dyn_off;
	for (uint16_t i = 0; i < NB_SLOTS; i++) {
		struct onvm_nf_slot *s = &shm->nfs[i];

		s->instance_id = i;
		s->rx_ring = rx_rings[i];
		s->tx_ring = tx_rings[i];
		s->alloc_ring = alloc_rings[i];
		if (i == SPARE_SLOT)
			continue; /* free: a test gives it a service */
		s->service_id = i + 1;
		s->status = ONVM_NF_RUNNING;
		set_instances(i + 1, &i, 1);
	}
	set_chain(0, chain0, 2, -1);
	set_chain(1, chain1, 1, 0);
	mgr.nb_ports = 1;
	shm->nb_ports = 1;
	shm->ports[0].port_id = null_port;
	shm->ports[0].used = 1;
	shm->ports[0].tx_ring = port_ring;
	return 0;
}

int
teardown(void **state)
{
	(void)state;
	mgr_dp_drop_leftovers(); /* stashes and markers kept for alignments */
	drain_all();
	return 0;
}

/* ---- packets --------------------------------------------------------------------- */

struct rte_mbuf *
pkt(uint8_t action, uint16_t destination, uint16_t chain, uint8_t index)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mgr.pool);
	struct onvm_pkt_meta *meta;
	char *data;

	assert_non_null(m);
	data = rte_pktmbuf_append(m, PKT_LEN);
	assert_non_null(data);
	memset(data, 0, PKT_LEN);
	meta = onvm_pkt_meta(m, mgr.dyn_off);
	*meta = (struct onvm_pkt_meta){.action = action,
				       .destination = destination,
				       .chain_id = chain,
				       .chain_index = index,
				       .egress_port = ONVM_PORT_UNSET};
	return m;
}

/* NF `slot` emits `n` packets with this metadata. */
void
nf_emit(uint16_t slot, unsigned int n, uint8_t action, uint16_t destination, uint16_t chain,
	uint8_t index)
{
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(
		    rte_ring_enqueue(tx_rings[slot], pkt(action, destination, chain, index)), 0);
}

/* Put `n` packets on NF `slot`'s RX ring, as if it had not read them yet. */
void
fill_rx(uint16_t slot, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(rte_ring_enqueue(rx_rings[slot], pkt(ONVM_ACTION_NEXT, 0, 0, 0)),
				 0);
}

uint64_t
drops(enum mgr_drop_reason r)
{
	return mgr.dp[MGR_UNIT_TX].drops[r];
}

uint64_t
drops_total(void)
{
	uint64_t t = 0;

	for (int r = 0; r < MGR_DROP_REASON_MAX; r++)
		t += UNITS_SUM(drops[r]);
	return t;
}

unsigned int
in_use(void)
{
	return rte_mempool_in_use_count(mgr.pool);
}

/* A drop of `n` packets for `reason` and nothing else, all mbufs returned. */
void
assert_only_drops(enum mgr_drop_reason reason, uint64_t n)
{
	for (int r = 0; r < MGR_DROP_REASON_MAX; r++)
		if (r != (int)reason && drops(r) != 0)
			fail_msg("unexpected %s drops: %" PRIu64, mgr_drop_reason_str(r), drops(r));
	assert_int_equal(drops(reason), n);
	assert_int_equal(in_use(), 0);
}

/* Nothing dropped and every mbuf back in the pool. */
void
assert_no_drops_and_pool_full(void)
{
	assert_int_equal(drops_total(), 0);
	assert_int_equal(in_use(), 0);
}

