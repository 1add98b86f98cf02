/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * vdev_guard.c -- decide which virtual devices a secondary process probes.
 *
 * A DPDK secondary asks the primary for its vdev list at start-up (the vdev
 * bus's "bus_vdev_mp" request) and then probes every device itself.  For
 * net_pcap that is harmful: the secondary re-opens the files from the devargs
 * and pcap_dump_open() truncates the primary's output capture.  net_af_packet
 * cannot run in a secondary at all.  NFs never touch ports.
 *
 * So the manager answers that request itself, with the same wire format as
 * the vdev bus (struct below, stable since DPDK 18.x):
 *   - an NF the manager launched (known pid, or its pid in its container)
 *     gets an empty list;
 *   - any other secondary (dpdk-dumpcap, dpdk-proc-info, hand-started NFs)
 *     gets every port except pcap and af_packet ones, so captures and
 *     inspection still work on null, ring and memif ports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_string_fns.h>

#include "mgr.h"

#define VDEV_MP_KEY "bus_vdev_mp"
#define VDEV_SCAN_REQ 1
#define VDEV_SCAN_ONE 2
#define VDEV_SCAN_REP 3

struct vdev_param {
	int type;
	int num;
	char name[RTE_DEV_NAME_MAX_LEN];
};

/* The peer is the requester's socket path: ".../mp_socket_<pid>_<tsc>". */
static pid_t
peer_pid(const void *peer)
{
	const char *p = strstr((const char *)peer, "mp_socket_");

	return p != NULL ? (pid_t)strtol(p + strlen("mp_socket_"), NULL, 10) : -1;
}

static bool
is_launched_nf(pid_t pid)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		const struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		if (s->launched && s->status != ONVM_NF_FREE &&
		    (s->pid == pid || s->standby_pid == pid))
			return true;
		/* A container NF names itself by its pid in its namespace (the
		 * manager keeps those apart from its NFs' host pids). */
		if (s->launched && s->status != ONVM_NF_FREE &&
		    (__atomic_load_n(&mgr.nf_priv[id].ctr_ns_pid, __ATOMIC_RELAXED) == pid ||
		     __atomic_load_n(&mgr.nf_priv[id].sb_ctr_ns_pid, __ATOMIC_RELAXED) == pid))
			return true;
	}
	return false;
}

static bool
secondary_safe(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return false;
	return strcmp(info.driver_name, "net_pcap") != 0 &&
	       strcmp(info.driver_name, "net_af_packet") != 0;
}

static int
vdev_scan_request(const struct rte_mp_msg *msg, const void *peer)
{
	const struct vdev_param *in = (const struct vdev_param *)msg->param;
	struct rte_mp_msg resp = {0};
	struct vdev_param *out = (struct vdev_param *)resp.param;
	pid_t pid = peer_pid(peer);
	int num = 0;

	if (msg->len_param < (int)sizeof(*in) || in->type != VDEV_SCAN_REQ)
		return 0; /* SCAN_ONE broadcasts are for secondaries, not us */
	rte_strscpy(resp.name, VDEV_MP_KEY, sizeof(resp.name));
	resp.len_param = sizeof(*out);
	if (!is_launched_nf(pid)) {
		uint16_t port;

		out->type = VDEV_SCAN_ONE;
		out->num = 1;
		RTE_ETH_FOREACH_DEV(port) {
			if (!secondary_safe(port))
				continue;
			if (rte_eth_dev_get_name_by_port(port, out->name) != 0)
				continue;
			if (rte_mp_sendmsg(&resp) < 0)
				MGR_LOG(WARNING, "vdev list to pid %d: %s", pid,
					rte_strerror(rte_errno));
			num++;
		}
	}
	out->type = VDEV_SCAN_REP;
	out->num = num;
	out->name[0] = '\0';
	if (rte_mp_reply(&resp, peer) < 0)
		MGR_LOG(ERR, "cannot answer the vdev scan of pid %d", pid);
	return 0;
}

int
mgr_vdev_guard_init(void)
{
	rte_mp_action_unregister(VDEV_MP_KEY);
	if (rte_mp_action_register(VDEV_MP_KEY, vdev_scan_request) < 0) {
		MGR_LOG(ERR, "cannot take over %s: %s", VDEV_MP_KEY, rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}
