#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The outside world's input to a predecessor: a capture's frames sent
into an interface at a fixed rate, whether anyone listens or not.

A net_pcap port reads its whole capture at once when its node starts, and a
node restarted reads it again from the start; real input neither waits for
a node nor repeats itself.  This program sends the frames of PCAP, in order,
on IFACE (a veth end with no address: the kernel forwards nothing) through
a raw AF_PACKET socket, frame i at i / RATE seconds after the start (a few
frames per burst), so while the node on the other end is down its frames
are lost on the wire, as they would be.

  paced_source.py IFACE PCAP --rate FPS --log FILE

The log maps time to progress, for an oracle that must tell which frames
a restart may have lost: "CLOCK_MONOTONIC_SECONDS FRAMES_SENT" lines every
10 ms, and "end FRAMES_SENT" when it stops (all sent, or SIGTERM/SIGINT:
the input ends early; exit status 0).
"""
import argparse
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from onvm.pcap import read_pcap  # noqa: E402

ETH_P_ALL = 0x0003
LOG_S = 0.01


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("pcap")
    ap.add_argument("--rate", type=float, required=True, help="frames per second")
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    frames = read_pcap(a.pcap)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    # In order only from one CPU: a veth hands each frame to the backlog of
    # the CPU that sent it, and a sender moved between CPUs may overtake
    # itself.
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((a.iface, 0))
    log = open(a.log, "w", buffering=1)
    t0 = time.monotonic()
    sent, next_log = 0, t0
    while sent < len(frames) and not stop:
        now = time.monotonic()
        due = min(len(frames), int((now - t0) * a.rate) + 1)
        while sent < due:
            try:
                s.send(frames[sent])
            except OSError as e:  # ENOBUFS: the frame is lost on the wire
                if e.errno not in (105,):
                    raise
            sent += 1
        if now >= next_log:
            log.write(f"{now:.6f} {sent}\n")
            next_log = now + LOG_S
        time.sleep(max(0.0, min(LOG_S, t0 + sent / a.rate - time.monotonic())))
    log.write(f"{time.monotonic():.6f} {sent}\nend {sent}\n")
    log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
