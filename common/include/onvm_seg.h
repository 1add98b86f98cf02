/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_seg.h -- shared memory at a fixed virtual address: a hugetlbfs file
 * that the manager and its NFs map at the same address, chosen by us rather
 * than by DPDK.
 *
 * Why: NF state may hold absolute pointers (nDPI, the region heap).  A
 * memzone is at the same address in every process of one node, but DPDK
 * picks it, so the same block sits elsewhere on another node, and state
 * shipped to a remote standby would point into nothing.  A segment at an
 * address every node agrees on, with each block at an offset every node
 * agrees on, keeps the pointers valid there.
 *
 * The file is named "<file prefix>map_<name>" in a hugetlbfs mount and every
 * process that maps it holds a shared flock on it: DPDK's start-up removes
 * the "*map_*" files it can lock exclusively (those of dead processes), so a
 * live segment is never removed and a dead node's one is cleaned up like its
 * hugepage files.  Pages are taken when a range is reserved
 * (onvm_seg_reserve(), fallocate), never on first touch: running out of
 * hugepages is an error code, not a SIGBUS.
 *
 * No EAL; any thread (control paths only: file and mapping calls).
 */
#ifndef ONVM_SEG_H
#define ONVM_SEG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Address of the NF state segment: far above DPDK's own memory
 * (--base-virtaddr 0x200000000000 plus at most a few hundred GiB), below the
 * kernel's mmap area, and outside the sanitizers' allocator space
 * (0x600000000000-0x640000000000 for ASan/LSan on x86-64). */
#define ONVM_SEG_STATE_VA 0x480000000000ULL

struct onvm_seg {
	int fd;
	uint8_t *base;
	uint64_t size;
	char path[PATH_MAX];
};

/* The first hugetlbfs mount with the system's default huge page size (from
 * /proc/mounts) into `dir`; 0, or -ENOENT. */
int onvm_seg_hugedir(char *dir, size_t len);

/*
 * Create (or replace a stale) segment file `path` of `size` bytes (a
 * multiple of the huge page size) and map it at `va`.  Returns 0, or a
 * negative errno: -EEXIST when `va` is taken in this process, -EBUSY when a
 * live process holds the file.  `seg` is filled only on success.
 */
int onvm_seg_create(struct onvm_seg *seg, const char *path, uint64_t va, uint64_t size);

/* Map an existing segment at `va` (another process created it).  0 or -errno. */
int onvm_seg_map(struct onvm_seg *seg, const char *path, uint64_t va, uint64_t size);

/* Take the huge pages behind [off, off + len) now.  0, or -ENOSPC/-errno. */
int onvm_seg_reserve(const struct onvm_seg *seg, uint64_t off, uint64_t len);

/* Give back the huge pages behind [off, off + len) (whole pages inside it). */
int onvm_seg_release(const struct onvm_seg *seg, uint64_t off, uint64_t len);

/* Unmap; the creator also removes the file (`unlink`). */
void onvm_seg_close(struct onvm_seg *seg, int unlink_file);

#endif /* ONVM_SEG_H */
