/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ports.c -- every ethdev the EAL found (from --vdev on the command line or
 * "ports" in the config) becomes a manager port with one RX and one TX queue:
 * the RX unit is the only reader and the TX unit the only writer, wherever
 * the units run.  Ports are configured at start-up but started only once the
 * configured NFs have registered, so a pcap read at full speed does not race
 * the chain coming up.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <rte_string_fns.h>

#include "mgr.h"

int
mgr_ports_init(void)
{
	uint16_t port;

	mgr.nb_ports = 0;
	RTE_ETH_FOREACH_DEV(port) {
		struct rte_eth_conf conf = {0};
		struct rte_eth_dev_info info;
		struct onvm_port_info *pi;
		char name[RTE_RING_NAMESIZE];
		uint16_t rxd = mgr.cfg.rx_desc, txd = mgr.cfg.tx_desc;
		int ret;

		if (port != mgr.nb_ports || port >= ONVM_MAX_PORTS) {
			MGR_LOG(ERR, "port ids must be dense and < %d (got %u)", ONVM_MAX_PORTS,
				port);
			return -EINVAL;
		}
		ret = rte_eth_dev_info_get(port, &info);
		if (ret != 0)
			return ret;
		if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
		    rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd) != 0 ||
		    rte_eth_rx_queue_setup(port, 0, rxd, rte_eth_dev_socket_id(port), NULL,
					   mgr.pool) != 0 ||
		    rte_eth_tx_queue_setup(port, 0, txd, rte_eth_dev_socket_id(port), NULL) != 0) {
			MGR_LOG(ERR, "port %u (%s): set-up failed", port, info.driver_name);
			return -EIO;
		}
		pi = &mgr.shm->ports[port];
		pi->port_id = port;
		pi->used = 1;
		if (port < mgr.cfg.nports) {
			rte_strscpy(pi->name, mgr.cfg.ports[port].name, sizeof(pi->name));
			pi->no_rx = mgr.cfg.ports[port].no_rx;
		}
		else
			snprintf(pi->name, sizeof(pi->name), "port%u", port);
		snprintf(name, sizeof(name), ONVM_PORT_TX_RING_FMT, port);
		pi->tx_ring = rte_ring_create(name, mgr.cfg.port_ring_size, rte_socket_id(),
					      RING_F_SC_DEQ);
		if (pi->tx_ring == NULL) {
			MGR_LOG(ERR, "port %u: TX ring: %s", port, rte_strerror(rte_errno));
			return -rte_errno;
		}
		MGR_LOG(INFO, "port %u '%s': %s", port, pi->name, info.driver_name);
		mgr.nb_ports++;
	}
	mgr.shm->nb_ports = mgr.nb_ports;
	return 0;
}

/*
 * DPDK 22.11's net_af_packet opens its socket for every protocol on every
 * interface and binds it to its own only after setting up its ring
 * (rte_pmd_init_internals): what the ring caught meanwhile, at the EAL's
 * probe, are frames of the namespace's other interfaces -- a peer's BFD or
 * RSync frames on another link -- which this port would hand on as its
 * own input (a predecessor stamped them as the chain's).  So at start,
 * before the units run, an af_packet port's ring is read empty and its
 * frames discarded, counted (rx_before_start): the node was not
 * forwarding yet, so those of its own link are no loss a peer does not
 * already live with.
 */
static void
discard_before_start(uint16_t port)
{
	struct rte_eth_dev_info info;
	struct rte_mbuf *pkts[ONVM_BURST];
	uint64_t n = 0;
	uint16_t got;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_af_packet") != 0 || mgr.shm->ports[port].no_rx)
		return;
	do {
		got = rte_eth_rx_burst(port, 0, pkts, ONVM_BURST);
		rte_pktmbuf_free_bulk(pkts, got);
		n += got;
	} while (got > 0 && n < (1u << 20));
	mgr.port_stats[port].rx_before_start = n;
	if (n > 0)
		MGR_LOG(INFO, "port %u '%s': %" PRIu64 " frames read before it started, discarded",
			port, mgr.shm->ports[port].name, n);
}

int
mgr_ports_start(void)
{
	for (uint16_t port = 0; port < mgr.nb_ports; port++) {
		int ret = rte_eth_dev_start(port);

		if (ret != 0) {
			MGR_LOG(ERR, "port %u: start failed: %s", port, rte_strerror(-ret));
			return ret;
		}
		discard_before_start(port);
		/* Not every PMD has promiscuous mode; that is fine. */
		rte_eth_promiscuous_enable(port);
	}
	return 0;
}

void
mgr_ports_stop(void)
{
	for (uint16_t port = 0; port < mgr.nb_ports; port++) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
}

/*
 * Wait (bounded) until every port reports link up, so that a node does not
 * start reading its inputs before its links to other nodes (memif, veth)
 * exist.  Ports still down after `timeout_ms` are reported and the node
 * starts anyway: a down link is an operational state, not a start-up error.
 */
void
mgr_ports_wait_link(uint32_t timeout_ms)
{
	uint64_t deadline = mgr_now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	for (;;) {
		int down = -1;

		for (uint16_t port = 0; port < mgr.nb_ports; port++) {
			struct rte_eth_link link;

			if (rte_eth_link_get_nowait(port, &link) == 0 &&
			    link.link_status == RTE_ETH_LINK_DOWN) {
				down = port;
				break;
			}
		}
		if (down < 0)
			return;
		if (mgr_now_ns() > deadline || mgr.force_quit) {
			MGR_LOG(WARNING, "port %d '%s' link still down after %u ms; starting anyway",
				down, mgr.shm->ports[down].name, timeout_ms);
			return;
		}
		rte_delay_us_sleep(10000);
	}
}
