/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_nondet.c -- unit tests for the nondet NF's logic
 * (nfs/nondet/nondet_core.c): mode and schedule parsing with their
 * rejections, ND decisions in count / interval / none mode and across a
 * schedule's phases (on a clock the test drives), the per-flow state, the
 * per-phase statistics, failover of the rhythm, and the export.
 *
 * The random hook is the test's: it counts calls and returns a sequence, so
 * the values stored per flow are known.  Every packet is followed by
 * test_state_commit_check() (no write without a touch).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "heap_mbuf.h"
#include "nondet_core.h"
#include "test_state.h"

#define US 1000ull
#define MS 1000000ull
#define S  1000000000ull

/* ---- frames ------------------------------------------------------------------------ */

/* A UDP packet of flow (198.18.0.src -> 198.19.0.1, sport -> 53). */
static struct rte_mbuf *
udp(uint8_t src, uint16_t sport)
{
	uint8_t f[60] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
			 0x45, 0, 0, 28 + 8, 0, 1, 0, 0, 64, 17, 0, 0,
			 198, 18, 0, src, 198, 19, 0, 1,
			 (uint8_t)(sport >> 8), (uint8_t)sport, 0, 53, 0, 16, 0, 0};
	struct rte_mbuf *m = heap_mbuf(f, 14 + 36);

	assert_non_null(m);
	return m;
}

static struct rte_mbuf *
arp(void)
{
	uint8_t f[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06};

	return heap_mbuf(f, sizeof(f));
}

/* ---- fixture ----------------------------------------------------------------------- */

struct fx {
	struct nd_conf conf;
	struct test_state ts;
	struct nondet n;
	uint32_t flows;
	uint64_t now;
	uint64_t rand_calls;
};

static uint64_t
test_rand(void *arg)
{
	struct fx *f = arg;

	return 0x1000 + ++f->rand_calls;
}

static void
fx_commit_ok(struct fx *f)
{
	assert_int_equal(test_state_commit_check(&f->ts), 0);
}

static void
fx_open(struct fx *f)
{
	char err[512] = "";

	if (nd_open(&f->n, &f->conf, &f->ts.set, test_state_region(&f->ts, "nondet"),
		    nd_totals_size(&f->conf), test_state_region(&f->ts, "flows"),
		    nd_flows_size(f->flows), f->flows, test_rand, f, err, sizeof(err)) != 0)
		fail_msg("nd_open: %s", err);
}

static void
fx_init_conf(struct fx *f, uint32_t flows)
{
	struct nf_state_request reqs[2] = {
	    {"nondet", nd_totals_size(&f->conf), 64},
	    {"flows", nd_flows_size(flows), 256},
	};

	f->flows = flows;
	assert_int_equal(test_state_init(&f->ts, reqs, 2), 0);
	fx_open(f);
	fx_commit_ok(f);
	f->now = 5 * S;
}

static void
fx_init(struct fx *f, const char *mode)
{
	char err[512] = "";

	memset(f, 0, sizeof(*f));
	if (nd_conf_parse(&f->conf, mode, err, sizeof(err)) != 0)
		fail_msg("-m %s: %s", mode, err);
	fx_init_conf(f, 64);
}

static void
fx_init_schedule(struct fx *f, const char *text)
{
	char err[512] = "";

	memset(f, 0, sizeof(*f));
	if (nd_schedule_load_text(&f->conf, "s.json", text, err, sizeof(err)) != 0)
		fail_msg("schedule: %s", err);
	fx_init_conf(f, 64);
}

static void
fx_fini(struct fx *f)
{
	test_state_fini(&f->ts);
}

/* One packet (freed) at the fixture's clock; commit-checked. */
static bool
run(struct fx *f, struct rte_mbuf *m)
{
	bool nd = nd_packet(&f->n, m, f->now);

	fx_commit_ok(f);
	heap_mbuf_free(m);
	return nd;
}

/* ---- modes --------------------------------------------------------------------------- */

static void
test_mode_arguments(void **state)
{
	struct nd_conf c;
	char err[512];

	(void)state;
	assert_int_equal(nd_conf_parse(&c, "count:7", err, sizeof(err)), 0);
	assert_int_equal(c.n_phases, 1);
	assert_false(c.schedule);
	assert_int_equal(c.phases[0].mode, ND_MODE_COUNT);
	assert_int_equal(c.phases[0].value, 7);
	assert_int_equal(c.phases[0].duration_ns, 0);
	assert_int_equal(nd_conf_parse(&c, "interval:250", err, sizeof(err)), 0);
	assert_int_equal(c.phases[0].mode, ND_MODE_INTERVAL);
	assert_int_equal(c.phases[0].value, 250);
	assert_int_equal(nd_conf_parse(&c, "none", err, sizeof(err)), 0);
	assert_int_equal(c.phases[0].mode, ND_MODE_NONE);
	assert_int_equal(nd_conf_parse(&c, "count:4294967295", err, sizeof(err)), 0);
	assert_int_equal(nd_conf_parse(&c, "interval:3600000000", err, sizeof(err)), 0);
}

