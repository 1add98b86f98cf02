/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nat -- source NAT with port allocation: TCP/UDP flows from internal
 * prefixes leave with the NAT's external address and a port drawn at random
 * for the flow; replies to that port go back to the internal endpoint.
 * The logic is in nat_core.c (EAL-free, unit-tested); this file wires it to
 * libnf: state regions, the ND-aware random number generator, the tick that
 * expires idle mappings, stats and the JSON export.
 *
 * A standby (local resiliency) parses the same config and maps the same
 * regions, but opens the NAT on them only when it is first called after its
 * promotion: until then the regions belong to the live active, and even
 * reading state the active has not formatted yet would be a race.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nat_core.h"
#include "onvm_nf_output.h"
#include "onvm_nflib.h"

#define NAT_TICK_MS 100

struct nat_nf {
	struct nf_ctx *nf;
	struct nat_config cfg;
	struct nat nat;
	bool open;
	void *regions[NAT_REGIONS];
	uint32_t print_s;
	uint64_t last_print_ns;
	const char *export_path;
};

static int export_failed;

static uint64_t
nd_rand(void *arg)
{
	return nf_nd_rand(arg);
}

static int
open_nat(struct nat_nf *x)
{
	char err[256];

	if (nat_open(&x->nat, &x->cfg, nf_state(x->nf), x->regions, nd_rand, x->nf, NAT_TICK_MS,
		     err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	x->open = true;
	return 0;
}

/* A promoted standby opens the NAT at its first call; should that fail
 * (the state is not what this config makes), nothing it could do is right. */
static bool
ensure_open(struct nat_nf *x)
{
	if (likely(x->open))
		return true;
	if (open_nat(x) < 0) {
		nf_stop(x->nf);
		return false;
	}
	return true;
}

static void
nat_handler(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct nat_nf *x = nf_user(nf);
	uint64_t now = nf_clock_ns();

	if (unlikely(!ensure_open(x))) {
		nf_pkt_drop(meta);
		return;
	}
	if (nat_packet(&x->nat, pkt, now) == NAT_DROP)
		nf_pkt_drop(meta);
	else
		nf_pkt_next(meta);
}

static void
print_summary(struct nat_nf *x)
{
	char line[1024];

	nat_summary(&x->nat, line, sizeof(line));
	printf("%s: %s\n", nf_name(x->nf), line);
	fflush(stdout);
}

static void
nat_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	struct nat_nf *x = nf_user(nf);

	if (!ensure_open(x))
		return;
	nat_maintain(&x->nat, now_ns); /* now_ns is nf_clock_ns()'s clock */
	if (x->print_s != 0 && now_ns - x->last_print_ns >= x->print_s * 1000000000ULL) {
		x->last_print_ns = now_ns;
		print_summary(x);
	}
}

static int
write_export(FILE *f, const void *arg)
{
	return nat_export_json(arg, f);
}

static int
export_json(const struct nat_nf *x)
{
	return nf_write_file(x->export_path, write_export, &x->nat);
}

static void
nat_fini(struct nf_ctx *nf)
{
	struct nat_nf *x = nf_user(nf);

	if (!x->open)
		return; /* a standby that was never promoted */
	print_summary(x);
	if (x->export_path != NULL && export_json(x) < 0) {
		fprintf(stderr, "nat: cannot write %s\n", x->export_path);
		export_failed = 1;
	}
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL] -- -r SVC [libnf opts] -- -c CONFIG.json [-p SECS] [-e FILE]\n"
		"  -c FILE  prefixes, address, ports (see nfs/nat/README.md)\n"
		"  -p SECS  print counters every SECS seconds (0: never; default 5)\n"
		"  -e FILE  write flows and counters as JSON on exit (%%i: instance id)\n",
		prog);
}

int
main(int argc, char **argv)
{
	static char export_buf[4096];
	static struct nat_nf x = {.print_s = 5};
	struct nf_ops ops = {
		.pkt = nat_handler, .tick = nat_tick, .tick_ms = NAT_TICK_MS, .fini = nat_fini,
	};
	struct nf_state_request reqs[NAT_REGIONS];
	const char *config = NULL;
	char err[512];
	int n, opt, ret = 0;
	struct nf_ctx *nf;

	n = nf_init(argc, argv, "nat", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	x.nf = nf;
	while ((opt = getopt(argc, argv, "c:p:e:h")) != -1) {
		char *end;

		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'p':
			x.print_s = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0') {
				usage(argv[0]);
				ret = 2;
				goto out;
			}
			break;
		case 'e':
			if (nf_expand_instance(optarg, nf_instance_id(nf), export_buf,
					    sizeof(export_buf)) < 0) {
				fprintf(stderr, "nat: -e path too long\n");
				ret = 2;
				goto out;
			}
			x.export_path = export_buf;
			break;
		default:
			usage(argv[0]);
			ret = 2;
			goto out;
		}
	}
	if (config == NULL || optind != argc) {
		usage(argv[0]);
		ret = 2;
		goto out;
	}
	if (nat_config_load(&x.cfg, config, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		ret = 1;
		goto out;
	}
	nat_regions(&x.cfg, reqs);
	for (int i = 0; i < NAT_REGIONS; i++)
		if (nf_state_declare(nf, reqs[i].name, reqs[i].size, 0) < 0) {
			ret = 1;
			goto out;
		}
	if (nf_state_map(nf) < 0) {
		fprintf(stderr, "nat: no state memory for %u flows\n", x.cfg.flows);
		ret = 1;
		goto out;
	}
	for (int i = 0; i < NAT_REGIONS; i++)
		x.regions[i] = nf_state_ptr(nf, reqs[i].name);
	if (!nf_is_standby(nf) && open_nat(&x) < 0) {
		ret = 1;
		goto out;
	}
	printf("%s: %u internal prefixes, ports %u..%u, %u flows, idle timeout %" PRIu64
	       " ms%s\n",
	       nf_name(nf), x.cfg.n_internal, x.cfg.port_min, x.cfg.port_max, x.cfg.flows,
	       x.cfg.idle_timeout_ms, nf_is_standby(nf) ? " (standby)" : "");
	fflush(stdout);
	nf_run(nf, &ops, &x);
out:
	nf_fini(nf); /* runs nat_fini() when the NAT ran */
	return ret != 0 ? ret : export_failed;
}
