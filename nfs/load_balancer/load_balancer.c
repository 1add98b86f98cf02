/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * load_balancer -- spreads flows over a list of backends: a new flow gets a
 * backend at random, every later packet of it goes to the same backend.
 * The logic is in load_balancer_core.c (EAL-free, unit-tested); this file
 * wires it to libnf: state regions, the ND-aware random number generator,
 * the tick that expires idle flows, stats and the JSON export.
 *
 * A standby (local resiliency) parses the same config and maps the same
 * regions, but opens the balancer on them only when it is first called after
 * its promotion: until then the regions belong to the live active, and even
 * reading a table the active has not formatted yet would be a race.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_balancer_core.h"
#include "onvm_nf_output.h"
#include "onvm_nflib.h"

#define LB_TICK_MS 100

struct lb_nf {
	struct nf_ctx *nf;
	struct lb_config cfg;
	struct lb lb;
	bool open;
	void *regions[LB_REGIONS];
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
open_lb(struct lb_nf *x)
{
	char err[256];

	if (lb_open(&x->lb, &x->cfg, nf_state(x->nf), x->regions, nd_rand, x->nf, LB_TICK_MS, err,
		    sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	x->open = true;
	return 0;
}

/* A promoted standby opens the balancer at its first call; should that fail
 * (the state is not what this config makes), nothing it could do is right. */
static bool
ensure_open(struct lb_nf *x)
{
	if (likely(x->open))
		return true;
	if (open_lb(x) < 0) {
		nf_stop(x->nf);
		return false;
	}
	return true;
}

static void
lb_handler(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct lb_nf *x = nf_user(nf);
	uint64_t now = nf_clock_ns();

	if (unlikely(!ensure_open(x))) {
		nf_pkt_drop(meta);
		return;
	}
	x->lb.replay = nf_is_reprocessing(nf);
	if (lb_packet(&x->lb, pkt, now) == LB_DROP)
		nf_pkt_drop(meta);
	else
		nf_pkt_next(meta);
}

static void
print_summary(struct lb_nf *x)
{
	char line[512];

	lb_summary(&x->lb, line, sizeof(line));
	printf("%s: %s\n", nf_name(x->nf), line);
	fflush(stdout);
}

static void
lb_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	struct lb_nf *x = nf_user(nf);

	if (!ensure_open(x))
		return;
	lb_maintain(&x->lb, now_ns); /* now_ns is nf_clock_ns()'s clock */
	if (x->print_s != 0 && now_ns - x->last_print_ns >= x->print_s * 1000000000ULL) {
		x->last_print_ns = now_ns;
		print_summary(x);
	}
}

static int
write_export(FILE *f, const void *arg)
{
	return lb_export_json(arg, f);
}

static int
export_json(const struct lb_nf *x)
{
	return nf_write_file(x->export_path, write_export, &x->lb);
}

static void
lb_fini(struct nf_ctx *nf)
{
	struct lb_nf *x = nf_user(nf);

	if (!x->open)
		return; /* a standby that was never promoted */
	print_summary(x);
	if (x->export_path != NULL && export_json(x) < 0) {
		fprintf(stderr, "load_balancer: cannot write %s\n", x->export_path);
		export_failed = 1;
	}
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL] -- -r SVC [libnf opts] -- -c CONFIG.json [-p SECS] [-e FILE]\n"
		"  -c FILE  backends and options (see nfs/load_balancer/README.md)\n"
		"  -p SECS  print counters every SECS seconds (0: never; default 5)\n"
		"  -e FILE  write flows and counters as JSON on exit (%%i: instance id)\n",
		prog);
}

int
main(int argc, char **argv)
{
	static char export_buf[4096];
	static struct lb_nf x = {.print_s = 5};
	struct nf_ops ops = {
		.pkt = lb_handler, .tick = lb_tick, .tick_ms = LB_TICK_MS, .fini = lb_fini,
		.movable = true, /* per-flow state: the flow table; backends drawn by nf_nd_rand */
	};
	struct nf_state_request reqs[LB_REGIONS];
	const char *config = NULL;
	char err[512];
	int n, opt, ret = 0;
	struct nf_ctx *nf;

	n = nf_init(argc, argv, "load_balancer", &nf);
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
				fprintf(stderr, "load_balancer: -e path too long\n");
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
	if (lb_config_load(&x.cfg, config, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		ret = 1;
		goto out;
	}
	lb_regions(&x.cfg, reqs);
	for (int i = 0; i < LB_REGIONS; i++)
		if (nf_state_declare(nf, reqs[i].name, reqs[i].size, 0) < 0) {
			ret = 1;
			goto out;
		}
	if (nf_state_map(nf) < 0) {
		fprintf(stderr, "load_balancer: no state memory for %u flows\n", x.cfg.flows);
		ret = 1;
		goto out;
	}
	for (int i = 0; i < LB_REGIONS; i++)
		x.regions[i] = nf_state_ptr(nf, reqs[i].name);
	if (!nf_is_standby(nf) && open_lb(&x) < 0) {
		ret = 1;
		goto out;
	}
	printf("%s: %u backends, %s, %u flows, idle timeout %" PRIu64 " ms%s\n", nf_name(nf),
	       x.cfg.n_backends, x.cfg.has_vip ? "VIP mode" : "transparent mode", x.cfg.flows,
	       x.cfg.idle_timeout_ms, nf_is_standby(nf) ? " (standby)" : "");
	fflush(stdout);
	nf_run(nf, &ops, &x);
out:
	nf_fini(nf); /* runs lb_fini() when the balancer ran */
	return ret != 0 ? ret : export_failed;
}