static void
test_bad_mode_arguments_are_rejected_with_a_reason(void **state)
{
	static const struct {
		const char *arg;
		const char *want;
	} cases[] = {
	    {"count:0", "-m count:0: N must be a whole number 1..4294967295"},
	    {"count:", "-m count:: N must be a whole number 1..4294967295"},
	    {"count:x", "-m count:x: N must be a whole number 1..4294967295"},
	    {"count:07", "-m count:07: N must be a whole number 1..4294967295"},
	    {"count:-1", "-m count:-1: N must be a whole number 1..4294967295"},
	    {"count:4294967296", "-m count:4294967296: N must be a whole number 1..4294967295"},
	    {"count:5 ", "-m count:5 : N must be a whole number 1..4294967295"},
	    {"interval:0", "-m interval:0: US must be whole microseconds 1..3600000000"},
	    {"interval:1.5", "-m interval:1.5: US must be whole microseconds 1..3600000000"},
	    {"interval:3600000001", "-m interval:3600000001: US must be whole microseconds 1..3600000000"},
	    {"count5", "-m count5: expected count:N, interval:US, schedule:FILE or none"},
	    {"counts:5", "-m counts:5: expected count:N, interval:US, schedule:FILE or none"},
	    {"", "-m : expected count:N, interval:US, schedule:FILE or none"},
	    {"schedule:", "-m schedule:: expected count:N, interval:US, schedule:FILE or none"},
	    {"none:1", "-m none:1: expected count:N, interval:US, schedule:FILE or none"},
	};
	struct nd_conf c;
	char err[512];
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (nd_conf_parse(&c, cases[i].arg, err, sizeof(err)) != -EINVAL ||
		    strcmp(err, cases[i].want) != 0) {
			print_error("case %zu '%s'\n  got:  %s\n  want: %s\n", i, cases[i].arg, err,
				    cases[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
	assert_int_equal(nd_conf_parse(&c, "schedule:/nonexistent/s.json", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/s.json"));
}

static void
test_schedule_parses_phases(void **state)
{
	struct nd_conf c;
	char err[512] = "";

	(void)state;
	assert_int_equal(nd_schedule_load_text(&c, "s.json",
					       "[{\"seconds\": 2, \"mode\": \"interval\", \"value\": 500},\n"
					       " {\"seconds\": 0.25, \"mode\": \"count\", \"value\": 10},\n"
					       " {\"seconds\": 1, \"mode\": \"none\"}]",
					       err, sizeof(err)),
			 0);
	assert_true(c.schedule);
	assert_int_equal(c.n_phases, 3);
	assert_int_equal(c.phases[0].mode, ND_MODE_INTERVAL);
	assert_int_equal(c.phases[0].value, 500);
	assert_int_equal(c.phases[0].duration_ns, 2 * S);
	assert_int_equal(c.phases[1].mode, ND_MODE_COUNT);
	assert_int_equal(c.phases[1].duration_ns, 250 * MS);
	assert_int_equal(c.phases[2].mode, ND_MODE_NONE);
	assert_int_equal(c.phases[2].value, 0);
	/* From a file, through -m. */
	{
		char path[] = "/tmp/test_nondet_XXXXXX";
		int fd = mkstemp(path);
		char arg[64];
		const char *text = "[{\"seconds\": 3, \"mode\": \"count\", \"value\": 2}]";

		assert_true(fd >= 0);
		assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
		close(fd);
		snprintf(arg, sizeof(arg), "schedule:%s", path);
		assert_int_equal(nd_conf_parse(&c, arg, err, sizeof(err)), 0);
		assert_int_equal(c.n_phases, 1);
		assert_true(c.schedule);
		assert_int_equal(c.phases[0].duration_ns, 3 * S);
		assert_string_equal(c.source, arg);
		unlink(path);
	}
}

static void
test_schedule_rejections_name_file_line_column_and_field(void **state)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
	    {"{}", "s.json:1:1: (top level): expected a non-empty list of phases [{\"seconds\": S, \"mode\": M, \"value\": V}, ...]"},
	    {"[]", "s.json:1:1: (top level): expected a non-empty list of phases [{\"seconds\": S, \"mode\": M, \"value\": V}, ...]"},
	    {"[5]", "s.json:1:2: [0]: expected an object"},
	    {"[{\"seconds\": 1, \"mode\": \"none\"},\n {\"secs\": 1, \"mode\": \"none\"}]",
	     "s.json:2:11: [1].secs: unknown field"},
	    {"[{\"seconds\": 1}]", "s.json:1:2: [0].mode: required field missing"},
	    {"[{\"seconds\": 1, \"mode\": \"often\", \"value\": 3}]",
	     "s.json:1:25: [0].mode: 'often': expected \"count\", \"interval\" or \"none\""},
	    {"[{\"seconds\": 1, \"mode\": 3}]", "s.json:1:25: [0].mode: expected a non-empty string"},
	    {"[{\"mode\": \"none\"}]", "s.json:1:2: [0].seconds: required field missing"},
	    {"[{\"seconds\": 0, \"mode\": \"none\"}]",
	     "s.json:1:14: [0].seconds: expected a number of seconds > 0"},
	    {"[{\"seconds\": -2, \"mode\": \"none\"}]",
	     "s.json:1:14: [0].seconds: expected a number of seconds > 0"},
	    {"[{\"seconds\": \"2\", \"mode\": \"none\"}]",
	     "s.json:1:14: [0].seconds: expected a number of seconds > 0"},
	    {"[{\"seconds\": 1e-12, \"mode\": \"none\"}]",
	     "s.json:1:14: [0].seconds: expected a number of seconds > 0"},
	    {"[{\"seconds\": 1e10, \"mode\": \"none\"}]",
	     "s.json:1:14: [0].seconds: expected a number of seconds > 0"},
	    {"[{\"seconds\": 1, \"mode\": \"count\"}]", "s.json:1:2: [0].value: required field missing"},
	    {"[{\"seconds\": 1, \"mode\": \"count\", \"value\": 0}]",
	     "s.json:1:43: [0].value: expected an integer in 1..4294967295"},
	    {"[{\"seconds\": 1, \"mode\": \"count\", \"value\": 2.5}]",
	     "s.json:1:43: [0].value: expected an integer in 1..4294967295"},
	    {"[{\"seconds\": 1, \"mode\": \"interval\", \"value\": 3600000001}]",
	     "s.json:1:46: [0].value: expected an integer in 1..3600000000"},
	    {"[{\"seconds\": 1, \"mode\": \"none\", \"value\": 1}]",
	     "s.json:1:42: [0].value: mode \"none\" takes no value"},
	    {"[{\"seconds\": 1, \"mode\": \"none\"}", "s.json:1:31: ']' expected near end of file"},
	};
	struct nd_conf c;
	char err[512];
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (nd_schedule_load_text(&c, "s.json", cases[i].text, err, sizeof(err)) !=
			-EINVAL ||
		    strcmp(err, cases[i].want) != 0) {
			print_error("case %zu: %s\n  got:  %s\n  want: %s\n", i, cases[i].text, err,
				    cases[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void
test_schedule_rejects_too_many_phases(void **state)
{
	char text[8192], err[512] = "";
	size_t o = 0;
	struct nd_conf c;

	(void)state;
	o += (size_t)snprintf(text + o, sizeof(text) - o, "[");
	for (int i = 0; i <= ND_PHASES_MAX; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "%s{\"seconds\": 1, \"mode\": \"none\"}", i ? "," : "");
	snprintf(text + o, sizeof(text) - o, "]");
	assert_int_equal(nd_schedule_load_text(&c, "s.json", text, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "s.json:1:1: (top level): 65 phases, at most 64");
}

static void
test_digest_tells_configurations_apart(void **state)
{
	struct nd_conf a, b;
	char err[512];

	(void)state;
	assert_int_equal(nd_conf_parse(&a, "count:5", err, sizeof(err)), 0);
	assert_int_equal(nd_conf_parse(&b, "count:5", err, sizeof(err)), 0);
	assert_true(nd_conf_digest(&a) == nd_conf_digest(&b));
	assert_int_equal(nd_conf_parse(&b, "count:6", err, sizeof(err)), 0);
	assert_true(nd_conf_digest(&a) != nd_conf_digest(&b));
	assert_int_equal(nd_conf_parse(&b, "interval:5", err, sizeof(err)), 0);
	assert_true(nd_conf_digest(&a) != nd_conf_digest(&b));
	assert_int_equal(nd_schedule_load_text(&b, "s", "[{\"seconds\": 1, \"mode\": \"count\", \"value\": 5}]",
					       err, sizeof(err)),
			 0);
	assert_true(nd_conf_digest(&a) != nd_conf_digest(&b));
}

/* ---- ND decisions ------------------------------------------------------------------------ */

static void
test_count_mode_marks_every_nth_packet(void **state)
{
	struct fx f;
	int nd = 0;

	(void)state;
	fx_init(&f, "count:7");
	for (int i = 1; i <= 100; i++) {
		bool got;

		f.now += 10 * US;
		/* Non-IPv4 packets are packets the NF handles too. */
		got = run(&f, i % 5 == 0 ? arp() : udp((uint8_t)(i % 3), 1000));
		assert_true(got == (i % 7 == 0));
		nd += got;
	}
	assert_int_equal(nd, 14);
	assert_int_equal(f.rand_calls, 14);
	assert_int_equal(f.n.t->nd_events, 14);
	assert_int_equal(f.n.t->packets, 100);
	assert_int_equal(f.n.t->non_ip, 20);
	assert_int_equal(f.n.t->ph[0].packets, 100);
	assert_int_equal(f.n.t->ph[0].nd_events, 14);
	assert_int_equal(f.n.t->ph[0].first_ns, 5 * S + 10 * US);
	assert_int_equal(f.n.t->ph[0].last_ns, 5 * S + 1000 * US);
	assert_int_equal(f.n.t->ph[0].max_gap_ns, 10 * US);
	assert_int_equal(f.n.t->ph[0].active_ns, 990 * US); /* count mode: every gap */
	fx_fini(&f);
}

static void
test_count_one_marks_every_packet(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, "count:1");
	for (int i = 0; i < 10; i++)
		assert_true(run(&f, udp(1, 1)));
	assert_int_equal(f.n.t->nd_events, 10);
	fx_fini(&f);
}

static void
test_interval_mode_marks_the_first_packet_after_each_boundary(void **state)
{
	struct fx f;
	uint64_t t0;
	int nd = 0;

	(void)state;
	fx_init(&f, "interval:1000"); /* 1 ms */
	t0 = f.now;
	/* The first packet starts the grid; it is not ND. */
	assert_false(run(&f, udp(1, 1)));
	/* A packet every 300 us for 30 ms: boundaries at t0 + k ms. */
	for (int i = 1; i <= 100; i++) {
		bool got;

		f.now = t0 + (uint64_t)i * 300 * US;
		got = run(&f, udp(1, 1));
		/* ND iff this packet is the first at or after a boundary. */
		assert_true(got == ((i * 300) / 1000 != ((i - 1) * 300) / 1000));
		nd += got;
	}
	assert_int_equal(nd, 30);
	/* Exactly on a boundary counts. */
	f.now = t0 + 31 * MS;
	assert_true(run(&f, udp(1, 1)));
	f.now += 999 * US;
	assert_false(run(&f, udp(1, 1)));
	f.now += 1 * US;
	assert_true(run(&f, udp(1, 1)));
	/* Ten boundaries pass without a packet: one ND, nothing owed. */
	f.now = t0 + 42 * MS + 500 * US;
	assert_true(run(&f, udp(1, 1)));
	f.now += 100 * US;
	assert_false(run(&f, udp(1, 1)));
	f.now = t0 + 43 * MS;
	assert_true(run(&f, udp(1, 1)));
	assert_int_equal(f.n.t->nd_events, 34);
	assert_int_equal(f.n.t->ph[0].max_gap_ns, 10 * MS + 500 * US);
	/* Active time: every gap, the long one counted as one interval. */
	assert_int_equal(f.n.t->ph[0].active_ns, 43 * MS - 10 * MS - 500 * US + 1 * MS);
	assert_int_equal(f.n.t->ph[0].last_ns - f.n.t->ph[0].first_ns, 43 * MS);
	fx_fini(&f);
}

static void
test_interval_mode_rate_over_a_steady_stream(void **state)
{
	uint64_t t0, t, last = 0, nd = 0;
	struct fx f;

	(void)state;
	fx_init(&f, "interval:250");
	t0 = f.now;
	/* 2 s of packets every 37 us: every 250 us boundary has a packet after
	 * it, so one ND per boundary passed. */
	for (t = 0; t <= 2 * S; t += 37 * US) {
		f.now = t0 + t;
		nd += run(&f, udp(1, 1));
		last = t;
	}
	assert_int_equal(nd, last / (250 * US));
	assert_int_equal(nd, 7999);
	assert_int_equal(f.n.t->ph[0].last_ns - f.n.t->ph[0].first_ns, last);
	assert_int_equal(f.n.t->ph[0].active_ns, last);
	fx_fini(&f);
}

/* Stalls (the NF or its source off the CPU) lose ND events against the
 * first-to-last duration, but not against the active time. */
static void
test_interval_rate_over_active_time_survives_stalls(void **state)
{
	uint64_t t0, t = 0, nd = 0, x = 12345;
	const uint64_t iv = 2 * MS;
	double rate_active, rate_duration;
	struct fx f;

	(void)state;
	fx_init(&f, "interval:2000");
	t0 = f.now;
	while (t < 4 * S) {
		f.now = t0 + t;
		nd += run(&f, udp(1, 1));
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* Mostly 20..60 us apart; one packet in 200 comes after a stall
		 * of up to 40 ms. */
		t += (x >> 33) % 200 == 0 ? (x >> 40) % (40 * MS) : 20 * US + (x >> 45) % (40 * US);
	}
	rate_active = (double)nd / ((double)f.n.t->ph[0].active_ns / (double)iv);
	rate_duration = (double)nd /
			((double)(f.n.t->ph[0].last_ns - f.n.t->ph[0].first_ns) / (double)iv);
	if (!(rate_active > 0.95 && rate_active < 1.05 && rate_duration < 0.9))
		fail_msg("%llu ND events: rate %.4f over active time, %.4f over the duration",
			 (unsigned long long)nd, rate_active, rate_duration);
	fx_fini(&f);
}

static void
test_none_mode_never_marks(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, "none");
	for (int i = 0; i < 50; i++) {
		f.now += 1 * MS;
		assert_false(run(&f, udp(2, 2)));
	}
	assert_int_equal(f.rand_calls, 0);
	assert_int_equal(f.n.t->packets, 50);
	fx_fini(&f);
}

/* ---- schedules ------------------------------------------------------------------------- */

static const char *SCHEDULE =
    "[{\"seconds\": 1, \"mode\": \"count\", \"value\": 4},\n"
    " {\"seconds\": 0.5, \"mode\": \"none\"},\n"
    " {\"seconds\": 1, \"mode\": \"interval\", \"value\": 10000},\n"
    " {\"seconds\": 2, \"mode\": \"count\", \"value\": 10}]\n";

static void
test_schedule_runs_phases_in_order_from_the_first_packet(void **state)
{
	struct fx f;
	uint64_t t0;
	int nd[4] = {0};

	(void)state;
	fx_init_schedule(&f, SCHEDULE);
	t0 = f.now;
	/* A packet every 1 ms for 6 s: phase boundaries at 1, 1.5, 2.5 s; the
	 * last phase (count:10) holds beyond its 2 s. */
	for (uint64_t i = 0; i <= 6000; i++) {
		f.now = t0 + i * MS;
		if (run(&f, udp((uint8_t)(i % 4), 7)))
			nd[f.n.t->phase]++;
		if (i < 1000)
			assert_int_equal(f.n.t->phase, 0);
		else if (i < 1500)
			assert_int_equal(f.n.t->phase, 1);
		else if (i < 2500)
			assert_int_equal(f.n.t->phase, 2);
		else
			assert_int_equal(f.n.t->phase, 3);
	}
	assert_int_equal(f.n.t->start_ns, t0);
	/* Phase 0: 1000 packets, every 4th. */
	assert_int_equal(f.n.t->ph[0].packets, 1000);
	assert_int_equal(f.n.t->ph[0].nd_events, 250);
	assert_int_equal(f.n.t->ph[0].first_ns, t0);
	assert_int_equal(f.n.t->ph[0].last_ns, t0 + 999 * MS);
	/* Phase 1: none. */
	assert_int_equal(f.n.t->ph[1].packets, 500);
	assert_int_equal(f.n.t->ph[1].nd_events, 0);
	/* Phase 2: 1 s of 10 ms intervals from its first packet (t0 + 1.5 s). */
	assert_int_equal(f.n.t->ph[2].packets, 1000);
	assert_int_equal(f.n.t->ph[2].first_ns, t0 + 1500 * MS);
	assert_int_equal(f.n.t->ph[2].nd_events, 99); /* boundaries +10 ms .. +990 ms */
	/* Phase 3: its own packet count from 1 (3501 packets). */
	assert_int_equal(f.n.t->ph[3].packets, 3501);
	assert_int_equal(f.n.t->ph[3].nd_events, 350);
	assert_int_equal(nd[0] + nd[1] + nd[2] + nd[3], 250 + 99 + 350);
	assert_int_equal(f.n.t->nd_events, 699);
	assert_int_equal(f.rand_calls, 699);
	fx_fini(&f);
}

static void
test_schedule_skips_phases_without_packets(void **state)
{
	struct fx f;
	uint64_t t0;

	(void)state;
	fx_init_schedule(&f, SCHEDULE);
	t0 = f.now;
	run(&f, udp(1, 1));
	/* Silence until 3 s: phases 1 and 2 pass unseen. */
	f.now = t0 + 3 * S;
	run(&f, udp(1, 1));
	assert_int_equal(f.n.t->phase, 3);
	assert_int_equal(f.n.t->ph[0].packets, 1);
	assert_int_equal(f.n.t->ph[1].packets, 0);
	assert_int_equal(f.n.t->ph[2].packets, 0);
	assert_int_equal(f.n.t->ph[3].packets, 1);
	assert_int_equal(f.n.t->ph[3].first_ns, t0 + 3 * S);
	fx_fini(&f);
}

/* ---- per-flow state --------------------------------------------------------------------- */

static void
test_flows_keep_packets_nd_events_and_the_last_random_value(void **state)
{
	struct onvm_flow_key k = {0xc6120001, 0xc6130001, 1000, 53, 17, {0}};
	struct nd_flow *v;
	struct fx f;

	(void)state;
	fx_init(&f, "count:3");
	for (int i = 1; i <= 12; i++)
		run(&f, udp((uint8_t)(1 + i % 2), 1000)); /* flows .1 and .2 alternate */
	/* ND on packets 3, 6, 9, 12: flows .2 (3, 9) and .1 (6, 12). */
	v = onvm_ft_lookup(&f.n.ft, &k);
	assert_non_null(v);
	assert_int_equal(v->packets, 6);
	assert_int_equal(v->nd_events, 2);
	assert_int_equal(v->last_rand, 0x1000 + 4);
	k.src_ip = 0xc6120002;
	v = onvm_ft_lookup(&f.n.ft, &k);
	assert_non_null(v);
	assert_int_equal(v->nd_events, 2);
	assert_int_equal(v->last_rand, 0x1000 + 3);
	assert_int_equal(onvm_ft_count(&f.n.ft), 2);
	fx_fini(&f);
}

static void
test_malformed_packets_are_counted_by_reason(void **state)
{
	uint8_t runt[6] = {0};
	uint8_t badver[34] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00, 0x65};
	struct fx f;

	(void)state;
	fx_init(&f, "count:2");
	run(&f, heap_mbuf(runt, sizeof(runt)));
	assert_true(run(&f, heap_mbuf(badver, sizeof(badver))));
	assert_int_equal(f.n.t->malformed[ONVM_PARSE_TRUNC_L2], 1);
	assert_int_equal(f.n.t->malformed[ONVM_PARSE_BAD_VERSION], 1);
	assert_int_equal(f.n.t->nd_events, 1); /* drawn, stored in no flow */
	assert_int_equal(onvm_ft_count(&f.n.ft), 0);
	fx_fini(&f);
}

static void
test_full_table_counts_untracked_flows(void **state)
{
	struct fx f;
	char err[512] = "";

	(void)state;
	memset(&f, 0, sizeof(f));
	assert_int_equal(nd_conf_parse(&f.conf, "count:1", err, sizeof(err)), 0);
	fx_init_conf(&f, 16); /* 12 flows fit */
	for (int i = 0; i < 20; i++)
		assert_true(run(&f, udp((uint8_t)i, 9)));
	assert_int_equal(onvm_ft_count(&f.n.ft), 12);
	assert_int_equal(f.n.t->untracked, 8);
	assert_int_equal(f.n.t->nd_events, 20);
	fx_fini(&f);
}

static void
test_idle_flows_expire(void **state)
{
	struct fx f;
	uint32_t n = 0;

	(void)state;
	fx_init(&f, "none");
	run(&f, udp(1, 1));
	f.now += 5 * S;
	run(&f, udp(2, 1));
	for (int pass = 0; pass < 8; pass++) {
		n += nd_expire(&f.n, f.now + 1 * S, 3 * S, 16);
		fx_commit_ok(&f);
	}
	assert_int_equal(n, 1);
	assert_int_equal(onvm_ft_count(&f.n.ft), 1);
	assert_int_equal(nd_expire(&f.n, f.now + 100 * S, 0, 64), 0); /* 0: never */
	fx_fini(&f);
}

/* ---- failover ---------------------------------------------------------------------------- */

/* The rhythm lives in state: after a failover the standby continues from the
 * last committed packet, and replaying the uncommitted ones gives the same
 * decisions. */
static void
test_failover_continues_the_count_rhythm_exactly(void **state)
{
	bool before[40];
	struct fx f;

	(void)state;
	fx_init(&f, "count:5");
	for (int i = 0; i < 23; i++)
		before[i] = run(&f, udp((uint8_t)(i % 3), 1)); /* committed one by one */
	/* Seven more, never committed (the NF dies before its batch ends). */
	for (int i = 23; i < 30; i++) {
		struct rte_mbuf *m = udp((uint8_t)(i % 3), 1);

		before[i] = nd_packet(&f.n, m, f.now);
		heap_mbuf_free(m);
	}
	assert_int_equal(f.n.t->nd_events, 6);
	assert_int_equal(test_state_failover(&f.ts), 0);
	fx_open(&f);
	fx_commit_ok(&f);
	assert_int_equal(f.n.t->packets, 23);
	assert_int_equal(f.n.t->nd_events, 4);
	/* The standby handles the same packets and takes the same decisions. */
	for (int i = 23; i < 40; i++) {
		bool nd = run(&f, udp((uint8_t)(i % 3), 1));

		if (i < 30)
			assert_true(nd == before[i]);
		assert_true(nd == ((i + 1) % 5 == 0));
	}
	assert_int_equal(f.n.t->nd_events, 8);
	fx_fini(&f);
}

static void
test_failover_keeps_the_schedule_clock_and_interval_grid(void **state)
{
	struct fx f;
	uint64_t t0;

	(void)state;
	fx_init_schedule(&f, SCHEDULE);
	t0 = f.now;
	for (uint64_t i = 0; i < 1600; i++) { /* into phase 2 (interval 10 ms) */
		f.now = t0 + i * MS;
		run(&f, udp(1, 1));
	}
	assert_int_equal(f.n.t->phase, 2);
	assert_int_equal(test_state_failover(&f.ts), 0);
	fx_open(&f);
	fx_commit_ok(&f);
	/* The grid is still the one from t0 + 1.5 s (boundaries every 10 ms,
	 * the next at +1.6 s); the phase still ends at 2.5 s. */
	f.now = t0 + 1605 * MS;
	assert_true(run(&f, udp(1, 1)));
	f.now = t0 + 1609 * MS;
	assert_false(run(&f, udp(1, 1)));
	f.now = t0 + 1610 * MS;
	assert_true(run(&f, udp(1, 1)));
	f.now = t0 + 2499 * MS;
	run(&f, udp(1, 1));
	assert_int_equal(f.n.t->phase, 2);
	f.now = t0 + 2500 * MS;
	run(&f, udp(1, 1));
	assert_int_equal(f.n.t->phase, 3);
	fx_fini(&f);
}

static void
test_open_refuses_state_of_another_configuration(void **state)
{
	struct nd_conf other;
	struct nondet n;
	char err[512] = "";
	struct fx f;

	(void)state;
	fx_init(&f, "count:5");
	run(&f, udp(1, 1));
	assert_int_equal(nd_conf_parse(&other, "count:6", err, sizeof(err)), 0);
	assert_int_equal(nd_open(&n, &other, &f.ts.set, test_state_region(&f.ts, "nondet"),
				 nd_totals_size(&other), test_state_region(&f.ts, "flows"),
				 nd_flows_size(64), 64, test_rand, &f, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "another mode"));
	/* A flow table of another size. */
	assert_int_equal(nd_open(&n, &f.conf, &f.ts.set, test_state_region(&f.ts, "nondet"),
				 nd_totals_size(&f.conf), test_state_region(&f.ts, "flows"),
				 nd_flows_size(64), 32, test_rand, &f, err, sizeof(err)),
			 -EBADMSG);
	/* No rand hook, a region too small. */
	assert_int_equal(nd_open(&n, &f.conf, &f.ts.set, test_state_region(&f.ts, "nondet"),
				 nd_totals_size(&f.conf), test_state_region(&f.ts, "flows"),
				 nd_flows_size(64), 64, NULL, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(nd_open(&n, &f.conf, &f.ts.set, test_state_region(&f.ts, "nondet"),
				 nd_totals_size(&f.conf) - 1, test_state_region(&f.ts, "flows"),
				 nd_flows_size(64), 64, test_rand, &f, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(nf_state_dirty_chunks(&f.ts.set), 0); /* refusals write nothing */
	fx_fini(&f);
}

/* ---- export ------------------------------------------------------------------------------ */

static void
test_export_has_totals_phases_and_flows(void **state)
{
	char *buf = NULL;
	size_t blen = 0;
	json_error_t je;
	json_t *doc, *ph, *flows;
	FILE *mf;
	struct fx f;
	uint64_t t0;

	(void)state;
	fx_init_schedule(&f, SCHEDULE);
	t0 = f.now;
	for (uint64_t i = 0; i < 1200; i++) {
		f.now = t0 + i * MS;
		run(&f, i == 7 ? arp() : udp((uint8_t)(i % 2), 5));
	}
	mf = open_memstream(&buf, &blen);
	assert_int_equal(nd_export(&f.n, mf), 0);
	fclose(mf);
	doc = json_loads(buf, 0, &je);
	if (doc == NULL)
		fail_msg("export is not JSON (%s): %s", je.text, buf);
	assert_string_equal(json_string_value(json_object_get(doc, "mode")), "schedule:s.json");
	assert_int_equal(json_integer_value(json_object_get(doc, "packets")), 1200);
	assert_int_equal(json_integer_value(json_object_get(doc, "nd_events")), 250);
	assert_int_equal(json_integer_value(json_object_get(doc, "non_ip")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "current_phase")), 1);
	ph = json_object_get(doc, "phases");
	assert_int_equal(json_array_size(ph), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ph, 0), "mode")),
			    "count");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 0), "value")), 4);
	assert_true(json_real_value(json_object_get(json_array_get(ph, 1), "seconds")) == 0.5);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 0), "packets")),
			 1000);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 0), "nd_events")),
			 250);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 0), "duration_ns")),
			 999 * MS);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 1), "packets")), 200);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 1), "duration_ns")),
			 199 * MS);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 1), "active_ns")),
			 199 * MS);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 1), "max_gap_ns")),
			 1 * MS);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ph, 2), "packets")), 0);
	flows = json_object_get(doc, "flows");
	assert_int_equal(json_array_size(flows), 2);
	{
		uint64_t pk = 0, nd = 0;

		for (size_t i = 0; i < 2; i++) {
			json_t *fl = json_array_get(flows, i);

			assert_string_equal(json_string_value(json_object_get(fl, "dst")),
					    "198.19.0.1");
			assert_int_equal(json_integer_value(json_object_get(fl, "sport")), 5);
			pk += (uint64_t)json_integer_value(json_object_get(fl, "packets"));
			nd += (uint64_t)json_integer_value(json_object_get(fl, "nd_events"));
		}
		assert_int_equal(pk, 1199);
		/* The ARP packet (#8) was an ND packet of no flow. */
		assert_int_equal(nd, 249);
	}
	json_decref(doc);
	free(buf);
	fx_fini(&f);
}

