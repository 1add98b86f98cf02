/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * simple_forward -- hands every packet on unchanged: to the next service of
 * its chain (default), to a given service (-d), or out of a given port (-o).
 * The smallest useful NF, and the one the throughput benchmark chains.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "onvm_nflib.h"

struct fwd_conf {
	enum onvm_action action;
	uint16_t dest;
};

static void
fwd_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	const struct fwd_conf *c = nf_user(nf);

	(void)pkt;
	meta->action = c->action;
	meta->destination = c->dest;
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [EAL] -- -r SVC [libnf opts] -- [-d SERVICE | -o PORT]\n", prog);
}

static int
parse_u16(const char *s, unsigned long max, uint16_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

int
main(int argc, char **argv)
{
	struct fwd_conf conf = {.action = ONVM_ACTION_NEXT};
	struct nf_ops ops = {.pkt = fwd_packet};
	struct nf_ctx *nf;
	int n, opt;

	n = nf_init(argc, argv, "simple_forward", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "d:o:h")) != -1) {
		switch (opt) {
		case 'd':
			if (parse_u16(optarg, ONVM_MAX_SERVICES - 1, &conf.dest) < 0 ||
			    conf.dest == 0)
				goto bad;
			conf.action = ONVM_ACTION_TONF;
			break;
		case 'o':
			if (parse_u16(optarg, nf_port_count(nf) - 1, &conf.dest) < 0)
				goto bad;
			conf.action = ONVM_ACTION_OUT;
			break;
		default:
			goto bad;
		}
	}
	nf_run(nf, &ops, &conf);
	nf_fini(nf);
	return 0;
bad:
	usage(argv[0]);
	nf_fini(nf);
	return 2;
}
