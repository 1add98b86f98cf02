/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * cpulist.h -- CPU lists as the kernel writes them ("0-1,3") <-> cpu_set_t.
 *
 * The config names the CPUs NFs and their standbys may run on
 * (nf_defaults.cpus, nf_defaults.standby_cpus) in this form; the loader only
 * validates the text, nf_ctl.c turns it into the affinity of each NF it
 * launches.  Pure C, no DPDK: the config's unit tests and fuzzer compile it.
 */
#ifndef MGR_CPULIST_H
#define MGR_CPULIST_H

#include <sched.h>
#include <stddef.h>

/**
 * Parse a CPU list into a CPU set.
 *
 * The list is CPUs and lo-hi ranges (lo <= hi) separated by single commas,
 * in any order ("1", "0-1,3"); every CPU must be below CPU_SETSIZE.  "" is
 * the empty set; a sign, a space or a trailing ',' is an error.  No
 * allocation, no global state: any thread may call it.
 *
 * @param list
 *   NUL-terminated text.
 * @param set
 *   Cleared, then filled with the CPUs of `list`.  NULL: only validate.
 *   On error it may hold the ranges before the bad one.
 * @return
 *   0 on success, -1 if `list` is not a CPU list (errno is not set).
 */
int mgr_cpulist_parse(const char *list, cpu_set_t *set);

/**
 * Write a CPU set as a CPU list, ranges merged ("0-1,3"); the empty set is "".
 *
 * The inverse of mgr_cpulist_parse(): parsing the text gives back `set`.
 * Any thread may call it.
 *
 * @param set
 *   The CPUs to write.
 * @param buf
 *   Receives the NUL-terminated list; `len` must be at least 1.
 * @param len
 *   Size of `buf` in bytes.
 * @return
 *   0 on success, -1 if the list does not fit in `len` bytes (`buf` then holds
 *   a truncated list; errno is not set).
 */
int mgr_cpulist_format(const cpu_set_t *set, char *buf, size_t len);

#endif /* MGR_CPULIST_H */
