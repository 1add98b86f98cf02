/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nondet_core.h -- the nondet NF's logic, EAL-free: a toy NF whose rate of
 * non-deterministic (ND) events is configured, for the ND-rate benchmarks
 * (the paper's Table IVb varied the ND rate over time).
 *
 * Modes (a "phase" is one mode with its value):
 *   count:N      every Nth packet the NF handles (of the phase) is ND
 *   interval:US  the first packet at or after each US-microsecond boundary
 *                is ND; the phase's first packet starts the grid (it is not
 *                ND itself), a boundary crossed while no packet came is lost
 *                (one ND per interval at most: never a burst of catch-up)
 *   none         no ND at all
 *   schedule     a JSON list of phases run in order, each for its "seconds"
 *                from the NF's first packet; the last one holds
 *
 * An ND event draws a random number through the rand hook (the NF wires it
 * to nf_nd_rand(), which marks the packet ND; unit tests inject their own),
 * and stores it in the flow's entry.  Every packet forwards unchanged.
 *
 * State (all of it in regions, so a promoted standby continues the rhythm
 * exactly: the Nth-packet counter, the phase, the interval grid):
 *   region "nondet": totals, the schedule's start, the current phase, the
 *                    interval grid, per-phase packets / ND events / first and
 *                    last packet time (nf_clock_ns), max gap between packets;
 *   region "flows":  the shared flow table; per directional IPv4 5-tuple
 *                    packets, ND events and the last random value drawn.
 * Non-IPv4 and malformed packets count (they are packets the NF handles)
 * but have no flow entry.
 */
#ifndef NONDET_CORE_H
#define NONDET_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "onvm_flow_table.h"
#include "onvm_pkt_parse.h"
#include "onvm_state.h"

#define ND_PHASES_MAX	    64
#define ND_FLOWS_DEFAULT    65536
#define ND_IDLE_MS_DEFAULT  30000
#define ND_COUNT_MAX	    UINT32_MAX
#define ND_INTERVAL_US_MAX  3600000000ull /* an hour */
#define ND_SECONDS_MAX	    31536000.0	  /* a year */

enum nd_mode {
	ND_MODE_NONE,
	ND_MODE_COUNT,
	ND_MODE_INTERVAL,
};

struct nd_phase {
	enum nd_mode mode;
	uint64_t value;	      /* N (count) or microseconds (interval); 0 for none */
	uint64_t duration_ns; /* schedule: how long it runs; single mode: 0 (forever) */
	double seconds;	      /* as configured (for the export) */
};

struct nd_conf {
	uint32_t n_phases;
	bool schedule;
	struct nd_phase phases[ND_PHASES_MAX];
	char source[512]; /* the -m argument, for messages and the export */
};

/* Parse -m: "count:N", "interval:US" or "schedule:FILE".  Returns 0, or
 * -EINVAL / -ENOENT with the reason in err ("FILE:LINE:COL: field: reason"
 * for a schedule). */
int nd_conf_parse(struct nd_conf *c, const char *arg, char *err, size_t errlen);
/* A schedule from text (name is used in messages). */
int nd_schedule_load_text(struct nd_conf *c, const char *name, const char *text, char *err,
			  size_t errlen);

const char *nd_mode_str(enum nd_mode m);

/* A digest of the configuration, kept in state: a standby started with
 * another one refuses the dead NF's state. */
uint64_t nd_conf_digest(const struct nd_conf *c);

struct nd_flow {
	uint64_t packets;
	uint64_t nd_events;
	uint64_t last_rand;
};

struct nd_phase_stats {
	uint64_t packets;
	uint64_t nd_events;
	uint64_t first_ns; /* nf_clock_ns of the phase's first and last packet */
	uint64_t last_ns;
	uint64_t max_gap_ns; /* longest time between two packets of the phase */
	/* Time the phase had traffic: the gaps between its packets, each counted
	 * up to one interval in interval mode.  A longer gap (no traffic, or the
	 * NF or its source off the CPU) can hold only one ND event -- the first
	 * packet after it -- so ND events / (active_ns / interval) is the rate
	 * the NF achieved while it had packets, whatever the gaps. */
	uint64_t active_ns;
};

/* Region "nondet". */
struct nd_totals {
	uint64_t magic;
	uint64_t digest;
	uint64_t packets, bytes;
	uint64_t nd_events;
	uint64_t non_ip;
	uint64_t untracked; /* IPv4 flows the full table could not hold */
	uint64_t malformed[ONVM_PARSE_REASON_MAX];
	uint64_t started;  /* 1 once the first packet came */
	uint64_t start_ns; /* the schedule's time 0: the first packet */
	uint64_t phase;	   /* current phase */
	uint64_t grid_ns;  /* interval mode: the current phase's grid origin */
	uint64_t next_nd_ns; /* interval mode: the next boundary */
	struct nd_phase_stats ph[]; /* n_phases */
};

typedef uint64_t nd_rand_fn(void *arg);

/* Process-local handle. */
struct nondet {
	const struct nd_conf *conf;
	struct nf_state_set *state;
	struct onvm_ft ft;
	struct nd_totals *t;
	nd_rand_fn *rand;
	void *rand_arg;
};

size_t nd_totals_size(const struct nd_conf *c);
size_t nd_flows_size(uint32_t flows);

/* Open on the two regions (fresh or a dead active's).  Returns 0 or a
 * negative errno with the reason in err. */
int nd_open(struct nondet *n, const struct nd_conf *c, struct nf_state_set *state,
	    void *totals_mem, size_t totals_len, void *flows_mem, size_t flows_len, uint32_t flows,
	    nd_rand_fn *rand, void *rand_arg, char *err, size_t errlen);

/* Account one packet at now_ns (nf_clock_ns()); true if it was an ND event
 * (the rand hook was called). */
bool nd_packet(struct nondet *n, const struct rte_mbuf *m, uint64_t now_ns);

/* Remove flows idle for idle_ns, looking at up to `budget` slots. */
uint32_t nd_expire(struct nondet *n, uint64_t now_ns, uint64_t idle_ns, uint32_t budget);

/* The JSON export: totals, per-phase packets / ND events / duration, flows. */
int nd_export(const struct nondet *n, FILE *f);
/* ...written to `path` atomically (nf_write_file()). */
int nd_export_file(const struct nondet *n, const char *path);
void nd_print_summary(const struct nondet *n, const char *name, FILE *f);

#endif /* NONDET_CORE_H */
