/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* Results files of NFs: see onvm_nf_output.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "onvm_nf_output.h"

int
nf_expand_instance(const char *in, unsigned int instance, char *out, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return -1;
	for (; *in != '\0'; in++) {
		int k;

		if (in[0] == '%' && in[1] == 'i') {
			k = snprintf(out + o, len - o, "%u", instance);
			in++;
		} else {
			k = snprintf(out + o, len - o, "%c", *in);
		}
		if (k < 0 || o + (size_t)k >= len)
			return -1;
		o += (size_t)k;
	}
	out[o] = '\0';
	return 0;
}

int
nf_write_file(const char *path, nf_output_fn *write, const void *arg)
{
	char tmp[PATH_MAX];
	FILE *f;
	int ret;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (f == NULL)
		return -errno;
	ret = write(f, arg) < 0 ? -EIO : 0;
	if (fclose(f) != 0 && ret == 0)
		ret = -EIO;
	if (ret == 0 && rename(tmp, path) != 0)
		ret = -errno;
	if (ret != 0)
		unlink(tmp);
	return ret;
}
