#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Local resiliency at the edges the hardening review found, one node each.

A "local" test_nf -S (packet/byte totals in a state region) with its standby:

  fini_death      (finding 2) the active, asked to stop (SIGTERM), dies inside
                  nf_fini after it unregistered (-F fini): its standby must not
                  promote into the slot the manager is taking down.  Asserted:
                  the standby exits, the slot is freed, no failover is counted,
                  the manager says why in its log, the pool returns to idle.
  promote_death   (finding 3) the active dies with an uncommitted batch
                  (-F processed:200) and its standby dies inside the promotion
                  (ONVM_NF_FAULT=test_nf:promoting:0), after deciding to drop
                  that batch and before handing it on: every mbuf is returned
                  exactly once -- the pool comes back to its idle level, not
                  below it (a double free) nor above (a leak).
  asleep_then_hung (finding 7) the active is asleep when it dies (SIGSTOP while
                  idle, traffic queued behind it, then SIGKILL) and the promoted
                  standby hangs in its first packet (-h 1): the manager's
                  heartbeat check must still kill it (an inherited `sleeping`
                  flag would hide it forever).
  hung_at_fifo    (review) the promoted NF hangs in its first packet while it
                  may still run at SCHED_FIFO on a CPU of its own (not the
                  manager's): within 0.5 s it must be back at SCHED_OTHER (the
                  kernel's RLIMIT_RTTIME cap, 20 ms of CPU without blocking,
                  or libnf leaving real-time priority at a wait before the
                  hang), not spinning at real-time priority until the RT
                  throttle; then the heartbeat check kills it.  A smoke test
                  of the whole path: the cap itself is unit-tested
                  (test_nf_rt), since here the promoted NF may leave
                  real-time priority before it hangs.
  recovery_refused (finding 11) the active damages its state block's sequence
                  numbers as it dies (-F committed:200 -C): the standby's state
                  recovery fails, and it refuses to promote -- no failover, the
                  reason in the log, the slot reclaimed, the pool back to idle.
  standby_wedged  (second review) a standby started by hand is stuck before
                  it parks (ONVM_NF_FAULT=test_nf:parking:8000) when its active is
                  killed: the slot is handed to a process that does not take
                  it.  Within start_timeout_ms (2 s) the manager must kill it
                  and take the ordinary death path -- the reason in the log, no
                  failover, the slot reclaimed, the pool back to idle -- not
                  leave the chain with nobody consuming its ring.
  slow_reap       (chaos run) reaping a dead NF (waitid) can take the kernel
                  a minute (release_task() invalidating the child's /proc
                  dentries, measured on Linux 6.18).  The manager's reaping is
                  made that slow (ONVM_MGR_FAULT=reap_delay:12000) and the
                  active of a loaded "local" NF is killed twice: each time the
                  slot must be protected again (a new standby registered and
                  parked) long before the reap ends -- registration and
                  hand-over must not wait behind it -- with no standby failure
                  and no refused registration; the dead processes are reaped
                  in the end.
