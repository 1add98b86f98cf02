/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * dpi_engine.h -- protocol detection with nDPI whose every byte of state
 * lives in libnf state regions, so that detection survives failover.
 *
 * nDPI keeps pointer-rich state: a detection module (automata, protocol
 * tables, lazily created LRU caches) and, per flow, a struct plus buffers it
 * mallocs (TLS reassembly, host names, ...).  All of it is allocated from a
 * region heap (onvm_region_heap.h) in the "dpi_heap" region, so a standby
 * that takes over the region finds the module and every flow in place, at
 * the same addresses.  Function pointers nDPI stores (per-flow extra
 * dissection callbacks) point into the NF binary, which is linked without
 * PIE so they are equal in every process of the binary; the engine checks.
 *
 * Dirty tracking of writes nDPI makes behind our back:
 *   - a flow's memory: the flow's context block and every block nDPI
 *     allocated while processing that flow (heap owners) are touched before
 *     each nDPI call on the flow;
 *   - the module's per-packet scratch and its lazily created cache pointers:
 *     touched at the first nDPI call of a batch;
 *   - the module's LRU caches, which any flow may write: compared with the
 *     replica at the end of every batch in which nDPI ran, and the chunks
 *     that differ are touched (dpi_engine_batch_end); a promoted standby
 *     copies them back from the replica (dpi_engine_adopt), which undoes
 *     cache writes of a batch that never committed.
 * tests/unit/test_dpi.c proves the coverage: over every trace, after every
 * packet, canonical == replica for all three regions.
 *
 * EAL-free: the NF's main (dpi.c) wires it to libnf; tests use test_state.h.
 */
#ifndef DPI_ENGINE_H
#define DPI_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "onvm_flow_table.h"
#include "onvm_pkt_parse.h"
#include "onvm_region_heap.h"
#include "onvm_state.h"

#define DPI_HEAP_MIN_MB	    16 /* nDPI 4.2's module alone takes ~11 MB */
#define DPI_PROTO_SLOTS	    512
#define DPI_REGION_FLOWS    "dpi_flows"
#define DPI_REGION_TOTALS   "dpi_totals"
#define DPI_REGION_HEAP	    "dpi_heap"

struct dpi_config {
	uint32_t flows;		/* flow table capacity, a power of two */
	uint32_t heap_mb;	/* size of the dpi_heap region */
	uint32_t max_pkts_tcp;	/* give up detection after this many packets */
	uint32_t max_pkts_udp;
	uint64_t idle_ns;	/* flow idle timeout */
};

#define DPI_CONFIG_DEFAULT                                                                   \
	{ .flows = 65536, .heap_mb = 128, .max_pkts_tcp = 80, .max_pkts_udp = 24,            \
	  .idle_ns = 120ull * 1000000000ull }

enum dpi_flow_state {
	DPI_DETECTING = 1,
	DPI_DETECTED,	/* nDPI named the protocol and needs no more packets */
	DPI_GAVE_UP,	/* packet budget spent, or finished at expiry/exit: ndpi's guess */
};

/* Value of a flow-table entry (key: canonical 5-tuple). */
struct dpi_flow {
	uint64_t ctx_off; /* heap offset of the nDPI context while DETECTING, else 0 */
	uint64_t packets;
	uint64_t bytes;
	uint16_t master;  /* nDPI protocol ids (0 = unknown) */
	uint16_t app;
	uint16_t category;
	uint8_t state;
	uint8_t guessed;  /* the result is ndpi_detection_giveup()'s guess */
	uint32_t detect_pkts; /* packets it took to decide */
	uint32_t pad;
};

struct dpi_proto_stats {
	uint64_t flows;
	uint64_t packets;
	uint64_t bytes;
};

/* Region "dpi_totals". */
struct dpi_totals {
	uint64_t packets;
	uint64_t bytes;
	uint64_t non_ip;
	uint64_t fragments;	 /* non-first IPv4 fragments: not inspected */
	uint64_t untracked;	 /* flow table full */
	uint64_t no_memory;	 /* dpi_heap full: flow not inspected */
	uint64_t flows_classified;
	uint64_t malformed[ONVM_PARSE_REASON_MAX];
	struct dpi_proto_stats proto[DPI_PROTO_SLOTS]; /* by app (else master) protocol id */
};

struct ndpi_detection_module_struct;

struct dpi_engine {
	struct dpi_config cfg;
	struct nf_state_set *state;
	struct onvm_ft flows;
	struct onvm_rh heap;
	struct dpi_totals *t;
	struct ndpi_detection_module_struct *nd;
	int heap_region;
	bool ran_ndpi; /* nDPI was called in the current batch */
	char err[256];
	uint8_t scratch[65536]; /* a chained frame's IP packet, made contiguous */
};

/* The three regions for `cfg` (names above); returns 0 or -EINVAL. */
int dpi_engine_regions(const struct dpi_config *cfg, struct nf_state_request reqs[3]);

/*
 * Once per process, before dpi_engine_open(): run nDPI's process-wide set-up
 * (libgcrypt for QUIC, ...) with a throw-away module on the process heap, and
 * route nDPI's allocator to the engine's region heap.  A standby calls this
 * before it parks, so that promotion does not pay for it.
 */
int dpi_engine_process_init(struct dpi_engine *e);

/*
 * Open the engine on its regions.  Fresh regions: a new nDPI module is
 * built in the heap.  Regions that hold an engine (a promoted standby, or a
 * relaunch that got its predecessor's state): the module and flows found
 * there are adopted, after the LRU caches are restored from the replica.
 */
int dpi_engine_open(struct dpi_engine *e, const struct dpi_config *cfg, struct nf_state_set *st,
		    void *flows, void *totals, void *heap);

/* Around every batch of packets. */
void dpi_engine_batch_begin(struct dpi_engine *e);
void dpi_engine_batch_end(struct dpi_engine *e);

/* Inspect one frame (never modified). */
void dpi_engine_packet(struct dpi_engine *e, const struct rte_mbuf *m, uint64_t now_ns);

/* Expire idle flows, looking at up to `budget` slots. */
void dpi_engine_expire(struct dpi_engine *e, uint64_t now_ns, uint32_t budget);

/* End of the run: flows still detecting get nDPI's final guess. */
void dpi_engine_finish(struct dpi_engine *e);

/* "HTTP.Google"-style name of a flow's result. */
const char *dpi_engine_proto_name(struct dpi_engine *e, uint16_t master, uint16_t app, char *buf,
				  size_t len);

/* JSON export: totals, per-protocol and per-flow results.  0 or -1. */
int dpi_engine_export(struct dpi_engine *e, const char *path);

#endif /* DPI_ENGINE_H */
