/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_seg.c -- a hugetlbfs file mapped at a fixed address (contract in
 * onvm_seg.h).  MAP_FIXED_NOREPLACE makes the kernel refuse an address that
 * something already occupies instead of silently replacing that mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onvm_seg.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

int
onvm_seg_hugedir(char *dir, size_t len)
{
	char dev[64], mnt[PATH_MAX], type[32], opts[256];
	FILE *f = fopen("/proc/mounts", "r");
	int ret = -ENOENT;

	if (f == NULL)
		return -errno;
	while (fscanf(f, "%63s %4095s %31s %255s %*d %*d", dev, mnt, type, opts) == 4) {
		if (strcmp(type, "hugetlbfs") != 0)
			continue;
		/* The default page size mount (no pagesize= or the 2M one). */
		if (strstr(opts, "pagesize=") != NULL && strstr(opts, "pagesize=2M") == NULL)
			continue;
		if ((size_t)snprintf(dir, len, "%s", mnt) < len)
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static int
map_at(struct onvm_seg *seg, int fd, const char *path, uint64_t va, uint64_t size)
{
	void *p = mmap((void *)(uintptr_t)va, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	if ((uint64_t)(uintptr_t)p != va) {
		/* A kernel before 4.17 ignores the flag and treats va as a hint. */
		munmap(p, size);
		return -EEXIST;
	}
	seg->fd = fd;
	seg->base = p;
	seg->size = size;
	snprintf(seg->path, sizeof(seg->path), "%s", path);
	return 0;
}

int
onvm_seg_create(struct onvm_seg *seg, const char *path, uint64_t va, uint64_t size)
{
	int fd, ret;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* A file someone still maps is theirs; an unlocked one is a dead
	 * node's leftover and is started afresh. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return ret;
	}
	if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)size) < 0 || flock(fd, LOCK_SH) < 0) {
		ret = -errno;
		goto fail;
	}
	ret = map_at(seg, fd, path, va, size);
	if (ret == 0)
		return 0;
fail:
	unlink(path);
	close(fd);
	return ret;
}

int
onvm_seg_map(struct onvm_seg *seg, const char *path, uint64_t va, uint64_t size)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_SH) < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if ((uint64_t)st.st_size < size) {
		close(fd);
		return -ERANGE;
	}
	ret = map_at(seg, fd, path, va, size);
	if (ret < 0)
		close(fd);
	return ret;
}

int
onvm_seg_reserve(const struct onvm_seg *seg, uint64_t off, uint64_t len)
{
	if (off > seg->size || len > seg->size - off)
		return -ERANGE;
	if (len == 0)
		return 0;
	/* hugetlbfs allocates whole pages: widen to the page boundaries
	 * (fallocate rounds itself, but say what is meant). */
	if (fallocate(seg->fd, 0, (off_t)off, (off_t)len) < 0)
		return -errno;
	return 0;
}

int
onvm_seg_release(const struct onvm_seg *seg, uint64_t off, uint64_t len)
{
	if (seg->base == NULL || off > seg->size || len > seg->size - off)
		return -ERANGE;
	if (len > 0 &&
	    fallocate(seg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0)
		return -errno;
	return 0;
}

void
onvm_seg_close(struct onvm_seg *seg, int unlink_file)
{
	if (seg->base != NULL)
		munmap(seg->base, seg->size);
	if (unlink_file && seg->path[0] != '\0')
		unlink(seg->path);
	if (seg->fd >= 0)
		close(seg->fd);
	seg->base = NULL;
	seg->fd = -1;
}
