/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_nf_output.h -- the two things every NF of the suite does with its
 * results file: "%i" in a path given on the command line becomes the
 * instance id (so several instances of a service can share one command
 * line), and the file is written to PATH.tmp and renamed over PATH, so a
 * reader never sees half a file.  EAL-free; not on any data path.
 */
#ifndef ONVM_NF_OUTPUT_H
#define ONVM_NF_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copy `in` to `out` with every "%i" replaced by `instance`.  0, or -1 if
 * the result does not fit in `len` bytes (including the NUL). */
int nf_expand_instance(const char *in, unsigned int instance, char *out, size_t len);

/* Writes the file's contents; returns < 0 on failure. */
typedef int nf_output_fn(FILE *f, const void *arg);

/* Write `path` through `write` atomically (PATH.tmp, then rename).  0, or a
 * negative errno; on failure the temporary file is removed and `path` is
 * left as it was. */
int nf_write_file(const char *path, nf_output_fn *write, const void *arg);

#ifdef __cplusplus
}
#endif
#endif /* ONVM_NF_OUTPUT_H */
