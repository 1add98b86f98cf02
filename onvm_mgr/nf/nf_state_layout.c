/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_state_layout.c -- the layout of an NF's state block as its slot
 * requests it: the regions an NF asked for at registration, copied out of
 * the slot (the NF can still write it) and laid out by common/onvm_state.c.
 * Used where a block is allocated (nf_ipc.c) and where a protected chain's
 * blocks are placed and checked (remote/rsync_unit_state.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mgr.h"
#include "onvm_state.h"

int
mgr_nf_state_layout(const struct onvm_nf_slot *s, struct nf_state_layout *layout, char *err,
		    size_t errlen)
{
	struct nf_state_request reqs[ONVM_STATE_MAX_REGIONS];
	struct onvm_nf_state_req copy[ONVM_STATE_MAX_REGIONS];
	uint32_t n = s->n_state_req;

	if (n == 0 || n > ONVM_STATE_MAX_REGIONS) {
		if (err != NULL)
			snprintf(err, errlen, "%u regions requested (1..%d)", n,
				 ONVM_STATE_MAX_REGIONS);
		return -EINVAL;
	}
	/* The NF wrote the requests; copy them before trusting anything. */
	memcpy(copy, s->state_req, n * sizeof(copy[0]));
	for (uint32_t i = 0; i < n; i++) {
		copy[i].name[ONVM_NAME_LEN - 1] = '\0';
		reqs[i] = (struct nf_state_request){.name = copy[i].name,
						    .size = copy[i].size,
						    .chunk_size = copy[i].chunk_size};
	}
	return nf_state_layout_compute(layout, reqs, n, err, errlen);
}
