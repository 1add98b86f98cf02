/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_app_stats.c -- counters an NF publishes for the node's telemetry
 * (/onvm/nf/app,ID), written under a sequence lock in the NF's slot.
 */
#include <ctype.h>
#include <errno.h>

#include "nf_private.h"

void
nf_app_stats_begin(struct nf_ctx *nf)
{
	struct onvm_nf_app_stats *a = &nf->slot->app;

	/* Odd while writing -- also when a dead predecessor left it odd. */
	onvm_seq_write_begin(&a->seq);
	a->n = 0;
}

int
nf_app_stat(struct nf_ctx *nf, const char *name, uint64_t value)
{
	struct onvm_nf_app_stats *a = &nf->slot->app;
	char *dst;
	int i;

	if (a->n >= ONVM_NF_APP_STATS)
		return -ENOSPC;
	dst = a->name[a->n];
	/* DPDK telemetry drops dict keys with other characters. */
	for (i = 0; name[i] != '\0' && i < ONVM_NF_APP_STAT_NAME - 1; i++)
		dst[i] = isalnum((unsigned char)name[i]) ? name[i] : '_';
	dst[i] = '\0';
	a->value[a->n++] = value;
	return 0;
}

void
nf_app_stats_end(struct nf_ctx *nf)
{
	onvm_seq_write_end(&nf->slot->app.seq); /* even: stable */
}
