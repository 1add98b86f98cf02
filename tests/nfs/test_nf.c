/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_nf -- an NF for tests: configurable action, per-packet delay (so a
 * kill lands mid-trace), and a fault hook that SIGKILLs itself while it holds
 * a batch.  Not installed.
 *
 *   -a next|drop|out:P|tonf:S   action for every packet (default next)
 *   -d US                       busy-wait US microseconds per packet
 *   -k N                        SIGKILL itself while handling its Nth packet
 *   -b                          invalid action value (tests the manager's check)
 *   -N K                        draw an ND random number on every Kth packet
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "onvm_nflib.h"

struct test_conf {
	uint8_t action;
	uint16_t dest;
	uint64_t delay_cycles;
	uint64_t kill_at;
	uint64_t nd_every;
	uint64_t seen;
};

static void
test_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct test_conf *c = nf_user(nf);

	(void)pkt;
	c->seen++;
	if (c->kill_at != 0 && c->seen == c->kill_at)
		kill(getpid(), SIGKILL);
	if (c->nd_every != 0 && c->seen % c->nd_every == 0)
		(void)nf_nd_rand(nf);
	if (c->delay_cycles != 0) {
		uint64_t end = rte_get_tsc_cycles() + c->delay_cycles;

		while (rte_get_tsc_cycles() < end)
			;
	}
	meta->action = c->action;
	meta->destination = c->dest;
}

static int
parse_action(const char *s, struct test_conf *c)
{
	if (strcmp(s, "next") == 0) {
		c->action = ONVM_ACTION_NEXT;
	} else if (strcmp(s, "drop") == 0) {
		c->action = ONVM_ACTION_DROP;
	} else if (strncmp(s, "out:", 4) == 0) {
		c->action = ONVM_ACTION_OUT;
		c->dest = atoi(s + 4);
	} else if (strncmp(s, "tonf:", 5) == 0) {
		c->action = ONVM_ACTION_TONF;
		c->dest = atoi(s + 5);
	} else {
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct test_conf conf = {.action = ONVM_ACTION_NEXT};
	struct nf_ops ops = {.pkt = test_packet};
	struct nf_ctx *nf;
	int n, opt;

	n = nf_init(argc, argv, "test_nf", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "a:d:k:bN:")) != -1) {
		switch (opt) {
		case 'a':
			if (parse_action(optarg, &conf) < 0)
				goto bad;
			break;
		case 'd':
			conf.delay_cycles = strtoull(optarg, NULL, 10) * rte_get_tsc_hz() / 1000000;
			break;
		case 'k':
			conf.kill_at = strtoull(optarg, NULL, 10);
			break;
		case 'b':
			conf.action = 77;
			break;
		case 'N':
			conf.nd_every = strtoull(optarg, NULL, 10);
			break;
		default:
			goto bad;
		}
	}
	nf_run(nf, &ops, &conf);
	nf_fini(nf);
	return 0;
bad:
	fprintf(stderr, "test_nf: bad arguments\n");
	nf_fini(nf);
	return 2;
}