"""
import os
import signal
import time

from onvm import lab, pcap, traces


def chain_cfg(path, out, nf_args, extra=None):
    cfg = {
        "nf_defaults": {"heartbeat_ms": 300},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "resiliency": "local", "args": nf_args}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }
    cfg.update(extra or {})
    return cfg


def pool_idle(node):
    """The pool at its idle level, and no mbuf in it twice (a double free
    shows as mbufs beyond the pool's size, which in_use cannot show)."""
    p = node.pool()
    lab.check(p["overcount"] == 0, f"{p['overcount']} mbufs freed twice: {p}")
    return p if p["in_use"] == p["idle_in_use"] else None


def slot_gone(node):
    return not node.nf_by(service=1)


def fini_death(L, path, frames):
    out = L.path("fini-out.pcap")
    node = L.node("fini-death", chain_cfg(path, out, ["-S", "-F", "fini:0"])).start()
    lab.wait_until(lambda: node.nf_by(service=1)[0]["rx"] == len(frames), 30,
                   "the trace through the NF")
    nf = node.nf_by(service=1)[0]
    active, standby = nf["pid"], nf["standby_pid"]
    L.expect(standby > 0 and nf["standby_parked"], f"no parked standby: {nf}")
    os.kill(active, signal.SIGTERM)
    lab.wait_until(lambda: slot_gone(node), 20, "the slot of the NF that stopped to be freed",
                   alive=node.assert_running)
    lab.wait_until(lambda: not lab.pid_alive(standby), 10, "its standby to exit")
    info = node.info()
    L.expect(info["nf_failovers"] == 0, f"a failover was counted: {info['nf_failovers']}")
    log = node.log()
    L.expect("died while it was stopping" in log,
             "the standby's log line does not say why it did not take over")
    L.expect("promoted to active" not in log, "the standby promoted into a stopping slot")
    lab.wait_until(lambda: pool_idle(node), 10, "pool back to its idle level")
    rc = node.stop()
    L.expect(rc == 0, f"fini_death: manager exit status {rc}")
    print(f"fini_death: active {active} died in nf_fini, standby {standby} exited, slot freed")


def promote_death(L, path, frames):
    out = L.path("promote-out.pcap")
    node = L.node("promote-death", chain_cfg(path, out, ["-S", "-F", "processed:200"]),
                  env={"ONVM_NF_FAULT": "test_nf:promoting:0"}).start()
    lab.wait_until(lambda: slot_gone(node), 30, "the slot to be reclaimed after both deaths",
                   alive=node.assert_running)
    p = lab.wait_until(lambda: pool_idle(node), 10, "pool back to its idle level")
    info = node.info()
    L.expect(info["nf_failovers"] == 0, f"failovers {info['nf_failovers']}")
    L.expect(info["nf_reclaimed_mbufs"] > 0, f"nothing reclaimed: {info}")
    rc = node.stop()
    L.expect(rc == 0, f"promote_death: manager exit status {rc}")
    print(f"promote_death: pool {p['in_use']} in use (idle {p['idle_in_use']}), "
          f"{info['nf_reclaimed_mbufs']} mbufs reclaimed")


def asleep_then_hung(L, path, frames):
    out = L.path("asleep-out.pcap")
    gate_bin, gate = L.gate_nf("gate", lab.nf_binary("simple_forward"))
    cfg = chain_cfg(path, out, ["-S", "-h", "1"])
    cfg["nfs"].append({"binary": gate_bin, "service": 9})
    cfg["nf_defaults"]["start_timeout_ms"] = 60000
    node = L.node("asleep-hung", cfg).start(wait=False)

    def protected():
        try:
            v = node.nf_by(service=1)
        except OSError:
            return None
        return v[0] if v and v[0]["status"] == "running" and v[0]["standby_parked"] else None

    nf = lab.wait_until(protected, 60, "the NF running with a parked standby",
                        alive=node.assert_running)
    time.sleep(0.5)  # idle: it sleeps on its futex
    active = nf["pid"]
    os.kill(active, signal.SIGSTOP)
    L.open_gate(gate)
    node.wait_ready()
    lab.wait_until(lambda: node.nf_by(service=1)[0]["rx_ring_count"] > 0, 30,
                   "packets queued for the stopped NF")
    os.kill(active, signal.SIGKILL)
    lab.wait_until(lambda: node.nf_by(service=1)[0]["failovers"] >= 1, 30, "the failover")
    lab.wait_until(lambda: node.info()["nf_hung"] >= 1, 15,
                   "the hung promoted NF to be killed by the heartbeat check")
    nf = node.nf_by(service=1)[0]
    L.expect(nf["hung_kills"] >= 1, f"slot hung_kills {nf['hung_kills']}")
    rc = node.stop()
    L.expect(rc == 0, f"asleep_then_hung: manager exit status {rc}")
    print(f"asleep_then_hung: promoted NF killed as hung ({nf['hung_kills']} hung kills)")


def reclaimed_without_failover(L, node, why, what):
    """The slot is reclaimed, `why` is in the manager's log, no failover is
    counted, the pool returns to idle and the node stops cleanly.  Returns
    the seconds the reclaim took."""
    t0 = time.monotonic()
    lab.wait_until(lambda: slot_gone(node), 30, "the slot to be reclaimed",
                   alive=node.assert_running)
    took = time.monotonic() - t0
    L.expect(why in node.log(), f"'{why}' is not in the manager's log")
    info = node.info()
    L.expect(info["nf_failovers"] == 0, f"failovers {info['nf_failovers']} (promoted anyway?)")
    lab.wait_until(lambda: pool_idle(node), 10, "pool back to its idle level")
    rc = node.stop()
    L.expect(rc == 0, f"{what}: manager exit status {rc}")
    return took


def recovery_refused(L, path, frames):
    out = L.path("refused-out.pcap")
    node = L.node("recovery-refused",
                  chain_cfg(path, out, ["-S", "-F", "committed:200", "-C"])).start()
    reclaimed_without_failover(L, node, "refuses to promote: state recovery failed",
                               "recovery_refused")
    print("recovery_refused: the standby refused, the slot was reclaimed")


def standby_wedged(L, path, frames):
    out = L.path("wedged-out.pcap")
    cfg = chain_cfg(path, out, ["-S"], {
        "nf_defaults": {"heartbeat_ms": 300, "start_timeout_ms": 2000}})
    cfg["nfs"][0]["resiliency"] = "none"  # the standby is started by hand, stalled
    node = L.node("standby-wedged", cfg).start()
    nf = node.nf_by(service=1)[0]
    lab.wait_until(lambda: node.nf_by(service=1)[0]["rx"] == len(frames), 30,
                   "the trace through the NF")
    sb = L.spawn("wedged-standby", [
        lab.TEST_NF, "--proc-type=secondary", f"--file-prefix={node.prefix}", "--lcores=51@0",
        "--no-pci", "--", "-r", "1", "-n", str(nf["instance"]), "--standby", "--", "-S"],
        env={"ONVM_NF_FAULT": "test_nf:parking:8000"})
    lab.wait_until(lambda: node.nf_by(service=1)[0]["standby_pid"] == sb.pid, 30,
                   "the standby registered", alive=node.assert_running)
    L.expect(not node.nf_by(service=1)[0]["standby_parked"],
             "the standby parked despite its stall")
    os.kill(nf["pid"], signal.SIGKILL)
    took = reclaimed_without_failover(
        L, node, "did not take over within 2000 ms of its active's death: killing it",
        "standby_wedged")
    try:
        sb.wait(10)
    except Exception:
        raise lab.TestFailure(f"the wedged standby {sb.pid} is still alive")
    L.expect(sb.returncode == -signal.SIGKILL, f"the wedged standby exited {sb.returncode}")
    print(f"standby_wedged: the standby that never took over was killed, slot reclaimed "
          f"{took:.1f} s after its active's death")


def sched_policy(pid):
    """The scheduling policy of a process's main thread (0 SCHED_OTHER, 1 FIFO)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[38])
    except (OSError, IndexError, ValueError):
        return None


def hung_at_fifo(L, path, frames):
    node = L.node("hung-fifo", {
        "node": {"lcores": "0@0"},
        "nf_defaults": {"cpus": "1", "heartbeat_ms": 1000},
        "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                  {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "resiliency": "local",
                 "args": ["-S", "-h", "1"]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "gen", "exit_port": "sink"}],
    }).start()
    lab.wait_until(lambda: node.port("sink")["tx"] > 1000, 30, "traffic at the sink")
    nf = node.nf_by(service=1)[0]
    os.kill(nf["pid"], signal.SIGKILL)
    v = lab.wait_until(lambda: (lambda m: m if m["failovers"] == 1 else None)(
        node.nf_by(service=1)[0]), 30, "the failover")
    promoted = v["pid"]
    # Well before the heartbeat check (1 s) could end it: the cap is 20 ms.
    seen, t0 = [], time.monotonic()
    while time.monotonic() - t0 < 0.5 and lab.pid_alive(promoted):
        seen.append(sched_policy(promoted))
        if seen[-1] == 0:
            break
        time.sleep(0.01)
    L.expect(seen and seen[-1] == 0, f"the hung promoted NF stayed at SCHED_FIFO for 0.5 s "
             f"(policies seen {sorted(set(seen))})")
    lab.wait_until(lambda: node.info()["nf_hung"] >= 1, 15, "the hung NF killed")
    rc = node.stop()
    L.expect(rc == 0, f"hung_at_fifo: manager exit status {rc}")
    print("hung_at_fifo: the kernel's RLIMIT_RTTIME cap dropped the hung NF to SCHED_OTHER")


def slow_reap(L, path, frames):
    delay_s = 12
    node = L.node("slow-reap", {
        "node": {"lcores": "0@0"},
        "nf_defaults": {"cpus": "1"},
        "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                  {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "resiliency": "local", "args": ["-S"]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "gen", "exit_port": "sink"}],
    }, env={"ONVM_MGR_FAULT": f"reap_delay:{delay_s * 1000}"}).start()
    lab.wait_until(lambda: node.port("sink")["tx"] > 1000, 30, "traffic at the sink")

    def protected():
        v = node.nf_by(service=1)[0]
        return v if v["status"] == "running" and v["standby_parked"] else None

    dead, took = [], []
    for k in (1, 2):
        nf = lab.wait_until(protected, 30, f"kill {k}: the NF protected")
        t0 = time.monotonic()
        os.kill(nf["pid"], signal.SIGKILL)
        dead.append(nf["pid"])
        lab.wait_until(lambda: (lambda v: v if v["failovers"] == k and v["pid"] != nf["pid"]
                                and v["standby_parked"] else None)(node.nf_by(service=1)[0]),
                       3 * delay_s, f"kill {k}: failover and a new standby parked",
                       alive=node.assert_running)
        took.append(time.monotonic() - t0)
    info = node.info()
    L.expect(max(took) < delay_s / 2, f"protected again {max(took):.1f} s after a kill: it "
             f"waited behind the {delay_s} s reap")
    L.expect(info["nf_standby_failures"] == 0, f"{info['nf_standby_failures']} standby failures")
    L.expect(info["nf_registrations_refused"] == 0,
             f"{info['nf_registrations_refused']} registrations refused")
    lab.wait_until(lambda: not any(os.path.exists(f"/proc/{p}") for p in dead),
                   3 * delay_s + 30, "the dead NFs reaped")
    L.expect(node.port("sink")["tx"] > 0, "no traffic")
    rc = node.stop()
    L.expect(rc == 0, f"slow_reap: manager exit status {rc}")
    print(f"slow_reap: protected again {took[0]:.2f} s and {took[1]:.2f} s after each kill "
          f"while each reap took {delay_s} s")


SCENARIOS = {"fini_death": fini_death, "promote_death": promote_death,
             "asleep_then_hung": asleep_then_hung, "recovery_refused": recovery_refused,
             "hung_at_fifo": hung_at_fifo, "standby_wedged": standby_wedged,
             "slow_reap": slow_reap}


def test(L):
    path = traces.trace("quic.pcap")
    frames = pcap.read_pcap(path)
    only = os.environ.get("ONVM_SCENARIO")
    for name, fn in SCENARIOS.items():
        if only and name != only:
            continue
        fn(L, path, frames)


if __name__ == "__main__":
    lab.Lab("failover_edges").run(test)
