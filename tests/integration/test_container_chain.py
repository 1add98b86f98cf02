#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The demo chain with every NF in a container: bridge -n -> basic_monitor ->
simple_forward, each launched by the manager in a podman container of the NF
image built from the build tree (scripts/nf-image.sh).  The same assertions as
test_chain_traces.py -- output byte-identical and in order, every port and NF
counter exact, the monitor's per-flow counts equal tshark's, the pool back to
idle, no runtime file left -- plus: each NF reports the container it runs in,
which is one of the node's, and the node's containers are gone once it has
stopped.  The monitor's export directory is the only volume of its container.
"""
from onvm import containers, demo_chain, lab

TRACES = ["smtp.pcap", "dns.pcap", "webex.pcap"]


def main(L):
    image = containers.nf_image()
    for name in TRACES:
        demo_chain.run_trace(L, name, image=image)


if __name__ == "__main__":
    lab.run("container_chain", main)
