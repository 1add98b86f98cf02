/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit.c -- remote resiliency on a chain's primary and standby nodes
 * (library: rsync/; design: docs/design.md, "The manager units").  Built so
 * far: the protected ingress.
 *
 * Every frame arriving on a primary's or standby's predecessor_port was
 * stamped by the predecessor.  The RX unit hands it here before routing:
 *   - a valid shim whose timestamp is above the last one admitted is
 *     removed and the timestamp (and the REPLAY flag) goes on in the packet's
 *     metadata;
 *   - a timestamp at or below the last admitted one (the link reordered or
 *     duplicated it) is dropped, counted: the chain then sees packets in
 *     timestamp order, which the consistent cuts rely on;
 *   - RSync frames (0x88B6) are taken for the control path (counted; not
 *     handled yet), anything else unstamped or with a bad shim is dropped and
 *     counted by reason.
 * The RX unit is the only writer of a chain's ingress state; telemetry reads
 * the counters (plain 64-bit loads).
 */
#include <string.h>

#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "mgr.h"
#include "plog_shim.h"
#include "rsync_wire.h"

struct rsync_chain {
	const struct mgr_remote_cfg *cfg;
	uint64_t last_ts; /* the last timestamp admitted */
	uint64_t admitted;
	uint64_t admitted_replay; /* of those, with the REPLAY flag */
	uint64_t stale;		  /* timestamp not above the last admitted */
	uint64_t rsync_ctrl;	  /* 0x88B6 frames taken off the data path */
	uint64_t bad[PLOG_SHIM_REASON_MAX]; /* NOT_SHIM: unstamped */
};

static struct rsync_chain chains[MGR_CFG_MAX_REMOTE];
static int nchains;

int
mgr_rsync_init(void)
{
	for (int r = 0; r < mgr.cfg.nremote; r++) {
		const struct mgr_remote_cfg *rc = &mgr.cfg.remote[r];

		if (rc->role == MGR_REMOTE_PREDECESSOR)
			continue;
		chains[nchains].cfg = rc;
		mgr.rsync_in_port[rc->predecessor_port] = (uint8_t)(nchains + 1);
		nchains++;
		MGR_LOG(INFO, "remote chain %s (id %u): %s, stamped input on port %d",
			rc->name, rc->id, rc->role == MGR_REMOTE_PRIMARY ? "primary" : "standby",
			rc->predecessor_port);
	}
	return 0;
}

bool
mgr_rsync_ingress(uint16_t port, struct rte_mbuf *m, uint64_t *ts, uint8_t *flags)
{
	struct rsync_chain *c = &chains[mgr.rsync_in_port[port] - 1];
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct plog_shim sh;
	enum plog_shim_reason r;

	/* The shim sits in the first segment (the predecessor put it there). */
	r = plog_shim_parse(p, rte_pktmbuf_data_len(m), &sh);
	if (unlikely(r != PLOG_SHIM_OK)) {
		if (r == PLOG_SHIM_NOT_SHIM && rte_pktmbuf_data_len(m) >= RSYNC_ETH_LEN &&
		    p[12] == (RSYNC_ETHERTYPE >> 8) && p[13] == (RSYNC_ETHERTYPE & 0xff))
			c->rsync_ctrl++;
		else
			c->bad[r]++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (sh.ts <= c->last_ts) {
		c->stale++;
		rte_pktmbuf_free(m);
		return true;
	}
	c->last_ts = sh.ts;
	plog_shim_strip(p, &sh);
	rte_pktmbuf_adj(m, PLOG_SHIM_LEN);
	*ts = sh.ts;
	*flags = (sh.flags & PLOG_SHIM_F_REPLAY) ? ONVM_PKT_F_REPLAY : 0;
	c->admitted++;
	c->admitted_replay += *flags != 0;
	return false;
}

void
mgr_rsync_telemetry(struct rte_tel_data *d)
{
	for (int i = 0; i < nchains; i++) {
		const struct rsync_chain *c = &chains[i];
		struct rte_tel_data *o = rte_tel_data_alloc();

		if (o == NULL)
			return;
		rte_tel_data_start_dict(o);
		rte_tel_data_add_dict_string(o, "role", c->cfg->role == MGR_REMOTE_PRIMARY
								? "primary"
								: "standby");
		rte_tel_data_add_dict_uint(o, "id", c->cfg->id);
		rte_tel_data_add_dict_uint(o, "ingress_last_ts", c->last_ts);
		rte_tel_data_add_dict_uint(o, "ingress_admitted", c->admitted);
		rte_tel_data_add_dict_uint(o, "ingress_replayed", c->admitted_replay);
		rte_tel_data_add_dict_uint(o, "ingress_stale", c->stale);
		rte_tel_data_add_dict_uint(o, "ingress_rsync_ctrl", c->rsync_ctrl);
		rte_tel_data_add_dict_uint(o, "ingress_unstamped", c->bad[PLOG_SHIM_NOT_SHIM]);
		for (int r = PLOG_SHIM_SHORT; r < PLOG_SHIM_REASON_MAX; r++) {
			char key[40];

			snprintf(key, sizeof(key), "ingress_shim_%s",
				 plog_shim_reason_str((enum plog_shim_reason)r));
			rte_tel_data_add_dict_uint(o, key, c->bad[r]);
		}
		rte_tel_data_add_dict_container(d, c->cfg->name, o, 0);
	}
}
