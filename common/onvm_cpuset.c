/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_cpuset.c -- CPU lists, NF CPU sets and NF lcore ids (onvm_cpuset.h).
 * Nothing here assumes CPUs 0..N-1 are the online ones, or that any list fits
 * a small buffer: a NUMA node of an interleaved 96-CPU two-socket box is
 * "1,3,5,...,95", 138 characters.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_cpuset.h"

int
onvm_cpulist_parse(const char *s, cpu_set_t *set)
{
	cpu_set_t tmp;

	CPU_ZERO(&tmp);
	while (*s != '\0') {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			hi = strtoul(end + 1, &end, 10);
		}
		if (lo > hi || hi >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET(c, &tmp);
		if (*end == ',' && end[1] != '\0')
			end++;
		else if (*end != '\0')
			return -EINVAL;
		s = end;
	}
	if (set != NULL)
		*set = tmp;
	return 0;
}

int
onvm_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int end = c, w;

		if (!CPU_ISSET(c, set))
			continue;
		while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
			end++;
		if (end > c)
			w = snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "", c, end);
		else
			w = snprintf(buf + o, len - o, "%s%d", o ? "," : "", c);
		if (w < 0 || (size_t)w >= len - o)
			return -ENOSPC;
		o += (size_t)w;
		c = end;
	}
	return (int)o;
}

int
onvm_cpus_online(cpu_set_t *out)
{
	char line[ONVM_CPULIST_MAX];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");

	if (f != NULL) {
		bool ok = fgets(line, sizeof(line), f) != NULL;

		fclose(f);
		line[strcspn(line, "\n")] = '\0';
		if (ok && onvm_cpulist_parse(line, out) == 0 && CPU_COUNT(out) > 0)
			return 0;
	}
	if (sched_getaffinity(0, sizeof(*out), out) != 0)
		return -errno;
	return 0;
}

void
onvm_nf_cpus(const cpu_set_t *online, const cpu_set_t *cfg_active, const cpu_set_t *cfg_standby,
	     cpu_set_t *active, cpu_set_t *standby)
{
	CPU_AND(active, cfg_active, online);
	if (CPU_COUNT(active) == 0)
		*active = *online;
	CPU_AND(standby, cfg_standby, online);
	if (CPU_COUNT(standby) == 0) {
		CPU_XOR(standby, online, active);
		CPU_AND(standby, standby, online);
		if (CPU_COUNT(standby) == 0)
			*standby = *active;
	}
}

int
onvm_nf_hand_lcore_base(unsigned int max_lcore, unsigned int n_slots)
{
	if (max_lcore < n_slots + ONVM_NF_HAND_LCORES)
		return -1;
	return (int)(max_lcore - n_slots - ONVM_NF_HAND_LCORES);
}

unsigned int
onvm_nf_lcore_table(const bool *mgr_lcore, unsigned int max_lcore, uint32_t *out,
		    unsigned int n_slots)
{
	int hand = onvm_nf_hand_lcore_base(max_lcore, n_slots);
	unsigned int n = 0;
	int id = (int)max_lcore - 1;

	for (; id >= 0 && n < n_slots; id--) {
		if (mgr_lcore[id])
			continue;
		if (hand >= 0 && id >= hand && id < hand + ONVM_NF_HAND_LCORES)
			continue;
		out[n++] = (uint32_t)id;
	}
	for (unsigned int k = n; k < n_slots; k++)
		out[k] = UINT32_MAX;
	return n;
}
