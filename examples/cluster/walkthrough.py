#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The cluster walkthrough of docs/operator-guide.md ("A three-node
cluster on one machine"), run for real: a three-member etcd on loopback;
three nodes -- edge (the chain's predecessor: "pred"), and "primary" and
"standby", which run the chain -- plus a sink, each an onvm_mgr in a
network namespace of its own, linked by veth pairs; an onvm-agent beside
each of the three.  It prints every onvmctl command it runs and its
output, step by step:

  1. the nodes registered (onvmctl nodes)
  2. the chain declared and placed, its standby synced (declare, chains);
     the standby's configuration rendered from etcd and its node's own
     part (config)
  3. traffic through it; the primary's manager killed: BFD, the agents'
     promotion in etcd, the failover -- the chain runs unprotected
  4. with no operator, the dead node brought back as the new standby
     (its agent's --on-standby hook, given the configuration it
     rendered; here this script plays the node's service manager) and
     the chain protected again (chain web)
  5. an operator's switch-over back to the other node (switchover web)

Run as root on a machine set up by scripts/setup.sh (hugepages, the
build, etcd): examples/cluster/walkthrough.py.  Everything it starts
is stopped at the end, its namespaces removed.
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from onvm import cluster_lab, etcd_lab, lab, traces  # noqa: E402
from onvm import remote_lab as rc  # noqa: E402

RATE = 2000  # frames/s of the chain's input


def onvmctl(ec, *argv):
    """Run, print and check one onvmctl command (exit status 0)."""
    cmd = ["tools/onvmctl", *argv]
    print(f"\n$ {' '.join(cmd)}", flush=True)
    out = subprocess.run(["/usr/bin/python3", cluster_lab.ONVMCTL, "--endpoints",
                          ",".join(ec.endpoints), *argv],
                         capture_output=True, text=True, timeout=60)
    print((out.stdout + out.stderr).rstrip(), flush=True)
    lab.check(out.returncode == 0, f"onvmctl {' '.join(argv)}: exit {out.returncode}")
    return out.returncode


def step(text):
    print(f"\n== {text}", flush=True)


def main(L):
    etcd_lab.require()
    step("etcd: three members on loopback")
    ec = etcd_lab.EtcdCluster(L, tag="walk").start()
    print(f"endpoints {','.join(ec.endpoints)}")
    frames = rc.tagged_input(traces.trace("smtp.pcap"), 900)  # about 40 s of input
    rl = cluster_lab.ReprotectLab(L, ec, frames, "", RATE)
    step("the nodes, their agents, the chain declared (onvmctl declare web ...), "
         "its standby synced, then the input at 2000 frames/s")
    rl.start()
    onvmctl(ec, "nodes")
    onvmctl(ec, "chains")
    step("the standby's configuration as etcd and its node make it (what its "
         "agent hands the hook after a failover)")
    onvmctl(ec, "config", "web", "--node", "standby", "--base", rl.node_files["standby"])
    lab.wait_until(lambda: rc.remote(rl.nodes["primary"])["out_released"] >= RATE, 60,
                   "a second of traffic")
    step("the primary's manager killed (SIGKILL)")
    name, node = rl.primary()
    t0 = time.monotonic()
    node.stop(sig=9)
    node.remove_runtime()
    lab.wait_until(lambda: rc.remote(rl.pred)["failovers"] == 1, 30, "the failover")
    print(f"failed over in {(time.monotonic() - t0) * 1000:.0f} ms (as the harness saw it)")
    onvmctl(ec, "chain", "web")
    step("no operator: the dead node brought back as the new standby, the chain "
         "protected again")
    lab.wait_until(lambda: rl.serve_hooks() == name, 60, "the hook asking for a standby")
    lab.wait_until(lambda: rl.roles()["synced"] == [name], 60, "protected again")
    print(f"protected again {time.monotonic() - t0:.2f} s after the kill")
    onvmctl(ec, "chains")
    step("an operator's switch-over back")
    onvmctl(ec, "switchover", "web")
    lab.wait_until(lambda: rc.remote(rl.pred)["failovers"] == 2, 30, "the switch-over")
    onvmctl(ec, "chain", "web")
    step("done: stopping everything")
    rl.stop()
    ec.stop()


if __name__ == "__main__":
    os.chdir(os.path.join(HERE, "..", ".."))
    lab.run("walkthrough", main)
