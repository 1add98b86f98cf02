/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * dpi -- protocol detection with nDPI; every packet passes unchanged.
 *
 * The engine (dpi_engine.c) keeps nDPI's whole state in libnf state
 * regions; this file wires it to libnf: a batch handler (the engine needs
 * "end of batch" to catch nDPI's cache writes before libnf commits), a tick
 * that expires idle flows and prints stats, and a fini that finishes the
 * flows still under detection and writes the JSON export.
 *
 * A standby maps the regions but must not touch them while the active works
 * on them: it only runs nDPI's process-wide set-up before parking, and opens
 * the engine -- adopting the module and flows in place -- when it is first
 * called after promotion.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpi_engine.h"
#include "onvm_nf_output.h"
#include "onvm_nflib.h"

struct dpi_nf {
	struct nf_ctx *nf;
	struct dpi_engine eng;
	struct dpi_config cfg;
	bool open;
	bool failed;
	uint32_t print_s;
	uint64_t last_print_ns;
	const char *export_path;
};

static int
open_engine(struct dpi_nf *d)
{
	struct nf_ctx *nf = d->nf;

	if (dpi_engine_open(&d->eng, &d->cfg, nf_state(nf), nf_state_ptr(nf, DPI_REGION_FLOWS),
			    nf_state_ptr(nf, DPI_REGION_TOTALS),
			    nf_state_ptr(nf, DPI_REGION_HEAP)) < 0) {
		fprintf(stderr, "dpi: %s\n", d->eng.err);
		d->failed = true;
		nf_stop(nf);
		return -1;
	}
	d->open = true;
	return 0;
}

/* The active opened at start; a promoted standby opens on first use (a
 * batch, a tick, or the final export if the promotion came last). */
static bool
ensure_open(struct dpi_nf *d)
{
	if (d->open)
		return true;
	if (d->failed || nf_is_standby(d->nf))
		return false;
	return open_engine(d) == 0;
}

static void
dpi_batch(struct rte_mbuf **pkts, uint16_t n, struct nf_ctx *nf)
{
	struct dpi_nf *d = nf_user(nf);
	uint64_t now = nf_clock_ns();

	/* Observe only: every packet keeps libnf's default action, NEXT. */
	if (!ensure_open(d))
		return;
	dpi_engine_batch_begin(&d->eng);
	for (uint16_t i = 0; i < n; i++)
		dpi_engine_packet(&d->eng, pkts[i], now);
	dpi_engine_batch_end(&d->eng);
}

static void
print_summary(struct dpi_nf *d)
{
	const struct dpi_totals *t = d->eng.t;
	char name[64];

	printf("%s: %" PRIu64 " pkts, %u flows (%" PRIu64 " classified), non-ip %" PRIu64
	       ", untracked %" PRIu64 ", heap %" PRIu64 " MB",
	       nf_name(d->nf), t->packets, onvm_ft_count(&d->eng.flows), t->flows_classified,
	       t->non_ip, t->untracked, onvm_rh_stats(&d->eng.heap)->peak_used >> 20);
	for (unsigned int i = 0, shown = 0; i < DPI_PROTO_SLOTS && shown < 8; i++)
		if (t->proto[i].flows > 0) {
			printf("%s %s=%" PRIu64, shown == 0 ? " |" : ",",
			       dpi_engine_proto_name(&d->eng, (uint16_t)i, 0, name, sizeof(name)),
			       t->proto[i].flows);
			shown++;
		}
	printf("\n");
	fflush(stdout);
}

/* Telemetry (/onvm/nf/app,ID): totals, then the protocols with the most
 * flows as "p_<name>" (flows), as many as the table holds. */
static void
publish(struct dpi_nf *d)
{
	const struct dpi_totals *t = d->eng.t;
	bool shown[DPI_PROTO_SLOTS] = {false};
	uint64_t bad = 0;
	char name[64], key[ONVM_NF_APP_STAT_NAME];

	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++)
		bad += t->malformed[r];
	nf_app_stats_begin(d->nf);
	nf_app_stat(d->nf, "packets", t->packets);
	nf_app_stat(d->nf, "flows", onvm_ft_count(&d->eng.flows));
	nf_app_stat(d->nf, "flows_classified", t->flows_classified);
	nf_app_stat(d->nf, "non_ip", t->non_ip);
	nf_app_stat(d->nf, "malformed", bad);
	nf_app_stat(d->nf, "untracked", t->untracked + t->no_memory);
	nf_app_stat(d->nf, "heap_used_kb", onvm_rh_stats(&d->eng.heap)->peak_used >> 10);
	for (;;) {
		int best = -1;

		for (int i = 0; i < DPI_PROTO_SLOTS; i++)
			if (!shown[i] && t->proto[i].flows > 0 &&
			    (best < 0 || t->proto[i].flows > t->proto[best].flows))
				best = i;
		if (best < 0)
			break;
		shown[best] = true;
		snprintf(key, sizeof(key), "p_%s",
			 dpi_engine_proto_name(&d->eng, (uint16_t)best, 0, name, sizeof(name)));
		if (nf_app_stat(d->nf, key, t->proto[best].flows) < 0)
			break;
	}
	nf_app_stats_end(d->nf);
}

