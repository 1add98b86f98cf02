/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The dpi NF's engine (nfs/dpi/dpi_engine.c) on heap-backed state regions,
 * fed with the real traces.
 *
 * What matters most is that nDPI's state -- a module and flows full of
 * pointers, written by a library that never calls nf_touch() -- is fully
 * covered by the engine's tracking: after every packet, every committed
 * region's replica must equal its canonical copy, and a standby that takes
 * over after a crash in the middle of a batch (uncommitted packets rolled
 * back, then handed to it again) must classify every flow exactly as an
 * engine that never failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pcap.h>

#include "dpi_engine.h"
#include "heap_mbuf.h"
#include "test_state.h"

#define HEAP_MB	 32
#define FLOWS	 1024
#define MAX_PKTS 4096

static const char *const traces[] = {
	"bittorrent.pcap", "dns.pcap",	  "ftp.pcap", "http-manipulated.pcap",
	"mpeg.pcap",	   "quic.pcap",	  "skype-conference-call.pcap",
	"smtp.pcap",	   "ssh.pcap",	  "tor.pcap", "webex.pcap", "wireguard.pcap",
};

struct trace {
	struct rte_mbuf *pkts[MAX_PKTS];
	uint64_t ts_ns[MAX_PKTS];
	unsigned int n;
};

static int
load_trace(const char *name, struct trace *t)
{
	char path[4096], err[PCAP_ERRBUF_SIZE];
	const char *dir = getenv("ONVM_TRACES");
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;

	if (dir != NULL)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "%s/traces/%s", ONVM_SRC_DIR, name);
	pc = pcap_open_offline(path, err);
	if (pc == NULL)
		return -1;
	t->n = 0;
	while (t->n < MAX_PKTS && pcap_next_ex(pc, &h, &data) == 1) {
		t->pkts[t->n] = heap_mbuf(data, h->caplen);
		t->ts_ns[t->n] = (uint64_t)h->ts.tv_sec * 1000000000ull + h->ts.tv_usec * 1000ull;
		t->n++;
	}
	pcap_close(pc);
	return 0;
}

static void
free_trace(struct trace *t)
{
	for (unsigned int i = 0; i < t->n; i++)
		heap_mbuf_free(t->pkts[i]);
	t->n = 0;
}

struct rig {
	struct test_state ts;
	struct dpi_engine eng;
	struct dpi_config cfg;
};

static struct dpi_config
test_config(void)
{
	struct dpi_config c = DPI_CONFIG_DEFAULT;

	c.flows = FLOWS;
	c.heap_mb = HEAP_MB;
	return c;
}

static void
rig_open_engine(struct rig *r)
{
	memset(&r->eng, 0, sizeof(r->eng));
	assert_int_equal(dpi_engine_process_init(&r->eng), 0);
	assert_int_equal(dpi_engine_open(&r->eng, &r->cfg, &r->ts.set,
					 test_state_region(&r->ts, DPI_REGION_FLOWS),
					 test_state_region(&r->ts, DPI_REGION_TOTALS),
					 test_state_region(&r->ts, DPI_REGION_HEAP)),
			 0);
}

static void
rig_init(struct rig *r)
{
	struct nf_state_request reqs[3];

	r->cfg = test_config();
	assert_int_equal(dpi_engine_regions(&r->cfg, reqs), 0);
	assert_int_equal(test_state_init(&r->ts, reqs, 3), 0);
	rig_open_engine(r);
	nf_state_commit(&r->ts.set); /* what an NF's first batch does */
}

static void
rig_fini(struct rig *r)
{
	test_state_fini(&r->ts);
}

static void
feed(struct rig *r, struct trace *t, unsigned int from, unsigned int to)
{
	for (unsigned int i = from; i < to; i++)
		dpi_engine_packet(&r->eng, t->pkts[i], t->ts_ns[i]);
}

/* Canonical == replica over the used part of every region (the heap's
 * unused tail is zero in both and would only cost time). */
