/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * make_ftc_pcap.c -- a capture of frames from FTC's encoder (ftc_build), for
 * test_ftc_dissector.py: an IPv4 packet with two logs (one split in parts)
 * and two commits, a propagating frame, and a VLAN packet with one log.
 *
 *   make_ftc_pcap OUT.pcap
 */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "ftc_wire.h"
#include "ftc_xfer.h"

static const uint8_t ipv4[] = {
	0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0, 0, 20, 0, 0,
	0,    0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
};

static void
put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f); /* little endian host: the pcap's own order */
}

static void
frame(FILE *f, const uint8_t *b, int n)
{
	put32(f, 0);
	put32(f, 0);
	put32(f, (uint32_t)n);
	put32(f, (uint32_t)n);
	fwrite(b, 1, (size_t)n, f);
}

int
main(int argc, char **argv)
{
	static const uint8_t a[] = {1, 2, 3, 4, 5, 6, 7, 8}, b[] = {9, 9, 9};
	const struct ftc_record_in recs[] = {
		{.region = 0, .len = sizeof(a), .offset = 4096, .bytes = a},
		{.region = 2, .len = sizeof(b), .offset = 7, .bytes = b},
	};
	const struct ftc_log_in logs[] = {
		{.instance = 3, .part = 0, .parts = 1, .seq = 41, .recs = recs, .n_recs = 2},
		{.instance = 5, .part = 1, .parts = 2, .seq = 1099511627776ull, .recs = recs + 1,
		 .n_recs = 1},
	};
	const struct ftc_commit commits[] = {{.instance = 3, .kind = FTC_HELD, .seq = 40},
					    {.instance = 9, .kind = FTC_NEED, .seq = 7}};
	uint8_t vlan[sizeof(ipv4) + 4], out[512];
	FILE *f;
	int n;

	if (argc != 2 || (f = fopen(argv[1], "wb")) == NULL)
		return 2;
	put32(f, 0xa1b2c3d4);
	put32(f, 0x00040002); /* version 2.4 */
	put32(f, 0);
	put32(f, 0);
	put32(f, 65535);
	put32(f, 1); /* Ethernet */
	n = ftc_build(out, sizeof(out), ipv4, sizeof(ipv4), 0, logs, 2, commits, 2);
	if (n < 0)
		return 1;
	frame(f, out, n);
	n = ftc_build(out, sizeof(out), ipv4, 12, FTC_F_PROPAGATE, NULL, 0, commits, 2);
	if (n < 0)
		return 1;
	frame(f, out, n);
	memcpy(vlan, ipv4, 12);
	vlan[12] = 0x81;
	vlan[13] = 0x00;
	vlan[14] = 0;
	vlan[15] = 42;
	memcpy(vlan + 16, ipv4 + 12, sizeof(ipv4) - 12);
	n = ftc_build(out, sizeof(out), vlan, sizeof(vlan), 0, logs, 1, NULL, 0);
	if (n < 0)
		return 1;
	frame(f, out, n);
	/* the state transfer: a PIECE of 8 bytes and a FETCH */
	{
		struct ftc_xfer x = {.op = FTC_XFER_PIECE, .chain = 29, .from = 2, .instance = 1,
				     .nonce = 7, .seq = 40, .index = 3, .region = 1, .len = sizeof(a),
				     .offset = 4096, .bytes = a};

		memcpy(out, ipv4, 12);
		n = ftc_xfer_build(out, sizeof(out), &x);
		if (n < 0)
			return 1;
		frame(f, out, n);
		x = (struct ftc_xfer){.op = FTC_XFER_FETCH, .chain = 29, .from = 1, .instance = 1,
				      .nonce = 8};
		n = ftc_xfer_build(out, sizeof(out), &x);
		if (n < 0)
			return 1;
		frame(f, out, n);
	}
	return fclose(f) == 0 ? 0 : 1;
}
