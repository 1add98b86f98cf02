# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.traces -- the captures the tree ships in traces/ (nDPI's, with their
source and licence in traces/README.md): where they are, and several of
them interleaved into one input.

$ONVM_TRACES points elsewhere (a directory of the same files); a trace that
is missing fails the test, naming the path.
"""
import os

from onvm import pcap
from onvm.lab import SRC, TestFailure

# Every trace in traces/, in the order the load balancer's tests interleave
# them (test_nf_load_balancer.py, test_container_failover.py).
ALL = ["bittorrent.pcap", "skype-conference-call.pcap", "webex.pcap", "tor.pcap",
       "quic.pcap", "ftp.pcap", "ssh.pcap", "smtp.pcap", "http-manipulated.pcap",
       "wireguard.pcap", "mpeg.pcap", "dns.pcap"]


def traces_dir():
    """The tree's traces/ (nDPI's captures, traces/README.md), or $ONVM_TRACES."""
    return os.path.abspath(os.environ.get("ONVM_TRACES") or os.path.join(SRC, "traces"))


def trace(name):
    path = os.path.join(traces_dir(), name)
    if not os.path.exists(path):
        raise TestFailure(f"trace {path} is missing (the tree ships it in traces/)")
    return path


def mix(paths):
    """The traces interleaved: frame i of a trace of n frames sits at (i + 0.5) / n."""
    placed = []
    for t, p in enumerate(paths):
        frames = pcap.read_pcap(p)
        placed += [((i + 0.5) / len(frames), t, i, fr) for i, fr in enumerate(frames)]
    placed.sort(key=lambda x: x[:3])
    return [x[3] for x in placed]