static int
tracked_everything(struct rig *r)
{
	const struct onvm_rh_stats *hs = onvm_rh_stats(&r->eng.heap);

	for (unsigned int i = 0; i < r->ts.set.n_regions; i++) {
		const uint8_t *c = nf_state_region_ptr(&r->ts.set, i);
		const uint8_t *p = nf_state_replica_ptr(&r->ts.set, i);
		uint64_t len = nf_state_region_size(&r->ts.set, i);

		if (strcmp(r->ts.layout.regions[i].name, DPI_REGION_HEAP) == 0)
			len = hs->peak_used;
		if (memcmp(c, p, len) != 0) {
			for (uint64_t b = 0; b < len; b++)
				if (c[b] != p[b]) {
					print_error("%s: byte %llu written without a touch\n",
						    r->ts.layout.regions[i].name,
						    (unsigned long long)b);
					break;
				}
			return -1;
		}
	}
	return 0;
}

/* One line per flow: key and result, in table order (deterministic). */
static char *
results(struct rig *r)
{
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);

	assert_non_null(out);
	out[0] = '\0';
	for (uint32_t i = 0; i < onvm_ft_capacity(&r->eng.flows); i++) {
		const struct dpi_flow *f = onvm_ft_slot_value(&r->eng.flows, i);
		const struct onvm_flow_key *k;

		if (f == NULL)
			continue;
		k = onvm_ft_key(&r->eng.flows, f);
		if (cap - len < 256) {
			out = realloc(out, cap *= 2);
			assert_non_null(out);
		}
		len += (size_t)snprintf(out + len, cap - len,
					"%08x:%u-%08x:%u/%u %u.%u state %u guessed %u at %u pkts %llu\n",
					k->src_ip, k->sport, k->dst_ip, k->dport, k->proto,
					f->master, f->app, f->state, f->guessed, f->detect_pkts,
					(unsigned long long)f->packets);
	}
	return out;
}

static char *
run_whole(struct trace *t)
{
	struct rig r;
	char *res;

	rig_init(&r);
	for (unsigned int i = 0; i < t->n; i++) {
		dpi_engine_batch_begin(&r.eng);
		feed(&r, t, i, i + 1);
		dpi_engine_batch_end(&r.eng);
		nf_state_commit(&r.ts.set);
	}
	dpi_engine_batch_begin(&r.eng);
	dpi_engine_finish(&r.eng);
	dpi_engine_batch_end(&r.eng);
	res = results(&r);
	rig_fini(&r);
	return res;
}

static bool
have_traces(void)
{
	struct trace *t = calloc(1, sizeof(*t));
	bool ok = t != NULL && load_trace("dns.pcap", t) == 0;

	if (t != NULL)
		free_trace(t);
	free(t);
	return ok;
}

/* Every byte nDPI (and the engine) writes reaches the replica with the
 * batch that wrote it: checked after every packet of every trace. */
static void
test_dpi_every_write_is_tracked(void **unused)
{
	struct trace *t = calloc(1, sizeof(*t));

	(void)unused;
	if (!have_traces())
		skip();
	for (unsigned int k = 0; k < RTE_DIM(traces); k++) {
		struct rig r;

		assert_int_equal(load_trace(traces[k], t), 0);
		rig_init(&r);
		assert_int_equal(tracked_everything(&r), 0);
		for (unsigned int i = 0; i < t->n; i++) {
			dpi_engine_batch_begin(&r.eng);
			feed(&r, t, i, i + 1);
			dpi_engine_batch_end(&r.eng);
			nf_state_commit(&r.ts.set);
			if (tracked_everything(&r) != 0)
				fail_msg("%s: untracked write at packet %u", traces[k], i + 1);
		}
		dpi_engine_batch_begin(&r.eng);
		dpi_engine_finish(&r.eng);
		dpi_engine_batch_end(&r.eng);
		nf_state_commit(&r.ts.set);
		assert_int_equal(tracked_everything(&r), 0);
		rig_fini(&r);
		free_trace(t);
	}
	free(t);
}

