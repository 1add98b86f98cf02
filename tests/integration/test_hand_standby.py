#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A standby started by hand protects a launched NF.

The node launches test_nf -S (packet/byte totals in a state region) with
"resiliency": "none" and -F processed:200 (it SIGKILLs itself in the middle of
the batch holding packet 200).  Before the trace flows (a gate NF holds the
ports), an operator starts the same binary by hand:
    test_nf --proc-type=secondary --file-prefix=P --lcores=51@0 --
            -r 1 -n INSTANCE --standby -- -S -e FILE
Asserted:
  - the hand-started standby registers against the instance and parks
    (standby_pid, standby_parked in /onvm/nfs);
  - after the crash it is the slot's active (pid), one failover is counted,
    and the manager launches no standby of its own (the NF is not "local");
  - the output is an in-order subsequence of quic.pcap; the promoted NF's
    totals (exported when the manager stops it) equal what left the port;
    frames missing == the packets the promotion dropped (uncommitted batch);
  - it stops cleanly with the node (exit 0); the pool returns to idle.
  - while it is parked, its lcore id is reserved: another NF started by hand
    with the same --lcores id is refused, naming the standby (finding 10 of
    the hardening review: the id was checked but never reserved, so after a
    promotion two live processes could share one mempool cache).

A second scenario, standby_before_lock (finding 10): the launched active
stalls between its registration and taking its liveness lock
(ONVM_NF_FAULT=test_nf:registered:4000), and the standby started by hand
registers and parks in that window (no state regions: a standby waits for its
active's state block, which comes after the lock).  It must not take the free lock for the
active's orderly stop and exit: it stays parked, and when the active is
killed afterwards it takes over (one failover).
"""
import os
import signal
import time

from onvm import lab, pcap, traces

HAND_LCORE = 51


def wait_launched_registered(node):
    """The launched test_nf (service 1) once it has registered."""
    def registered():
        try:  # the telemetry socket appears a little after the manager starts
            v = node.nf_by(service=1)
        except OSError:
            return None
        return v[0] if v and v[0]["status"] in ("ready", "running") else None
    return lab.wait_until(registered, 60, "the launched test_nf registered",
                          alive=node.assert_running)


def spawn_standby(L, node, name, instance, nf_args=()):
    """test_nf started by hand as the standby of `instance`, lcore HAND_LCORE."""
    return L.spawn(name, [lab.TEST_NF, "--proc-type=secondary", f"--file-prefix={node.prefix}",
                          f"--lcores={HAND_LCORE}@0", "--no-pci", "--", "-r", "1", "-n",
                          str(instance), "--standby", *(["--", *nf_args] if nf_args else [])])


def test(L):
    path = traces.trace("quic.pcap")
    frames = pcap.read_pcap(path)
    out, tot = L.path("out.pcap"), L.path("totals.json")
    gate_bin, gate = L.gate_nf("gate", lab.nf_binary("simple_forward"))
    node = L.node("hand_standby", {
        "nf_defaults": {"start_timeout_ms": 60000},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "args": ["-S", "-F", "processed:200"]},
                {"binary": gate_bin, "service": 9}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }).start(wait=False)
    active = wait_launched_registered(node)
    inst = active["instance"]
    sb = spawn_standby(L, node, "standby", inst, ["-S", "-e", tot])
    m = lab.wait_until(lambda: (lambda v: v if v["standby_pid"] == sb.pid and v["standby_parked"]
                                else None)(node.nf_by(service=1)[0]),
                       60, "the hand-started standby parked", alive=node.assert_running)
    other = L.spawn("same-lcore", [lab.nf_binary("simple_forward"), "--proc-type=secondary",
                                    f"--file-prefix={node.prefix}", f"--lcores={HAND_LCORE}@0",
                                    "--no-pci", "--", "-r", "7"])
    try:
        orc = other.wait(30)
    except Exception:
        raise lab.TestFailure("an NF with the parked standby's lcore id was not refused")
    L.expect(orc != 0 and f"lcore id {HAND_LCORE} is used by the standby of NF" in
             L.proc_log(other), f"an NF with the standby's lcore id: exit {orc}, "
             f"{L.proc_log(other)[-300:]}")
    L.open_gate(gate)
    node.wait_ready()
    lab.wait_until(lambda: node.nf_by(service=1)[0]["failovers"] == 1, 30, "the failover")
    port = node.wait_port("in", "tx", 1)
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 30,
                   "pool back to its idle level (trace done)")
    m = node.nf_by(service=1)[0]
    L.expect(m["pid"] == sb.pid, f"slot pid {m['pid']}, hand-started standby {sb.pid}")
    L.expect(m["pid"] != active["pid"], "the crashed NF is still the slot's pid")
    time.sleep(0.5)
    m = node.nf_by(service=1)[0]
    L.expect(m["standby_pid"] == 0, f"the manager started a standby ({m['standby_pid']}) for "
             "an NF that is not \"local\"")
    info = node.info()
    L.expect(info["nf_failovers"] == 1, f"node failovers {info['nf_failovers']}")
    port = node.port("in")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    try:
        src = sb.wait(30)
    except Exception:
        raise lab.TestFailure("the promoted hand-started NF did not stop with the node")
    L.expect(src == 0, f"the promoted hand-started NF exited with {src}")

    got = pcap.read_capture_out(out)
    lab.check(pcap.is_subsequence(got, frames), "output is not an in-order subsequence of the input")
    L.expect(len(got) == port["tx"], f"capture {len(got)}, port tx {port['tx']}")
    doc = lab.read_json(tot)
    L.expect(doc["packets"] == len(got) and doc["bytes"] == sum(map(len, got)),
             f"state says {doc}, {len(got)} frames / {sum(map(len, got))} bytes left")
    L.expect(len(frames) - len(got) == m["failover_dropped"],
             f"{len(frames) - len(got)} frames missing, promotion dropped {m['failover_dropped']}")
    print(f"hand-started standby pid {sb.pid} took over instance {inst}: {len(got)} of "
          f"{len(frames)} frames out, dropped {m['failover_dropped']}")


def standby_before_lock(L):
    path = traces.trace("quic.pcap")
    out = L.path("late-out.pcap")
    node = L.node("hand_standby_lock", {
        "nf_defaults": {"start_timeout_ms": 60000},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }, env={"ONVM_NF_FAULT": "test_nf:registered:4000"}).start(wait=False)
    active = wait_launched_registered(node)
    t0 = time.monotonic()
    sb = spawn_standby(L, node, "late-standby", active["instance"])
    lab.wait_until(lambda: node.nf_by(service=1)[0]["standby_parked"], 30,
                   "the hand-started standby parked")
    parked_after = time.monotonic() - t0
    L.expect(parked_after < 3.0, f"the standby parked {parked_after:.1f} s after the active "
             "registered: too close to the end of its 4 s stall to test the window")
    node.wait_ready()
    lab.wait_until(lambda: node.nf_by(service=1)[0]["status"] == "running", 30,
                   "the active running (its stall over)")
    time.sleep(0.3)
    L.expect(sb.poll() is None, f"the standby exited ({sb.returncode}) when it found the "
             "liveness lock free before the active took it")
    os.kill(active["pid"], signal.SIGKILL)
    lab.wait_until(lambda: node.nf_by(service=1)[0]["failovers"] == 1, 30,
                   "the hand-started standby to take over")
    L.expect(node.nf_by(service=1)[0]["pid"] == sb.pid, "the standby is not the slot's pid")
    rc = node.stop()
    L.expect(rc == 0, f"standby_before_lock: manager exit status {rc}")
    print(f"standby_before_lock: parked {parked_after:.1f} s into the active's 4 s stall, "
          "took over after the kill")


def ns_child(L, unshare, what):
    """The host pid of the process `unshare --pid --fork` (or nsenter) started."""
    def child():
        try:
            with open(f"/proc/{unshare.pid}/task/{unshare.pid}/children") as f:
                kids = f.read().split()
        except OSError:
            return None
        return int(kids[0]) if kids else None
    return lab.wait_until(child, 30, f"{what} started in its pid namespace")


def spawn_in_pid_ns(L, name, argv):
    """argv as pid 1 of a new pid namespace (it dies with the unshare)."""
    p = L.spawn(name, ["unshare", "--pid", "--fork", "--kill-child", *argv])
    return p, ns_child(L, p, name)


def pid_namespace(L):
    """NFs in a pid namespace of their own (finding 5 of the second review):
    the manager used to take the NF's word for its pid, and from such an NF
    that word is its namespace pid -- 1 and 2 here, which the manager would
    have watched (its own init, a kernel thread) instead of the NFs.  Its pid now comes
    from the pidfd libnf sends with the request.  Asserted: an NF started by
    hand in a namespace and the standby of a launched NF started in the same
    namespace both register under their host pids; the standby takes over when the
    active is killed, and the slot names it; the manager sees both die when
    they are SIGKILLed (the slots are freed) and its pool returns to idle."""
    node = L.node("hand_pidns", {
        "nf_defaults": {"start_timeout_ms": 60000},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={traces.trace('quic.pcap')},"
                                        f"tx_pcap={L.path('pidns-out.pcap')}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }).start(wait=False)
    active = wait_launched_registered(node)
    node.wait_ready()
    node.wait_port("in", "tx", 1)
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 30,
                   "pool back to its idle level (trace done)")
    idle = node.pool()["idle_in_use"]
    fwd, fwd_pid = spawn_in_pid_ns(L, "fwd-pidns", [
        lab.nf_binary("simple_forward"), "--proc-type=secondary", f"--file-prefix={node.prefix}",
        f"--lcores={HAND_LCORE + 1}@0", "--no-pci", "--", "-r", "7"])
    m = lab.wait_until(lambda: (node.nf_by(service=7) or [None])[0], 60,
                       "the NF in a pid namespace registered", alive=node.assert_running)
    L.expect(m["pid"] == fwd_pid, f"slot pid {m['pid']}, the NF's host pid {fwd_pid}")
    # In the same namespace: DPDK names a secondary's memory-map files by its
    # pid, so two secondaries that are both pid 1 of their namespaces (and
    # share /var/run/dpdk) collide.  The kernel kills it with the
    # namespace's init, the NF above.
    sb = L.spawn("standby-pidns", ["nsenter", "-t", str(fwd_pid), "--pid", "--",
                                   lab.TEST_NF, "--proc-type=secondary", f"--file-prefix={node.prefix}",
        f"--lcores={HAND_LCORE}@0", "--no-pci", "--", "-r", "1", "-n", str(active["instance"]),
        "--standby"])
    sb_pid = ns_child(L, sb, "the standby")
    lab.wait_until(lambda: (lambda v: v["standby_pid"] == sb_pid and v["standby_parked"])(
        node.nf_by(service=1)[0]), 60, "the standby in a pid namespace parked",
        alive=node.assert_running)
    os.kill(active["pid"], signal.SIGKILL)
    lab.wait_until(lambda: node.nf_by(service=1)[0]["failovers"] == 1, 30,
                   "the standby in a pid namespace to take over")
    lab.wait_until(lambda: node.nf_by(service=1)[0]["pid"] == sb_pid, 10,
                   "the slot naming the promoted standby's host pid")
    os.kill(sb_pid, signal.SIGKILL)
    os.kill(fwd_pid, signal.SIGKILL)
    lab.wait_until(lambda: not node.nf_by(service=7), 30,
                   "the manager to reclaim the killed NF in a pid namespace")
    lab.wait_until(lambda: all(v["pid"] != sb_pid for v in node.nf_by(service=1)), 30,
                   "the manager to reclaim the killed promoted standby")
    lab.wait_until(lambda: node.pool()["in_use"] == idle, 30, "pool back to its idle level")
    rc = node.stop()
    L.expect(rc == 0, f"pid_namespace: manager exit status {rc}")
    print(f"pid_namespace: NF host pid {fwd_pid}, standby host pid {sb_pid} registered, "
          "took over and were reclaimed")


def main(L):
    only = os.environ.get("ONVM_SCENARIO")
    for scenario in (test, standby_before_lock, pid_namespace):
        if only in (None, scenario.__name__):
            scenario(L)


if __name__ == "__main__":
    lab.Lab("hand_standby").run(main)