static void
dpi_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	struct dpi_nf *d = nf_user(nf);

	if (!ensure_open(d))
		return;
	dpi_engine_batch_begin(&d->eng);
	dpi_engine_expire(&d->eng, now_ns, 4096);
	dpi_engine_batch_end(&d->eng);
	publish(d);
	if (d->print_s != 0 && now_ns - d->last_print_ns >= d->print_s * 1000000000ULL) {
		d->last_print_ns = now_ns;
		print_summary(d);
	}
}

static int export_failed;

static void
dpi_fini(struct nf_ctx *nf)
{
	struct dpi_nf *d = nf_user(nf);

	if (!ensure_open(d))
		return;
	dpi_engine_batch_begin(&d->eng);
	dpi_engine_finish(&d->eng);
	dpi_engine_batch_end(&d->eng);
	publish(d);
	print_summary(d);
	if (d->export_path != NULL && dpi_engine_export(&d->eng, d->export_path) < 0) {
		fprintf(stderr, "dpi: cannot write %s\n", d->export_path);
		export_failed = 1;
	}
}

static int
parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL] -- -r SVC [libnf options] -- [-f FLOWS] [-H HEAP_MB] [-t IDLE_S]\n"
		"       [-T TCP_PKTS] [-U UDP_PKTS] [-e FILE] [-p SECS]\n"
		"  -f  flow table capacity, a power of two (default 65536)\n"
		"  -H  nDPI heap region in MB, %u..1024 (default 128)\n"
		"  -t  flow idle timeout in seconds (default 120)\n"
		"  -T/-U  packets of a TCP/other flow before giving up detection (80/24)\n"
		"  -e  JSON export on exit (%%i = instance id); -p print stats every SECS\n",
		prog, DPI_HEAP_MIN_MB);
}

int
main(int argc, char **argv)
{
	static char export_buf[4096];
	static struct dpi_nf d = {.cfg = DPI_CONFIG_DEFAULT, .print_s = 5};
	struct nf_ops ops = {.batch = dpi_batch, .tick = dpi_tick, .tick_ms = 100, .fini = dpi_fini};
	struct nf_state_request reqs[3];
	struct nf_ctx *nf;
	uint32_t v;
	int n, opt, ret = 0;

	n = nf_init(argc, argv, "dpi", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	d.nf = nf;
	while ((opt = getopt(argc, argv, "f:H:t:T:U:e:p:h")) != -1) {
		int bad = 0;

		switch (opt) {
		case 'f':
			bad = parse_u32(optarg, ONVM_FT_CAPACITY_MIN, ONVM_FT_CAPACITY_MAX, &d.cfg.flows) ||
			      (d.cfg.flows & (d.cfg.flows - 1)) != 0;
			break;
		case 'H':
			bad = parse_u32(optarg, DPI_HEAP_MIN_MB, 1024, &d.cfg.heap_mb);
			break;
		case 't':
			bad = parse_u32(optarg, 1, 86400, &v);
			d.cfg.idle_ns = (uint64_t)v * 1000000000ull;
			break;
		case 'T':
			bad = parse_u32(optarg, 1, 100000, &d.cfg.max_pkts_tcp);
			break;
		case 'U':
			bad = parse_u32(optarg, 1, 100000, &d.cfg.max_pkts_udp);
			break;
		case 'e':
			d.export_path = optarg;
			break;
		case 'p':
			bad = parse_u32(optarg, 0, 86400, &d.print_s);
			break;
		default:
			bad = 1;
		}
		if (bad) {
			usage(argv[0]);
			ret = 2;
			goto out;
		}
	}
	if (optind != argc) {
		usage(argv[0]);
		ret = 2;
		goto out;
	}
	if (d.export_path != NULL) {
		if (nf_expand_instance(d.export_path, nf_instance_id(nf), export_buf,
				       sizeof(export_buf)) < 0) {
			fprintf(stderr, "dpi: -e path too long\n");
			ret = 2;
			goto out;
		}
		d.export_path = export_buf;
	}
	if (dpi_engine_regions(&d.cfg, reqs) < 0)
		abort(); /* options were range-checked above */
	for (int i = 0; i < 3; i++)
		if (nf_state_declare(nf, reqs[i].name, reqs[i].size, reqs[i].chunk_size) < 0)
			ret = 1;
	if (ret != 0 || nf_state_map(nf) < 0) {
		fprintf(stderr, "dpi: no state memory for %u flows and a %u MB heap\n", d.cfg.flows,
			d.cfg.heap_mb);
		ret = 1;
		goto out;
	}
	if (dpi_engine_process_init(&d.eng) < 0) {
		fprintf(stderr, "dpi: %s\n", d.eng.err);
		ret = 1;
		goto out;
	}
	/* The active builds (or adopts) now; a standby waits for promotion. */
	if (!nf_is_standby(nf) && open_engine(&d) < 0) {
		ret = 1;
		goto out;
	}
	nf_run(nf, &ops, &d);
	if (d.failed)
		ret = 1;
out:
	nf_fini(nf); /* runs dpi_fini() when the NF ran */
	return ret != 0 ? ret : export_failed;
}
