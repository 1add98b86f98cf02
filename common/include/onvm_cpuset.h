/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_cpuset.h -- CPU lists, the CPUs NFs run on, and NF lcore ids, for any
 * topology: CPU numbers up to CPU_SETSIZE with holes (offline CPUs, one NUMA
 * node of an interleaved two-socket box: "1,3,5,...,95"), and lcore ids up to
 * RTE_MAX_LCORE whatever lcores the manager itself uses.
 *
 * Pure functions over cpu_set_t and arrays, no DPDK, so the unit tests run
 * them on synthetic topologies and the config loader can use them; the
 * manager (launching NFs) and libnf (hand-started NFs) share them.
 *
 * Lcore ids matter because DPDK keeps per-lcore data in shared memory (the
 * mempool per-lcore cache, rte_hash's local caches): two live processes with
 * one lcore id corrupt it.  Launched NFs get the ids at the top of
 * [0, max_lcore) that the manager does not use, one per slot (a standby shares
 * its active's: they never run together); NFs started by hand without
 * --lcores pick one of ONVM_NF_HAND_LCORES ids just below the slots' range,
 * and the manager refuses any id a live process already has.
 */
#ifndef ONVM_CPUSET_H
#define ONVM_CPUSET_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Lcore ids hand-started NFs that name none pick from (see below). */
#define ONVM_NF_HAND_LCORES 16

/* Longest list onvm_cpulist_format() can produce, for any set of
 * CPU_SETSIZE CPUs: runs of two ("0-1,3-4,..."), up to 10 characters for
 * every 3 CPUs, are the worst case (singletons take 5 for every 2). */
#define ONVM_CPULIST_MAX (CPU_SETSIZE / 3 * 10 + 16)

/* "0-3,8,10-11" -> set ("" is the empty set; spaces are not allowed).
 * `set` may be NULL to validate only.  Returns 0, or -EINVAL for a malformed
 * list, a reversed range or a CPU >= CPU_SETSIZE. */
int onvm_cpulist_parse(const char *list, cpu_set_t *set);

/* set -> "0-3,8,10-11" (runs folded into ranges; "" for the empty set).
 * Returns the string's length, or -ENOSPC if `len` is too small (then `buf`
 * holds nothing useful).  ONVM_CPULIST_MAX always suffices. */
int onvm_cpulist_format(const cpu_set_t *set, char *buf, size_t len);

/* The online CPUs, from /sys/devices/system/cpu/online (holes included);
 * falls back to this process's affinity.  Returns 0 or -errno. */
int onvm_cpus_online(cpu_set_t *out);

/*
 * CPUs for launched NFs, from the online set and the config's lists (empty:
 * unset).  Actives: `cfg_active` ∩ online, else all online.  Standbys:
 * `cfg_standby` ∩ online, else the online CPUs the actives do not use, else
 * the actives' CPUs (docs/design/local-resiliency.md, "Failover time", says why apart).
 */
void onvm_nf_cpus(const cpu_set_t *online, const cpu_set_t *cfg_active,
		  const cpu_set_t *cfg_standby, cpu_set_t *active, cpu_set_t *standby);

/* First lcore id of the range hand-started NFs pick from (ONVM_NF_HAND_LCORES
 * ids just below the top `n_slots` ids), for a DPDK built with `max_lcore`
 * (RTE_MAX_LCORE) lcores; -1 if max_lcore cannot hold both ranges. */
int onvm_nf_hand_lcore_base(unsigned int max_lcore, unsigned int n_slots);

/*
 * Lcore ids for `n_slots` NF slots: from max_lcore - 1 down, skipping ids
 * the manager uses (`mgr_lcore[id]` true, max_lcore entries) and the
 * hand-started range.  Slots left without an id get UINT32_MAX (no NF can be
 * launched there).  Returns how many slots got one.
 */
unsigned int onvm_nf_lcore_table(const bool *mgr_lcore, unsigned int max_lcore,
				 uint32_t *out, unsigned int n_slots);

#endif /* ONVM_CPUSET_H */
