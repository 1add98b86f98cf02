#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Local resiliency with NFs in containers: test_nf -d 300 -> load_balancer
("resiliency": "local"), each NF -- the balancer's active and its standby too
-- in a podman container of the NF image.  The balancer's active is SIGKILLed
mid-trace (ONVM_NF_FAULT, at a seeded packet in the middle third, at the
"committed" point of its batch; set in the container's environment).

Asserted, as test_nf_load_balancer.py's transparent run asserts for processes:
the output capture is the input minus nothing, frame by frame, every IPv4
frame rewritten only toward its backend with valid checksums; every flow on
one backend over the whole run (many flows span the failover); one failover,
nothing dropped by it; ND marks == flows; the promoted balancer's export ==
the capture; the pool back to its idle level (no mbuf leaked).  And for the
containers: the balancer now runs in the container launched as its standby,
the node's containers are then exactly test_nf's, the promoted balancer's and
a fresh standby's (the dead one's is gone), and none is left once the node
has stopped.
"""
import os
import random

import test_nf_load_balancer as lbt

import lab


def test(L):
    image = lab.nf_image()
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    frames = lbt.mix([lab.trace(t) for t in lbt.TRACES])
    path = L.path("mixed.pcap")
    lab.write_pcap(path, frames)
    at = rng.randrange(len(frames) // 3, 2 * len(frames) // 3)
    print(f"seed {seed} (ONVM_TEST_SEED={seed} repeats): {len(frames)} frames, kill at "
          f"committed:{at}")
    lbt.run_transparent(L, "committed", at, path, frames, image=image)


if __name__ == "__main__":
    lab.Lab("container_failover").run(test)