static void
test_export_escapes_the_mode_and_writes_atomically(void **state)
{
	char dir[] = "/tmp/test_nondet_XXXXXX", file[64], tmp[80];
	json_error_t je;
	json_t *doc;
	struct fx f;

	(void)state;
	fx_init(&f, "none");
	snprintf(f.conf.source, sizeof(f.conf.source), "schedule:/tmp/a\"b\\c\n.json");
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/x.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	assert_int_equal(nd_export_file(&f.n, file), 0);
	assert_int_equal(access(tmp, F_OK), -1);
	doc = json_load_file(file, 0, &je);
	if (doc == NULL)
		fail_msg("export is not JSON: %s", je.text);
	assert_string_equal(json_string_value(json_object_get(doc, "mode")),
			    "schedule:/tmp/a\"b\\c\n.json");
	assert_int_equal(json_array_size(json_object_get(doc, "flows")), 0);
	json_decref(doc);
	unlink(file);
	rmdir(dir);
	assert_true(nd_export_file(&f.n, "/nonexistent/dir/x.json") < 0);
	fx_fini(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mode_arguments),
	    cmocka_unit_test(test_bad_mode_arguments_are_rejected_with_a_reason),
	    cmocka_unit_test(test_schedule_parses_phases),
	    cmocka_unit_test(test_schedule_rejections_name_file_line_column_and_field),
	    cmocka_unit_test(test_schedule_rejects_too_many_phases),
	    cmocka_unit_test(test_digest_tells_configurations_apart),
	    cmocka_unit_test(test_count_mode_marks_every_nth_packet),
	    cmocka_unit_test(test_count_one_marks_every_packet),
	    cmocka_unit_test(test_interval_mode_marks_the_first_packet_after_each_boundary),
	    cmocka_unit_test(test_interval_mode_rate_over_a_steady_stream),
	    cmocka_unit_test(test_interval_rate_over_active_time_survives_stalls),
	    cmocka_unit_test(test_none_mode_never_marks),
	    cmocka_unit_test(test_schedule_runs_phases_in_order_from_the_first_packet),
	    cmocka_unit_test(test_schedule_skips_phases_without_packets),
	    cmocka_unit_test(test_flows_keep_packets_nd_events_and_the_last_random_value),
	    cmocka_unit_test(test_malformed_packets_are_counted_by_reason),
	    cmocka_unit_test(test_full_table_counts_untracked_flows),
	    cmocka_unit_test(test_idle_flows_expire),
	    cmocka_unit_test(test_failover_continues_the_count_rhythm_exactly),
	    cmocka_unit_test(test_failover_keeps_the_schedule_clock_and_interval_grid),
	    cmocka_unit_test(test_open_refuses_state_of_another_configuration),
	    cmocka_unit_test(test_export_has_totals_phases_and_flows),
	    cmocka_unit_test(test_export_escapes_the_mode_and_writes_atomically),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
