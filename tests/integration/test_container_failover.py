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

Then the window a container standby has that a process standby has not: the
manager knows a container standby's pid only once it registers (its runtime
starts it), so an active that dies while its fresh standby's container is
still starting is handed over to that standby before it has registered
(before the review: the ordinary death path -- the instance was lost).  A
local simple_forward on net_null: its first active is killed, and the
promoted one is killed as soon as the manager launches the next standby's
container.  Asserted: two failovers, two deaths, the instance still running
in the second standby's container and forwarding, no container failure, and
at stop every mbuf back and no container left.
"""
import os
import random
import re
import signal

from onvm import balancer, containers, lab, pcap, traces


def pending_standby(L, image, attempt):
    cfg = containers.containerize({
        "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                  {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
        "nfs": [{"binary": "simple_forward", "service": 1, "resiliency": "local"}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "gen", "exit_port": "sink"}],
    }, image)
    node = L.node(f"pending{attempt}", cfg).start()

    def nf():
        return node.nf_by(service=1)[0]

    def standby_launches():
        return re.findall(r"launched standby of NF 'simple_forward' \(.* in (\S+)\) pid",
                          node.log())

    first = nf()
    os.kill(first["pid"], signal.SIGKILL)
    lab.wait_until(lambda: nf()["failovers"] == 1, 30, "the first failover")
    second = nf()
    lab.wait_until(lambda: len(standby_launches()) >= 2, 30, "the next standby's launch")
    os.kill(second["pid"], signal.SIGKILL)  # its standby's container is starting
    pending = standby_launches()[1]
    lab.wait_until(lambda: nf()["failovers"] == 2, 60, "the failover to the starting standby")
    if f"(instance 0, container {pending}) registered after its active died" not in node.log():
        node.stop()
        return False  # it registered before the kill landed: an ordinary failover
    # (the manager counts a failover once its control thread sees the
    # promotion the standby made: a poll after the NF's own counter)
    try:
        lab.wait_until(lambda: node.info()["nf_failovers"] >= 2, 5, "the manager counted it")
    except lab.TestFailure:
        pass  # (asserted below, with the counts)
    info = node.info()
    now = nf()
    L.expect(now["container"] == pending,
             f"pending: the NF runs in {now['container']}, not in {pending}")
    L.expect(info["nf_deaths"] == 2 and info["nf_failovers"] == 2,
             f"pending: deaths {info['nf_deaths']}, failovers {info['nf_failovers']}")
    L.expect(info["nf_container_failures"] == 0,
             f"pending: container failures {info['nf_container_failures']}")
    tx0 = node.port("sink")["tx"]
    lab.wait_until(lambda: node.port("sink")["tx"] > tx0 + 1000, 30, "forwarding again")
    lab.wait_until(lambda: nf()["standby_parked"] == 1, 60, "a fresh standby parked")
    rc = node.stop()
    L.expect(rc == 0, f"pending: manager exit status {rc}")
    L.expect("pool in use at exit: 0 (at start 0)" in node.log(), "pending: mbufs missing")
    L.expect(not containers.node_containers(node.prefix), "pending: containers left")
    print(f"pending: the active died while {pending} started; it took over")
    return True


def test(L):
    image = containers.nf_image()
    if not any(pending_standby(L, image, k) for k in range(3)):
        raise lab.TestFailure("pending: the standby registered before the kill, 3 times")
    seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    frames = traces.mix([traces.trace(t) for t in traces.ALL])
    path = L.path("mixed.pcap")
    pcap.write_pcap(path, frames)
    at = rng.randrange(len(frames) // 3, 2 * len(frames) // 3)
    print(f"seed {seed} (ONVM_TEST_SEED={seed} repeats): {len(frames)} frames, kill at "
          f"committed:{at}")
    balancer.run_transparent(L, "committed", at, path, frames, image=image)


if __name__ == "__main__":
    lab.Lab("container_failover").run(test)
