/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nondet -- a toy NF with a configured rate of non-deterministic events, for
 * the ND-rate benchmarks (the paper's Table IVb).
 *
 *   nondet [EAL] -- -r SVC [libnf options] -- -m MODE [-f FLOWS] [-t IDLE_MS]
 *                                             [-p SECS] [-e FILE]
 *
 * MODE is count:N, interval:US, schedule:FILE or none (see README.md).  The
 * logic is in nondet_core.c; this file is the libnf glue: options, state
 * regions, the ND hook (nf_nd_rand, which marks the packet), the idle sweep
 * on the tick, periodic stats and the JSON export on exit.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nondet_core.h"
#include "onvm_nf_output.h"
#include "onvm_nflib.h"

#define TICK_MS 100

struct nd_nf {
	struct nd_conf conf;
	struct nondet n;
	bool opened; /* a standby opens its state when it is promoted */
	uint32_t flows;
	uint64_t idle_ns;
	uint32_t print_s;
	uint64_t last_print_ns;
	const char *export_path;
	char export_buf[4096];
};

static struct nd_nf g;
static int exit_status;

static uint64_t
nd_rand(void *arg)
{
	return nf_nd_rand(arg); /* marks the packet being handled */
}

/* For an active at start-up; for a standby at its first handler call after
 * promotion (until then the regions belong to the live active). */
static bool
nd_nf_open(struct nf_ctx *nf)
{
	char err[512];

	if (nd_open(&g.n, &g.conf, nf_state(nf), nf_state_ptr(nf, "nondet"),
		    nd_totals_size(&g.conf), nf_state_ptr(nf, "flows"), nd_flows_size(g.flows),
		    g.flows, nd_rand, nf, err, sizeof(err)) < 0) {
		fprintf(stderr, "nondet: state: %s\n", err);
		return false;
	}
	g.opened = true;
	return true;
}

static void
nd_nf_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	if (unlikely(!g.opened) && !nd_nf_open(nf)) {
		exit_status = 1;
		nf_stop(nf);
		nf_pkt_drop(meta);
		return;
	}
	nd_packet(&g.n, pkt, nf_clock_ns());
	nf_pkt_next(meta);
}

static void
nd_nf_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	uint32_t budget;

	/* Ticks run only in an active NF: a promoted standby opens here if no
	 * packet came first. */
	if (unlikely(!g.opened) && !nd_nf_open(nf)) {
		exit_status = 1;
		nf_stop(nf);
		return;
	}
	budget = onvm_ft_capacity(&g.n.ft) / 16;
	nd_expire(&g.n, now_ns, g.idle_ns, budget < 256 ? 256 : budget);
	if (g.print_s != 0 && now_ns - g.last_print_ns >= g.print_s * 1000000000ull) {
		g.last_print_ns = now_ns;
		nd_print_summary(&g.n, nf_name(nf), stdout);
	}
}

static void
nd_nf_fini(struct nf_ctx *nf)
{
	/* A standby promoted just before the end may not have opened yet. */
	if (!g.opened && !nf_is_standby(nf) && !nd_nf_open(nf))
		exit_status = 1;
	if (!g.opened)
		return;
	nd_print_summary(&g.n, nf_name(nf), stdout);
	if (g.export_path != NULL && nd_export_file(&g.n, g.export_path) < 0) {
		fprintf(stderr, "nondet: cannot write %s\n", g.export_path);
		exit_status = 1;
	}
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL] -- -r SVC [libnf options] -- -m MODE [-f FLOWS] [-t IDLE_MS]\n"
		"                 [-p SECS] [-e FILE]\n"
		"  -m MODE     count:N (every Nth packet is ND), interval:US (the first packet\n"
		"              after every US microseconds), schedule:FILE (JSON phases), none\n"
		"  -f FLOWS    flow table capacity, a power of two 16..2^24 (default %u)\n"
		"  -t IDLE_MS  forget flows idle this long (default %u, 0: never)\n"
		"  -p SECS     print stats every SECS seconds (0: off, the default)\n"
		"  -e FILE     JSON export on exit (%%i: the instance id)\n",
		prog, ND_FLOWS_DEFAULT, ND_IDLE_MS_DEFAULT);
}

static int
parse_ul(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	*out = strtoul(s, &end, 10);
	return *end == '\0' && *out <= max ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct nf_ops ops = {
	    .pkt = nd_nf_packet, .tick = nd_nf_tick, .tick_ms = TICK_MS, .fini = nd_nf_fini,
	};
	const char *mode = NULL;
	unsigned long v;
	struct nf_ctx *nf;
	char err[512];
	int n, opt;

	g.flows = ND_FLOWS_DEFAULT;
	g.idle_ns = ND_IDLE_MS_DEFAULT * 1000000ull;
	n = nf_init(argc, argv, "nondet", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "m:f:t:p:e:h")) != -1) {
		switch (opt) {
		case 'm':
			mode = optarg;
			break;
		case 'f':
			if (parse_ul(optarg, 1ul << 24, &v) < 0 || v < ONVM_FT_CAPACITY_MIN ||
			    (v & (v - 1)) != 0) {
				fprintf(stderr, "nondet: -f wants a power of two, 16..2^24\n");
				goto bad_usage;
			}
			g.flows = (uint32_t)v;
			break;
		case 't':
			if (parse_ul(optarg, UINT32_MAX, &v) < 0) {
				fprintf(stderr, "nondet: -t wants milliseconds\n");
				goto bad_usage;
			}
			g.idle_ns = v * 1000000ull;
			break;
		case 'p':
			if (parse_ul(optarg, 86400, &v) < 0) {
				fprintf(stderr, "nondet: -p wants seconds\n");
				goto bad_usage;
			}
			g.print_s = (uint32_t)v;
			break;
		case 'e':
			if (nf_expand_instance(optarg, nf_instance_id(nf), g.export_buf,
					       sizeof(g.export_buf)) < 0) {
				fprintf(stderr, "nondet: -e path too long\n");
				goto bad_usage;
			}
			g.export_path = g.export_buf;
			break;
		default:
			goto bad_usage;
		}
	}
	if (mode == NULL || optind != argc) {
		fprintf(stderr, "nondet: %s\n",
			mode == NULL ? "a mode (-m) is required" : "unexpected argument");
		goto bad_usage;
	}
	if (nd_conf_parse(&g.conf, mode, err, sizeof(err)) < 0) {
		fprintf(stderr, "nondet: %s\n", err);
		exit_status = 1;
		goto out;
	}
	if (nf_state_declare(nf, "nondet", nd_totals_size(&g.conf), 64) < 0 ||
	    nf_state_declare(nf, "flows", nd_flows_size(g.flows), 256) < 0 ||
	    nf_state_map(nf) < 0) {
		fprintf(stderr, "nondet: no state memory for %u flows\n", g.flows);
		exit_status = 1;
		goto out;
	}
	if (!nf_is_standby(nf) && !nd_nf_open(nf)) {
		exit_status = 1;
		goto out;
	}
	nf_run(nf, &ops, &g);
	goto out;
bad_usage:
	usage(argv[0]);
	exit_status = 2;
out:
	nf_fini(nf); /* runs nd_nf_fini() when the NF ran */
	return exit_status;
}