/* The engine names the protocols the traces are named for. */
static void
test_dpi_names_the_trace_protocols(void **unused)
{
	static const struct {
		const char *trace, *expect;
	} cases[] = {
		{"dns.pcap", "DNS"},	 {"http-manipulated.pcap", "HTTP"}, {"ssh.pcap", "SSH"},
		{"smtp.pcap", "SMTP"}, {"quic.pcap", "QUIC"},		     {"ftp.pcap", "FTP_CONTROL"},
		{"bittorrent.pcap", "BitTorrent"}, {"wireguard.pcap", "WireGuard"},
	};
	struct trace *t = calloc(1, sizeof(*t));

	(void)unused;
	if (!have_traces())
		skip();
	for (unsigned int k = 0; k < RTE_DIM(cases); k++) {
		assert_int_equal(load_trace(cases[k].trace, t), 0);
		{
			struct rig r;
			bool found = false;
			char name[64];

			rig_init(&r);
			dpi_engine_batch_begin(&r.eng);
			feed(&r, t, 0, t->n);
			dpi_engine_finish(&r.eng);
			dpi_engine_batch_end(&r.eng);
			for (uint32_t i = 0; i < onvm_ft_capacity(&r.eng.flows) && !found; i++) {
				const struct dpi_flow *f = onvm_ft_slot_value(&r.eng.flows, i);

				if (f != NULL &&
				    strstr(dpi_engine_proto_name(&r.eng, f->master, f->app, name,
								 sizeof(name)),
					   cases[k].expect) != NULL)
					found = true;
			}
			if (!found)
				fail_msg("%s: no flow detected as %s", cases[k].trace,
					 cases[k].expect);
			rig_fini(&r);
		}
		free_trace(t);
	}
	free(t);
}

/*
 * A crash in the middle of a batch: `lost` packets processed, not committed.
 * The standby recovers the regions, adopts the engine, and is handed the
 * same packets again (as libnf does with a batch the dead NF had not
 * started, and as a retransmission would): every flow must end up exactly
 * as in a run without the crash.  Cut points spread over each trace.
 */
static void
test_dpi_failover_mid_batch_gives_same_results(void **unused)
{
	struct trace *t = calloc(1, sizeof(*t));

	(void)unused;
	if (!have_traces())
		skip();
	for (unsigned int k = 0; k < RTE_DIM(traces); k++) {
		char *want;

		assert_int_equal(load_trace(traces[k], t), 0);
		want = run_whole(t);
		for (unsigned int q = 1; q <= 3; q++) {
			unsigned int cut = t->n * q / 4, lost = RTE_MIN(5u, t->n - cut);
			struct rig r;
			char *got;

			rig_init(&r);
			for (unsigned int i = 0; i < cut; i++) {
				dpi_engine_batch_begin(&r.eng);
				feed(&r, t, i, i + 1);
				dpi_engine_batch_end(&r.eng);
				nf_state_commit(&r.ts.set);
			}
			/* The batch that dies: processed, never committed. */
			dpi_engine_batch_begin(&r.eng);
			feed(&r, t, cut, cut + lost);
			assert_int_equal(test_state_failover(&r.ts), 0);
			rig_open_engine(&r); /* adopts the module and flows */
			/* Exactly the last commit: nothing of the lost batch left,
			 * not even in nDPI's caches. */
			if (tracked_everything(&r) != 0)
				fail_msg("%s: cut at %u: state after adoption is not the last commit",
					 traces[k], cut);
			for (unsigned int i = cut; i < t->n; i++) {
				dpi_engine_batch_begin(&r.eng);
				feed(&r, t, i, i + 1);
				dpi_engine_batch_end(&r.eng);
				nf_state_commit(&r.ts.set);
			}
			dpi_engine_batch_begin(&r.eng);
			dpi_engine_finish(&r.eng);
			dpi_engine_batch_end(&r.eng);
			got = results(&r);
			if (strcmp(got, want) != 0)
				fail_msg("%s: cut at %u: results differ\n--- want\n%s--- got\n%s",
					 traces[k], cut, want, got);
			free(got);
			rig_fini(&r);
		}
		free(want);
		free_trace(t);
	}
	free(t);
}

