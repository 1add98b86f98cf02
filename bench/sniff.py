#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Kernel-timestamped capture of one interface, for bench/remote_tput.py.

  sniff.py IFACE OUT {tags|rsync}

Runs (in the namespace it is started in) until SIGTERM, then writes OUT, one
line per frame of interest:
  tags:  "<ns> <tag>"  frames of the lab's tagged input (source MAC 02:00 +
         a 32-bit tag), in either direction;
  rsync: "<ns> <dir> <type> <txid>"  RSync frames (EtherType 0x88B6): dir
         "out" (sent from this interface) or "in", type and txid from the
         header (docs/wire-format.md).
<ns> is the kernel's receive/transmit timestamp (SO_TIMESTAMPNS,
CLOCK_REALTIME), so two sniffers in two namespaces share a clock.
"""
import signal
import socket
import struct
import sys

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4


def main():
    ifname, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
    s.settimeout(0.2)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    rows = []
    print("sniffing", flush=True)
    while not stop:
        try:
            data, anc, _, addr = s.recvmsg(128, socket.CMSG_SPACE(16))
        except (socket.timeout, InterruptedError):
            continue
        ns = 0
        for level, typ, val in anc:
            if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                ns = sec * 1000000000 + nsec
        if len(data) < 14:
            continue
        if mode == "tags":
            if data[6:8] == b"\x02\x00":
                rows.append(f"{ns} {struct.unpack_from('>I', data, 8)[0]}")
        elif data[12:14] == b"\x88\xb6" and len(data) >= 38:
            d = "out" if addr[2] == PACKET_OUTGOING else "in"
            rows.append(f"{ns} {d} {data[15]} {struct.unpack_from('>Q', data, 30)[0]}")
    with open(out, "w") as f:
        f.write("\n".join(rows) + ("\n" if rows else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
