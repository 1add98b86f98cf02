/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * cpulist.c -- CPU lists ("0-1,3") <-> cpu_set_t; the contract is in cpulist.h.
 *
 * Two users, at two times: the config loader (config_node.c) parses
 * nf_defaults.cpus and .standby_cpus only to reject a bad list at load time,
 * so that nf_ctl.c can parse them again at launch without a failure path;
 * nf_ctl.c then writes the set it picks for an NF back as text, for the NF's
 * --lcores.
 * Every byte of the text is accounted for: a stray character is an error,
 * not the end of the list.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpulist.h"

/*
 * CPU lists as the kernel writes them ("0-1,3"): ascending ranges, CPUs
 * below CPU_SETSIZE.  "" is the empty set.  `set` may be NULL to validate.
 */
int
mgr_cpulist_parse(const char *s, cpu_set_t *set)
{
	cpu_set_t tmp;

	if (set == NULL)
		set = &tmp;
	CPU_ZERO(set);
	while (*s != '\0') {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*s))
			return -1;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= CPU_SETSIZE)
			return -1;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*end == ',' && end[1] != '\0')
			end++;
		else if (*end != '\0')
			return -1;
		s = end;
	}
	return 0;
}

int
mgr_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int hi = c;
		int n;

		if (!CPU_ISSET(c, set))
			continue;
		while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, set))
			hi++;
		n = hi > c ? snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, hi)
			   : snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += n;
		c = hi;
	}
	return 0;
}