static void
push_frame(struct rig *r, const uint8_t *bytes, size_t len)
{
	struct rte_mbuf *m = heap_mbuf(bytes, len);

	assert_non_null(m);
	dpi_engine_batch_begin(&r->eng);
	dpi_engine_packet(&r->eng, m, 1);
	dpi_engine_batch_end(&r->eng);
	heap_mbuf_free(m);
	assert_int_equal(test_state_commit_check(&r->ts), 0);
}

/* Frames nDPI must never see are counted by reason, and nothing breaks. */
static void
test_dpi_counts_malformed_frames(void **unused)
{
	uint8_t f[64] = {0};
	struct rig r;

	(void)unused;
	rig_init(&r);
	push_frame(&r, f, 10); /* shorter than Ethernet */
	f[12] = 0x86, f[13] = 0xdd;
	push_frame(&r, f, 60); /* IPv6: not IPv4 */
	f[12] = 0x08, f[13] = 0x00, f[14] = 0x41;
	push_frame(&r, f, 60); /* IHL 1 */
	f[14] = 0x45, f[16] = 0x00, f[17] = 200;
	push_frame(&r, f, 60); /* total length beyond the frame */
	f[17] = 40, f[23] = 6, f[20] = 0x00, f[21] = 0x10; /* fragment offset 16 */
	push_frame(&r, f, 60);
	assert_int_equal(r.eng.t->malformed[ONVM_PARSE_TRUNC_L2], 1);
	assert_int_equal(r.eng.t->non_ip, 1);
	assert_int_equal(r.eng.t->malformed[ONVM_PARSE_BAD_IHL], 1);
	assert_int_equal(r.eng.t->malformed[ONVM_PARSE_BAD_TOTLEN], 1);
	assert_int_equal(r.eng.t->fragments, 1);
	assert_int_equal(r.eng.t->packets, 5);
	assert_int_equal(onvm_ft_count(&r.eng.flows), 0);
	rig_fini(&r);
}

/* Regions holding something else are refused, not adopted. */
static void
test_dpi_refuses_foreign_state(void **unused)
{
	struct nf_state_request reqs[3];
	struct rig r;
	uint8_t *heap;

	(void)unused;
	r.cfg = test_config();
	assert_int_equal(dpi_engine_regions(&r.cfg, reqs), 0);
	assert_int_equal(test_state_init(&r.ts, reqs, 3), 0);
	heap = test_state_region(&r.ts, DPI_REGION_HEAP);
	memset(heap, 0x5a, 4096);
	memset(&r.eng, 0, sizeof(r.eng));
	assert_int_equal(dpi_engine_process_init(&r.eng), 0);
	assert_true(dpi_engine_open(&r.eng, &r.cfg, &r.ts.set,
				    test_state_region(&r.ts, DPI_REGION_FLOWS),
				    test_state_region(&r.ts, DPI_REGION_TOTALS), heap) < 0);
	assert_non_null(strstr(r.eng.err, "something else"));
	rig_fini(&r);
}

/* Region sizes are validated: the heap must hold nDPI's module. */
static void
test_dpi_rejects_bad_sizes(void **unused)
{
	struct nf_state_request reqs[3];
	struct dpi_config c = test_config();

	(void)unused;
	c.heap_mb = DPI_HEAP_MIN_MB - 1;
	assert_int_equal(dpi_engine_regions(&c, reqs), -EINVAL);
	c = test_config();
	c.flows = 1000; /* not a power of two */
	assert_int_equal(dpi_engine_regions(&c, reqs), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dpi_counts_malformed_frames),
		cmocka_unit_test(test_dpi_refuses_foreign_state),
		cmocka_unit_test(test_dpi_rejects_bad_sizes),
		cmocka_unit_test(test_dpi_names_the_trace_protocols),
		cmocka_unit_test(test_dpi_every_write_is_tracked),
		cmocka_unit_test(test_dpi_failover_mid_batch_gives_same_results),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
