#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A container NF's runtime CLI dies while its NF is starting: the manager
must never take the NF for dead while it lives.

Until a container NF registers, the manager watches the runtime CLI (podman
run) it forked; at registration (EAL's IPC thread) the NF's own pidfd becomes
the watch.  Here the CLI is SIGKILLed once the container's init runs but
before the NF has registered, and the control thread handles the CLI's exit
event 1.5 s late (ONVM_MGR_FAULT=ctl_event_delay) -- so the registration comes
in between (before the fix: the late event, of the CLI's pidfd, was taken for
the death of the NF whose pidfd had replaced it: a live NF reclaimed).
Asserted: no NF death is counted; either the registration is refused (the
CLI was gone: the start failed, counted once, no NF process and no container
remain) or, if the CLI was still exiting when the NF asked, the NF runs on,
watched through its own pidfd; the node keeps forwarding its process chain;
at stop every mbuf is back and nothing of the container is left.  Repeated a few times: the kill
must land before the registration (checked from the log).
"""
import os
import signal
import time

from onvm import containers, lab


ATTEMPTS = 16  # a fast machine's NF may register before the kill: tried again


def nf_init_pid(prefix):
    """The container's init (libnf as pid 1 of its namespace), once it runs."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm == "onvm-nf-init" and f"--file-prefix={prefix}" in lab.pid_cmdline(int(d)):
            return int(d)
    return None


def attempt(L, image, k):
    cfg = {
        "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                  {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
        "nfs": [{"binary": "simple_forward", "service": 1},
                {"binary": "simple_forward", "name": "boxed", "service": 2,
                 "container": {"image": image}}],
        "chains": [{"name": "served", "services": [1], "ingress_port": "gen",
                    "exit_port": "sink"},
                   {"name": "boxed", "services": [2]}],
        "containers": containers.containers_section(),
    }
    node = L.node(f"race{k}", cfg, env={"ONVM_MGR_FAULT": "ctl_event_delay:1500"})
    node.start(wait=False)
    cli = lab.wait_until(lambda: (lambda m: int(m.group(1)) if m else None)(
        __import__("re").search(r"launched NF 'boxed' \(.*\) pid (\d+)", node.log())), 30,
        "the container NF's launch")
    # polled closely: the NF registers tens of ms after its init starts
    lab.wait_until(lambda: nf_init_pid(node.prefix), 30, "the container's init",
                   interval=0.002)
    killed_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, as register_ns
    os.kill(cli, signal.SIGKILL)
    node.wait_ready(60)
    boxed = node.nf_by(name="boxed")
    if boxed and boxed[0]["register_ns"] < killed_ns:
        node.stop()
        return False  # registered before the kill: the race was not run
    time.sleep(3)  # the delayed event (1.5 s), and anything it would set off
    info = node.info()
    L.expect(info["nf_deaths"] == 0, f"race {k}: nf_deaths {info['nf_deaths']}: a live NF "
                                     f"was taken for dead")
    live = sorted(nf["name"] for nf in node.nfs().values())
    if "is gone: its start failed" in node.log():
        # The CLI was gone when the NF asked: refused, the start failed.
        how = "refused"
        L.expect(info["nf_container_failures"] == 1,
                 f"race {k}: nf_container_failures {info['nf_container_failures']}")
        L.expect(live == ["simple_forward"], f"race {k}: NF slots {live}")
        lab.wait_until(lambda: containers.node_containers(node.prefix) == [], 30,
                       "no container left")
        lab.wait_until(lambda: nf_init_pid(node.prefix) is None, 30, "the container NF gone")
    else:
        # The CLI was still exiting when the NF registered: the NF's own
        # pidfd is its watch, and it runs on without its CLI.
        how = "registered"
        boxed = node.nf_by(name="boxed")
        L.expect(len(boxed) == 1 and boxed[0]["status"] == "running" and
                 lab.pid_alive(boxed[0]["pid"]),
                 f"race {k}: the registered NF is not running and watched: {boxed}")
        L.expect(info["nf_container_failures"] == 0,
                 f"race {k}: nf_container_failures {info['nf_container_failures']}")
    tx0 = node.port("sink")["tx"]
    lab.wait_until(lambda: node.port("sink")["tx"] > tx0 + 1000, 30, "the process chain")
    rc = node.stop()
    L.expect(rc == 0, f"race {k}: manager exit status {rc}")
    L.expect("pool in use at exit: 0 (at start 0)" in node.log(),
             f"race {k}: mbufs missing at exit")
    L.expect(containers.node_containers(node.prefix) == [], f"race {k}: containers left")
    L.expect(nf_init_pid(node.prefix) is None, f"race {k}: the container NF outlived the node")
    print(f"attempt {k}: the CLI died before the NF registered: {how}, no death counted")
    return True


def test(L):
    image = containers.nf_image()
    for k in range(ATTEMPTS):
        if attempt(L, image, k):
            return
        print(f"attempt {k}: the NF registered before the kill; again")
    raise lab.TestFailure(f"the kill never landed before the registration in {ATTEMPTS} "
                          "attempts")


if __name__ == "__main__":
    lab.Lab("container_races").run(test)
