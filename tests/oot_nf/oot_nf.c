/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * An NF built outside the tree, only against the installed libnf.pc:
 *   cc oot_nf.c $(pkg-config --cflags --libs libnf)
 * It counts IPv4 packets with the packet helpers and TTL-decrements nothing:
 * it forwards every packet unchanged to the next service and prints its
 * counts on exit, which the test checks.
 */
#include <stdio.h>

#include <onvm_nflib.h>
#include <onvm_pkt_helper.h>

struct oot_counts {
	uint64_t ipv4;
	uint64_t other;
};

static void
oot_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct oot_counts *c = nf_user(nf);
	struct onvm_flow_key key;

	if (nf_pkt_flow_key(pkt, &key) == 0)
		c->ipv4++;
	else
		c->other++;
	nf_pkt_next(meta);
}

int
main(int argc, char **argv)
{
	struct oot_counts counts = {0};
	struct nf_ops ops = {.pkt = oot_packet};
	struct nf_ctx *nf;

	if (nf_init(argc, argv, "oot_nf", &nf) < 0)
		return 1;
	nf_run(nf, &ops, &counts);
	nf_fini(nf);
	printf("OOT_NF ipv4=%lu other=%lu\n", (unsigned long)counts.ipv4,
	       (unsigned long)counts.other);
	return 0;
}
