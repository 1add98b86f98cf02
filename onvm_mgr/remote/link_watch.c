/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * link_watch.c -- remote resiliency's link-down trigger: a predecessor whose
 * link to the primary goes down fails the chain over at once, without
 * waiting for BFD to miss three packets (`link_failover`, on by default).
 *
 * Where the link is: DPDK 22.11's net_af_packet and net_af_xdp report the
 * link Up once started, whatever the kernel interface does (their
 * link_update is a no-op), so for a port on a kernel interface (`iface=` in
 * its device string) the control thread watches that interface's flags
 * through rtnetlink (RTM_NEWLINK, group RTMGRP_LINK, in the manager's own
 * network namespace): the link is down when the interface is not IFF_UP or
 * has lost its carrier (IFF_LOWER_UP: a veth whose peer went down, a cable).
 * Any other port's link is read with rte_eth_link_get_nowait() every
 * LINK_POLL_MS on the control thread (a NIC's PMD knows its link).  Only a
 * transition from up to down triggers, once per chain (mgr_plog_link_down);
 * a link that comes back does not fail the chain back.
 *
 * Here too, for every port: the kernel interface it sits on and that
 * interface's MTU (mgr_port_iface(), mgr_port_iface_mtu(); FTC sizes its
 * links with them).
 */
#include <errno.h>
#include <stdint.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <rte_ethdev.h>

#include "mgr.h"

#define LINK_POLL_MS 10
#ifndef IFF_LOWER_UP /* linux/if.h has it, but clashes with net/if.h */
#define IFF_LOWER_UP 0x10000
#endif

static struct {
	int remote;	      /* index in mgr.cfg.remote[] */
	uint16_t port;	      /* the primary port */
	unsigned int ifindex; /* its kernel interface, 0: read the PMD's link */
	bool up;
} watched[MGR_CFG_MAX_REMOTE];
static int nwatched;
static int nl_fd = -1;
static uint64_t nl_errors; /* netlink reads that failed (ENOBUFS: events lost) */

/* (the port helpers in mgr.h: here, beside the other kernel-interface
 * code) */
void
mgr_port_iface(uint16_t port, char *name, size_t len)
{
	const char *p = port < mgr.cfg.nports ? strstr(mgr.cfg.ports[port].dev, ",iface=") : NULL;
	size_t n;

	name[0] = '\0';
	if (p == NULL)
		return;
	p += strlen(",iface=");
	n = strcspn(p, ",");
	if (n == 0 || n >= len)
		return;
	memcpy(name, p, n);
	name[n] = '\0';
}

uint32_t
mgr_port_iface_mtu(uint16_t port)
{
	char name[IF_NAMESIZE];
	struct ifreq ifr = {0};
	uint32_t mtu = 0;
	int fd;

	mgr_port_iface(port, name, sizeof(name));
	if (name[0] == '\0')
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	return mtu;
}

/* Up: administratively up and with carrier.  On a kernel interface. */
static bool
flags_up(unsigned int flags)
{
	return (flags & IFF_UP) && (flags & IFF_LOWER_UP);
}

static bool
iface_up_now(const char *name)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool up = true; /* unknown: assume up, a later event corrects it */

	if (fd < 0)
		return up;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	/* SIOCGIFFLAGS has no IFF_LOWER_UP: IFF_RUNNING is the carrier here */
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		up = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(fd);
	return up;
}

static void
set_up(int i, bool up)
{
	if (watched[i].up && !up) {
		MGR_LOG(WARNING, "remote chain %s: link of port %s went down: failing over",
			mgr.cfg.remote[watched[i].remote].name,
			mgr.cfg.ports[watched[i].port].name);
		mgr_plog_link_down(watched[i].remote);
	}
	watched[i].up = up;
}

int
mgr_link_watch_init(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = CTL_EV_LINK};
	bool need_nl = false;

	for (int r = 0; r < mgr.cfg.nremote; r++) {
		const struct mgr_remote_cfg *rc = &mgr.cfg.remote[r];
		char name[IF_NAMESIZE];
		int i = nwatched;

		if (rc->role != MGR_REMOTE_PREDECESSOR || !rc->link_failover)
			continue;
		watched[i].remote = r;
		watched[i].port = (uint16_t)rc->primary_port;
		mgr_port_iface((uint16_t)rc->primary_port, name, sizeof(name));
		if (name[0] != '\0') {
			watched[i].ifindex = if_nametoindex(name);
			if (watched[i].ifindex == 0) {
				MGR_LOG(ERR, "remote chain %s: link_failover: no interface %s: %s",
					rc->name, name, strerror(errno));
				return -1;
			}
			watched[i].up = iface_up_now(name);
			need_nl = true;
		} else {
			struct rte_eth_link link;

			watched[i].up = rte_eth_link_get_nowait(watched[i].port, &link) != 0 ||
					link.link_status == RTE_ETH_LINK_UP;
		}
		nwatched++;
	}
	if (!need_nl)
		return 0;
	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    epoll_ctl(mgr.epfd, EPOLL_CTL_ADD, nl_fd, &ev) < 0) {
		MGR_LOG(ERR, "link_failover: rtnetlink socket: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void
mgr_link_watch_event(void)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t n;

	while ((n = recv(nl_fd, buf, sizeof(buf), 0)) > 0) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		uint32_t len = (uint32_t)n; /* (unsigned: NLMSG_OK compares it with nlmsg_len) */

		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			const struct ifinfomsg *ifi = NLMSG_DATA(h);

			if ((h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK) ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
				continue;
			for (int i = 0; i < nwatched; i++)
				if (watched[i].ifindex == (unsigned int)ifi->ifi_index)
					set_up(i, h->nlmsg_type == RTM_NEWLINK &&
							  flags_up(ifi->ifi_flags));
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		/* ENOBUFS: the kernel dropped events; read the flags again */
		nl_errors++;
		for (int i = 0; i < nwatched; i++) {
			char name[IF_NAMESIZE];

			if (watched[i].ifindex != 0 && if_indextoname(watched[i].ifindex, name))
				set_up(i, iface_up_now(name));
		}
	}
}

int
mgr_link_watch_poll(void)
{
	bool any = false;

	for (int i = 0; i < nwatched; i++) {
		struct rte_eth_link link;

		if (watched[i].ifindex != 0)
			continue;
		any = true;
		if (rte_eth_link_get_nowait(watched[i].port, &link) == 0)
			set_up(i, link.link_status == RTE_ETH_LINK_UP);
	}
	return any ? LINK_POLL_MS : INT32_MAX;
}

void
mgr_link_watch_fini(void)
{
	if (nl_fd >= 0)
		close(nl_fd);
	nl_fd = -1;
}
