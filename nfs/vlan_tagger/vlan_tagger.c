/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * vlan_tagger -- the paper's QoS NF: tags each flow's frames with the VLAN
 * id and priority its policy assigns (first matching rule, on the flow's
 * first packet), remembering the decision per flow in a libnf state region.
 *
 *   vlan_tagger [EAL] -- -r SVC [libnf options] -- -c POLICY [-p SECS] [-e FILE]
 *
 * The logic (policy, tag table, tagging) is in vlan_tagger_core.c; this file
 * is the libnf glue: options, state regions, the idle sweep on the tick,
 * periodic stats and the JSON export on exit.  See README.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_nf_output.h"
#include "onvm_nflib.h"
#include "vlan_tagger_core.h"

#define TICK_MS 100

struct vt_nf {
	struct vt_policy pol;
	struct vt_tagger t;
	bool opened; /* a standby opens the table when it is promoted */
	uint32_t print_s;
	uint64_t last_print_ns;
	const char *export_path;
	char export_buf[4096];
};

static struct vt_nf g;
static int exit_status;

/* Open the tagger on the NF's regions: at start-up for an active; for a
 * standby at its first handler call after promotion (before that, the
 * regions belong to the live active and the standby must not write them). */
static bool
vt_nf_open(struct nf_ctx *nf)
{
	struct nf_state_set *st = nf_state(nf);
	char err[512];

	if (vt_open(&g.t, &g.pol, st, nf_state_ptr(nf, "flows"), vt_flows_size(&g.pol),
		    nf_state_ptr(nf, "counters"), vt_counters_size(&g.pol), err, sizeof(err)) < 0) {
		fprintf(stderr, "vlan_tagger: state: %s\n", err);
		return false;
	}
	g.opened = true;
	return true;
}

static void
vt_nf_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	if (unlikely(!g.opened) && !vt_nf_open(nf)) {
		exit_status = 1;
		nf_stop(nf);
		nf_pkt_drop(meta);
		return;
	}
	if (vt_packet(&g.t, pkt, nf_clock_ns()) == VT_DROP)
		nf_pkt_drop(meta);
	else
		nf_pkt_next(meta);
}

static void
vt_nf_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	uint32_t budget;

	/* Ticks run only in an active NF: a promoted standby opens here if no
	 * packet came first. */
	if (unlikely(!g.opened) && !vt_nf_open(nf)) {
		exit_status = 1;
		nf_stop(nf);
		return;
	}
	/* The whole table in about 16 ticks (1.6 s), at least 256 slots. */
	budget = onvm_ft_capacity(&g.t.ft) / 16;
	vt_expire(&g.t, nf_clock_ns(), budget < 256 ? 256 : budget);
	if (g.print_s != 0 && now_ns - g.last_print_ns >= g.print_s * 1000000000ull) {
		g.last_print_ns = now_ns;
		vt_print_summary(&g.t, nf_name(nf), stdout);
	}
}

static void
vt_nf_fini(struct nf_ctx *nf)
{
	/* A standby promoted just before the end may not have opened yet. */
	if (!g.opened && !nf_is_standby(nf) && !vt_nf_open(nf))
		exit_status = 1;
	if (!g.opened)
		return;
	vt_print_summary(&g.t, nf_name(nf), stdout);
	if (g.export_path != NULL && vt_export_file(&g.t, g.export_path) < 0) {
		fprintf(stderr, "vlan_tagger: cannot write %s\n", g.export_path);
		exit_status = 1;
	}
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL] -- -r SVC [libnf options] -- -c POLICY [-p SECS] [-e FILE]\n"
		"  -c POLICY  policy JSON (default tag, rules, idle_timeout_ms, flows)\n"
		"  -p SECS    print stats every SECS seconds (0: off, the default)\n"
		"  -e FILE    JSON export on exit (%%i: the instance id)\n",
		prog);
}

int
main(int argc, char **argv)
{
	struct nf_ops ops = {
	    .pkt = vt_nf_packet, .tick = vt_nf_tick, .tick_ms = TICK_MS, .fini = vt_nf_fini,
	};
	const char *policy = NULL;
	struct nf_ctx *nf;
	char err[512];
	int n, opt;

	n = nf_init(argc, argv, "vlan_tagger", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "c:p:e:h")) != -1) {
		char *end;

		switch (opt) {
		case 'c':
			policy = optarg;
			break;
		case 'p': {
			unsigned long v = strtoul(optarg, &end, 10);

			g.print_s = (uint32_t)v;
			if (*end != '\0' || optarg[0] < '0' || optarg[0] > '9' || v > 86400) {
				fprintf(stderr, "vlan_tagger: -p wants seconds\n");
				usage(argv[0]);
				exit_status = 2;
				goto out;
			}
			break;
		}
		case 'e':
			if (nf_expand_instance(optarg, nf_instance_id(nf), g.export_buf,
					       sizeof(g.export_buf)) < 0) {
				fprintf(stderr, "vlan_tagger: -e path too long\n");
				exit_status = 2;
				goto out;
			}
			g.export_path = g.export_buf;
			break;
		default:
			usage(argv[0]);
			exit_status = 2;
			goto out;
		}
	}
	if (policy == NULL || optind != argc) {
		fprintf(stderr, "vlan_tagger: %s\n",
			policy == NULL ? "a policy (-c FILE) is required" : "unexpected argument");
		usage(argv[0]);
		exit_status = 2;
		goto out;
	}
	if (vt_policy_load_file(&g.pol, policy, err, sizeof(err)) < 0) {
		fprintf(stderr, "vlan_tagger: %s\n", err);
		exit_status = 1;
		goto out;
	}
	if (nf_state_declare(nf, "flows", vt_flows_size(&g.pol), 256) < 0 ||
	    nf_state_declare(nf, "counters", vt_counters_size(&g.pol), 64) < 0 ||
	    nf_state_map(nf) < 0) {
		fprintf(stderr, "vlan_tagger: no state memory for %u flows\n", g.pol.flows);
		exit_status = 1;
		goto out;
	}
	if (!nf_is_standby(nf) && !vt_nf_open(nf)) {
		exit_status = 1;
		goto out;
	}
	nf_run(nf, &ops, &g);
out:
	nf_fini(nf); /* runs vt_nf_fini() when the NF ran */
	return exit_status;
}
