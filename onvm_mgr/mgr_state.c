/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * mgr_state.c -- the manager's one global state object and log types, and
 * the layout of an NF's state block as its slot requests it, kept apart
 * from main() so unit tests can link the data path and router alone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mgr.h"
#include "onvm_state.h"

RTE_LOG_REGISTER_IMPL(mgr_logtype, "onvm.mgr", INFO);
RTE_LOG_REGISTER_IMPL(mgr_nf_logtype, "onvm.nf_ctl", INFO);
RTE_LOG_REGISTER_IMPL(mgr_dp_logtype, "onvm.datapath", INFO);

struct mgr mgr = {.stats_ms_override = -1, .epfd = -1, .ctl_evfd = -1};

void
mgr_ctl_wake(void)
{
	uint64_t one = 1;

	/* Non-blocking (EFD_NONBLOCK): a full counter already means "look". */
	if (mgr.ctl_evfd >= 0 && write(mgr.ctl_evfd, &one, sizeof(one)) < 0)
		return;
}

uint64_t
mgr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

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
