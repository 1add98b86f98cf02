#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Stateless resiliency with a real redis-server (docs/design/stateless.md).

Scenarios (argument; none: all of them, in each of the four modes):

  modes   the stateful chain basic_monitor -> vlan_tagger -> load_balancer
          with "resiliency": "stateless", in each mode (sync, async, with
          and without the cache): 4 copies of ssh.pcap, each copy new flows
          (tagged frames, the remote tests' oracle).  Asserted: every frame
          out exactly once, in order, tagged and on one backend per flow;
          everything held at the exit released, nothing dropped; the
          store answered every update.  Then
          a second run of the node on the same store with no input: its
          fresh NFs load their state from the store (warm-up), and their
          exports equal the first run's input, per flow, exactly.
  kill    the same chain, its input paced (test_nf -d in a chain before
          it, on a loopback port, so the trace takes a while), in each mode:
          its three NFs SIGKILLed mid-trace, one after the other, at seeded
          random points, and a fresh NF of the second recovery killed before
          the chain runs again.  The chain recovers each time (its NFs
          restarted, their state loaded at the recovery point, the root's
          log replayed): every frame reaches the sink exactly once, in
          order, one backend per flow; the last NFs' per-flow counts equal
          the input's exactly.
  zombie  async with the cache, through a proxy (onvm.store.Proxy): what
          the chain's NFs send is held back for 500 ms just before one of
          them is SIGKILLed, so the dead incarnation's last updates reach
          the store after the recovery fenced it; then a second NF is
          killed and the chain recovers from what the store holds.  The
          same oracle; the late updates must be refused (fenced).  With
          ONVM_STORE_UNSAFE_NO_VERSION_CHECK (`zombie_unchecked`) they land,
          and the second recovery loads a wrong state: that run passes only
          if the oracle finds it (wrong per-flow counts or backends).
  restart the store (AOF, appendfsync always) SIGKILLed mid-stream and
          restarted 300 ms later: the NFs reconnect and send again what
          was unanswered; then an NF is killed and the chain recovers
          from the restarted store.  The same oracle; resets counted.
  restart_empty  the same with a store that keeps nothing (no AOF): it
          comes back empty, the NFs find their records gone and send their
          whole state again (re-seed), no recovery needed; then the NF
          killed recovers from the re-seeded store.
  garbage the proxy answers one command of each connection with replies
          WRITE never gives: counted, the connections reset, the updates
          sent again; then an NF killed.  The same oracle.
  skip    a middle NF of a stateless chain that sends its packets out of
          a port (test_nf -a out:0): they would leave before the store has
          their epoch, so the manager drops them, counted (`skipped`);
          nothing leaves.  Then an NF started by hand into the chain's
          service is refused.
  absent  the store is not running at start: the stateful chain's first
          NF says so and exits (the others are killed, some before they
          registered: the node starts all the same), the node's other
          chain still forwards every frame; the store started, the chain
          starts too (retried every second) and forwards its input.
  first_fail  the node run again on a store holding the chain's state (AOF),
          the store hung at its start (SIGSTOP) so that the NFs' warm-up
          times out and the chain's first start is retried: once the store
          answers, the NFs must load the state the first run committed (not
          the initial state), their exports equal to its input per flow.
  node_loss  the four-node lab of remote resiliency (python/onvm/remote_lab.py)
          with the stateful chain stateless behind the predecessor, in each
          mode: the primary node and a spare (its NFs started, held out of
          the store), the predecessor stamping and logging the input.  The
          primary node SIGKILLed mid-trace (manager and NFs), the
          predecessor fails the chain over: the spare's NFs load the newest
          epoch every NF closed, the predecessor's log is replayed to it,
          what the loaded state holds dropped.  The remote tests' oracle:
          nothing twice, in order, per flow the spare's after the primary's,
          one backend per flow, only the dead primary's tail lost -- and
          the spare's per-flow counts equal the whole input's.
  node_loss_faults  node_loss in async+cache with the spare's log smaller
          than the replay (the rest of the replay arrives after the log
          was sent on: what the loaded state holds must still be dropped),
          a spare NF killed before the failover (relaunched and held: the
          takeover must replay once, without what the state holds), the
          same with the failover offered while it is being relaunched (the
          spare answers once it is back), the primary only cut off
          (the predecessor fails over while it lives: it must stop for
          good, its NFs not relaunched), and the store SIGSTOPped until
          the primary's root log (1024 packets) is full, then the primary
          killed (`stall`: the frames its root dropped must be sent again
          by the predecessor, never trimmed), and the spare's log small
          and its NF rings 127 packets (`ring`: the replay still coming
          once the log is sent on -- what the first ring has no room for
          must wait in the log, not be lost).  ONVM_NLF_VARIANTS=a,b
          runs those only.
  small_ring  a one-NF chain whose NF rings hold 127 packets (rings.nf_size
          128), its NF killed: the chain recovers and runs (a replay waits
          for room in the first NF's ring, never for more than it has).
"""
import os
import random
import signal
import sys
import time

from onvm import exporter, lab, pcap, store, traces
from onvm import remote_lab as rc
from onvm.remote_lab import check_exports, check_stateful, stateful_nfs, tag_of, tagged_input

CHAIN = "sl"


def node_cfg(L, name, inp, out, st, nfs, pace_us=0):
    """The stateful chain as a stateless one on p0; `pace_us`: its input
    paced first by another chain (test_nf -d, on the node's p0) that hands it
    over on a loopback port (net_ring: what it sends comes back in)."""
    cfg = {
        "ports": [{"name": "p0", "dev": f"net_pcap0,rx_pcap={inp},tx_pcap={out}"}],
        "nfs": nfs,
        "chains": [{"name": CHAIN, "services": [1, 2, 3], "ingress_port": "p0",
                    "exit_port": "p0", "resiliency": "stateless", "store": st}],
    }
    if pace_us:
        cfg["ports"].append({"name": "loop", "dev": "net_ring0"})
        cfg["nfs"] = nfs + [{"name": "pace", "binary": lab.TEST_NF, "service": 4,
                             "args": ["-d", str(pace_us)]}]
        cfg["chains"][0]["ingress_port"] = "loop"
        cfg["chains"].append({"name": "pace", "services": [4], "ingress_port": "p0",
                              "exit_port": "loop"})
    return cfg


def exports(L, name):
    return (lab.read_json(L.path(f"{name}-mon.json")), lab.read_json(L.path(f"{name}-lb.json")))


def modes(L, mode, cache):
    tag = store.mode_name(mode, cache).replace("+", "_")
    r = store.Redis(L, f"redis-{tag}").start()
    frames = tagged_input(traces.trace("ssh.pcap"), 4, flows_per_copy=True)
    inp, out = L.path(f"{tag}-in.pcap"), L.path(f"{tag}-out.pcap")
    pcap.write_pcap(inp, frames)
    st = store.store_cfg(r.addr, mode, cache, flush_packets=16)
    nfs = stateful_nfs(L, tag, "")
    node = L.node(f"{tag}", node_cfg(L, tag, inp, out, st, nfs)).start()
    node.wait_port("p0", "tx", len(frames), timeout=120)
    d = node.query(f"/onvm/store,{CHAIN}")
    if (mode, cache) == ("async", True):
        # The Prometheus exporter shows the chain and its NFs' clients.
        port = exporter.free_port()
        exporter.start_exporter(L, [node.prefix], port, tag)
        m = exporter.metrics(port)
        got_rel = exporter.metric(m, "onvm_store_chain_released_packets_total", chain=CHAIN)
        got_acked = exporter.metric(m, "onvm_store_nf_updates_acked_total", chain=CHAIN,
                                    service="3")
        L.expect(got_rel == len(frames) and got_acked == d["nf2"]["updates_acked"],
                 f"{tag}: exporter says released {got_rel}, lb acked {got_acked}")
    rc = node.stop()
    L.expect(rc == 0, f"{tag}: manager exit status {rc}")
    print(f"{tag}: committed {d['committed']}, markers {d['markers_in']}, held "
          f"{d['held_total']}, released {d['released']}; nf0 sent {d['nf0']['updates_sent']} "
          f"acked {d['nf0']['updates_acked']} chunks {d['nf0']['chunks_sent']} "
          f"absorbed {d['nf0']['cache_absorbed']}")
    L.expect(d["held_total"] == d["released"] == len(frames) and d["exit_full"] == 0,
             f"{tag}: held {d['held_total']}, released {d['released']}, {len(frames)} frames")
    for k in range(3):
        nf = d[f"nf{k}"]
        L.expect(nf["updates_sent"] > 0 and nf["updates_acked"] == nf["updates_sent"] and
                 nf["bad_replies"] == 0 and nf["fenced"] == 0 and nf["lost"] == 0,
                 f"{tag}: nf{k}'s updates: {nf}")
        L.expect(nf["closed"] == d["committed"], f"{tag}: nf{k} closed {nf['closed']}, "
                 f"committed {d['committed']}")
    got = pcap.read_capture_out(out)
    _, backend = check_stateful(L, frames, got, [], allow_loss=0, tail=False)
    mon, lb = exports(L, tag)
    check_exports(L, frames, mon, lb, backend)

    # A new run of the node, nothing to forward: its NFs are fresh
    # processes; all they know is what the store gives them.
    empty = L.path(f"{tag}-empty.pcap")
    pcap.write_pcap(empty, [])
    for p in (L.path(f"{tag}-mon.json"), L.path(f"{tag}-lb.json")):
        os.unlink(p)
    node2 = L.node(f"{tag}-again", node_cfg(L, tag, empty, L.path(f"{tag}-out2.pcap"), st,
                                              nfs)).start()
    d2 = store.wait_store(node2, CHAIN, lambda d: d["started"], 30, "the chain warmed up")
    L.expect(node2.stop() == 0, f"{tag}: second run's exit status")
    for k in range(3):
        nf = d2[f"nf{k}"]
        L.expect(nf["recovered_epoch"] == d["committed"] and nf["gen"] == d[f"nf{k}"]["gen"] + 1,
                 f"{tag}: nf{k} warmed up at epoch {nf['recovered_epoch']} gen {nf['gen']}, "
                 f"the first run committed {d['committed']} at gen {d[f'nf{k}']['gen']}")
    L.expect(d2["nf0"]["loaded_chunks"] > 0 and d2["nf2"]["loaded_chunks"] > 0,
             f"{tag}: loaded {d2['nf0']['loaded_chunks']}, {d2['nf2']['loaded_chunks']} chunks")
    mon, lb = exports(L, tag)
    check_exports(L, frames, mon, lb, backend)
    r.kill()


def kill(L, mode, cache, seed):
    """Three NFs of the chain SIGKILLed mid-trace, one after the other (the
    first, the middle and the last), and during the second recovery a
    fresh NF killed again before the chain runs."""
    tag = "kill-" + store.mode_name(mode, cache).replace("+", "_")
    r = store.Redis(L, f"redis-{tag}").start()
    frames = tagged_input(traces.trace("ssh.pcap"), 6, flows_per_copy=True)
    inp, out = L.path(f"{tag}-in.pcap"), L.path(f"{tag}-out.pcap")
    pcap.write_pcap(inp, frames)
    st = store.store_cfg(r.addr, mode, cache, flush_packets=32)
    nfs = stateful_nfs(L, tag, "")
    node = L.node(tag, node_cfg(L, tag, inp, out, st, nfs, pace_us=150)).start()
    rng = random.Random(seed)
    points = sorted(rng.sample(range(150, len(frames) - 400), 3))
    print(f"{tag}, seed {seed}: kills after {points} packets out")
    for k, (at, victim) in enumerate(zip(points, ("mon", "vlan", "lb"))):
        store.wait_store(node, CHAIN, lambda d: d["phase"] == "running" and
                         d["released"] >= at, 60, f"{at} packets out")
        nf = node.nf_by(name=victim)
        lab.check(len(nf) == 1, f"{victim}: {nf}")
        old_mon = node.nf_by(name="mon")[0]["pid"]
        os.kill(nf[0]["pid"], signal.SIGKILL)  # an NF of our own manager (/onvm/nfs)
        if k == 1:
            # A fresh NF of the recovery killed too, before the chain runs.
            fresh = lab.wait_until(lambda: (lambda n: n[0]["pid"] if n and n[0]["pid"] not in
                                            (0, old_mon) else None)(node.nf_by(name="mon")),
                                   30, "the recovery's fresh monitor", interval=0.002)
            os.kill(fresh, signal.SIGKILL)  # ours too
        store.wait_store(node, CHAIN, lambda d: d["recoveries"] == k + 1 and
                         d["phase"] == "running", 60, f"recovery {k + 1}")
    # Everything that reached the root must leave, once (and what the
    # loopback port dropped, counted there, never reached it).
    try:
        lab.wait_until(lambda: (lambda d, lp: d["released"] == d["packets_in"] and
                                d["packets_in"] + lp["tx_drop"] == len(frames))(
                                    node.query(f"/onvm/store,{CHAIN}"), node.port("loop")),
                       120, "every frame that reached the chain's root out")
    except lab.TestFailure:
        print(f"{tag}: /onvm/store {node.query(f'/onvm/store,{CHAIN}')}, loop port "
              f"{node.port('loop')}", file=sys.stderr)
        raise
    d = node.query(f"/onvm/store,{CHAIN}")
    lost_before = node.port("loop")["tx_drop"]
    rc = node.stop()
    L.expect(rc == 0, f"{tag}: manager exit status {rc}")
    print(f"{tag}: recoveries {d['recoveries']} (+{d['start_retries']} restarts), replayed "
          f"{d['replayed']} in {d['replay_runs']} runs, dropped at recovery "
          f"{d['recovery_dropped']} + {d['stale_dropped']} stale, duplicates suppressed "
          f"{d['dup_suppressed']}; last: NFs gone {d.get('last_down_us')} us, loaded "
          f"{d.get('last_load_us')} us, replayed {d.get('last_replay_us')} us")
    L.expect(d["recoveries"] == 3 and d["log_full"] == 0 and d["exit_full"] == 0 and
             d["dup_suppressed"] == 0, f"{tag}: {d}")
    if d["start_retries"] == 0:
        print(f"{tag}: the fresh NF's kill came after the recovery had finished")
    # (the root keeps reading its port while the chain recovers, into its
    # log: nothing waits on the loopback ring)
    L.expect(lost_before == 0, f"{tag}: {lost_before} frames lost before the chain's root")
    L.expect(d["logged_held"] > 0, f"{tag}: no input came in while the chain recovered")
    got = pcap.read_capture_out(out)
    n_lost, backend = check_stateful(L, frames, got, [], allow_loss=lost_before, tail=False)
    L.expect(n_lost == lost_before, f"{tag}: {n_lost} frames missing, {lost_before} lost before "
             "the root")
    seen = {tag_of(f) for f in got}
    mon, lb = exports(L, tag)
    check_exports(L, [f for f in frames if tag_of(f) in seen], mon, lb, backend)
    r.kill()


def faults(L, kind, seed, unchecked=False):
    """The kill scenario's chain (async, cache), with a fault of the path to
    the store before the last kill (see the module's docstring)."""
    tag = kind + ("_unchecked" if unchecked else "")
    r = store.Redis(L, f"redis-{tag}", persist=kind == "restart").start()
    proxy = store.Proxy(L, r.sock, f"proxy-{tag}") if kind in ("zombie", "garbage") else None
    frames = tagged_input(traces.trace("ssh.pcap"), 4, flows_per_copy=True)
    inp, out = L.path(f"{tag}-in.pcap"), L.path(f"{tag}-out.pcap")
    pcap.write_pcap(inp, frames)
    st = store.store_cfg(proxy.addr if proxy else r.addr, "async", True, flush_packets=32,
                         timeout_ms=200)
    env = {"ONVM_STORE_UNSAFE_NO_VERSION_CHECK": "1"} if unchecked else None
    node = L.node(tag, node_cfg(L, tag, inp, out, st, stateful_nfs(L, tag, ""), pace_us=300),
                  env=env).start()
    rng = random.Random(seed)
    p1, p2 = sorted(rng.sample(range(150, len(frames) - 300), 2))
    p2 = max(p2, p1 + 100)
    print(f"{tag}, seed {seed}: fault after {p1} packets out, a kill after {p2}")

    def out_at_least(n, what):
        return store.wait_store(node, CHAIN, lambda d: d["phase"] == "running" and
                                d["released"] >= n, 60, what)

    def kill_nf(name, k):
        nf = node.nf_by(name=name)
        lab.check(len(nf) == 1, f"{name}: {nf}")
        os.kill(nf[0]["pid"], signal.SIGKILL)  # an NF of our own manager (/onvm/nfs)
        return store.wait_store(node, CHAIN, lambda d: d["recoveries"] == k and
                                d["phase"] == "running", 60, f"recovery {k}")

    out_at_least(p1, f"{p1} packets out")
    kills = 0
    if kind == "zombie":
        proxy.hold(500)
        time.sleep(0.02)  # some updates held
        kills += 1
        kill_nf("vlan", kills)
        time.sleep(0.6)   # the held updates reach the store, after the fence
        L.expect(proxy.held_total > 0, f"{tag}: nothing was held back")
    elif kind in ("restart", "restart_empty"):
        r.kill()
        time.sleep(0.3)
        r.start()
    elif kind == "garbage":
        proxy.garbage()
    out_at_least(p2, f"{p2} packets out")
    # (the NFs' counters are their processes': read before the kill)
    nfs = [node.query(f"/onvm/store,{CHAIN}")[f"nf{k}"] for k in range(3)]
    kills += 1
    kill_nf("lb", kills)
    node.wait_port("p0", "tx", len(frames), timeout=120)
    d = node.query(f"/onvm/store,{CHAIN}")
    rc = node.stop()
    L.expect(rc == 0, f"{tag}: manager exit status {rc}")
    total = {f: sum(n[f] for n in nfs) for f in ("resets", "bad_replies", "updates_retried",
                                                   "versions_refused", "fenced", "lost")}
    print(f"{tag}: recoveries {d['recoveries']}, replayed {d['replayed']}, dropped at "
          f"recovery {d['recovery_dropped']}, duplicates suppressed {d['dup_suppressed']}; "
          f"the NFs before the last kill: {total}")
    L.expect(d["log_full"] == 0 and d["exit_full"] == 0 and d["dup_suppressed"] == 0,
             f"{tag}: {d}")
    if kind in ("restart", "restart_empty"):
        L.expect(d["recoveries"] == 1, f"{tag}: the store's restart cost a recovery: {d}")
        L.expect(total["resets"] >= 3, f"{tag}: {total['resets']} connections reset")
    if kind == "restart_empty":
        L.expect(total["lost"] >= 3, f"{tag}: the NFs did not find their records lost")
    if kind == "garbage":
        L.expect(proxy.garbage_sent > 0, f"{tag}: no garbage was sent")
    before = len(L.failures)
    got = pcap.read_capture_out(out)
    _, backend = check_stateful(L, frames, got, [], allow_loss=0, tail=False)
    mon, lb = exports(L, tag)
    check_exports(L, frames, mon, lb, backend)
    if unchecked:
        # The mutation: the oracle must have caught the wrong state (and
        # nothing else may have failed before it).
        found = L.failures[before:]
        wrong_state = [f for f in found if "per-flow packets" in f or "backend" in f]
        del L.failures[before:]
        L.expect(wrong_state, f"{tag}: without the version check the dead incarnation's late "
                 "updates changed nothing: the check is not what keeps them out")
        if wrong_state:
            print(f"{tag}: as it must, the oracle found {len(found)} mismatches, e.g. "
                  f"{wrong_state[0][:160]}")
    if proxy:
        proxy.close()
    r.kill()
    return total


def skip(L):
    r = store.Redis(L, "redis-skip").start()
    frames = tagged_input(traces.trace("ssh.pcap"), 1)
    inp, out = L.path("skip-in.pcap"), L.path("skip-out.pcap")
    pcap.write_pcap(inp, frames)
    nfs = [{"name": "mon", "binary": "basic_monitor", "service": 1, "args": ["-p", "0"]},
           {"name": "out", "binary": lab.TEST_NF, "service": 2, "args": ["-a", "out:0"]},
           {"name": "fwd", "binary": "simple_forward", "service": 3}]
    node = L.node("skip", node_cfg(L, "skip", inp, out, store.store_cfg(r.addr), nfs)).start()
    d = store.wait_store(node, CHAIN, lambda d: d["skipped"] >= len(frames), 60,
                         "the middle NF's output dropped")
    L.expect(d["skipped"] == len(frames) and d["released"] == 0,
             f"skipped {d['skipped']}, released {d['released']}, {len(frames)} frames")
    # An NF started by hand into the chain's service: refused (a recovery
    # could neither kill nor relaunch it).
    nf = L.spawn("hand", [lab.nf_binary("simple_forward"), "--proc-type=secondary",
                          f"--file-prefix={node.prefix}", "--lcores=61@0", "--no-pci", "--",
                          "-r", "1"])
    L.expect(nf.wait(60) != 0, "an NF started by hand registered into a stateless chain")
    L.expect("is stateless chain 'sl''s" in node.log(), "no refusal in the manager's log")
    L.expect(len(node.nf_by(service=1)) == 1, f"service 1: {node.nf_by(service=1)}")
    L.expect(node.stop() == 0, "manager exit status")
    L.expect(pcap.read_capture_out(out) == [], "a frame left the chain past its exit")
    r.kill()


def absent(L):
    """No store: the stateless chain cannot start, the other chain runs."""
    frames = tagged_input(traces.trace("ssh.pcap"), 1)
    inp, out = L.path("absent-in.pcap"), L.path("absent-out.pcap")
    other_in, other_out = L.path("absent-in1.pcap"), L.path("absent-out1.pcap")
    pcap.write_pcap(inp, frames)
    pcap.write_pcap(other_in, frames)
    st = store.store_cfg("unix:" + L.path("no-such.sock"), timeout_ms=200)
    # (three NFs: the first one's exit has the chain kill the others, some
    # of them before they registered -- not a failure of the node's start)
    cfg = {
        "ports": [{"name": "p0", "dev": f"net_pcap0,rx_pcap={inp},tx_pcap={out}"},
                  {"name": "p1", "dev": f"net_pcap1,rx_pcap={other_in},tx_pcap={other_out}"}],
        "nfs": stateful_nfs(L, "absent", "") + [{"binary": "simple_forward", "service": 4}],
        "chains": [{"name": CHAIN, "services": [1, 2, 3], "ingress_port": "p0",
                    "exit_port": "p0", "resiliency": "stateless", "store": st},
                   {"name": "other", "services": [4], "ingress_port": "p1", "exit_port": "p1"}],
    }
    node = L.node("absent", cfg).start()
    node.wait_port("p1", "tx", len(frames))
    store.wait_store(node, CHAIN, lambda d: d["start_retries"] >= 2, 30,
                     "the chain's start retried")
    L.expect("cannot reach the store of chain 'sl'" in node.log(), "no clear error about the store")
    L.expect(node.port("p0")["tx"] == 0, "the stateless chain forwarded without its store")
    # The store comes up: the chain starts and forwards what waited.
    r = store.Redis(L, "redis-absent")
    r.sock = L.path("no-such.sock")
    r.start()
    node.wait_port("p0", "tx", len(frames), timeout=60)
    L.expect(node.stop() == 0, "manager exit status")
    L.expect(len(pcap.read_capture_out(other_out)) == len(frames), "the other chain lost frames")
    L.expect(len(pcap.read_capture_out(out)) == len(frames), "the stateless chain lost frames")
    r.kill()


def first_fail(L):
    """A node's first start retried: the state it loads is still the store's."""
    tag = "ff"
    r = store.Redis(L, "redis-ff", persist=True).start()
    frames = tagged_input(traces.trace("ssh.pcap"), 2, flows_per_copy=True)
    inp, out = L.path(f"{tag}-in.pcap"), L.path(f"{tag}-out.pcap")
    pcap.write_pcap(inp, frames)
    st = store.store_cfg(r.addr, "async", True, flush_packets=16, timeout_ms=200)
    nfs = stateful_nfs(L, tag, "")
    node = L.node(tag, node_cfg(L, tag, inp, out, st, nfs)).start()
    node.wait_port("p0", "tx", len(frames), timeout=120)
    d = node.query(f"/onvm/store,{CHAIN}")
    L.expect(node.stop() == 0, f"{tag}: manager exit status (run 1)")
    _, backend = check_stateful(L, frames, pcap.read_capture_out(out), [], allow_loss=0,
                                tail=False)
    L.expect(d["committed"] > 0, f"{tag}: run 1 committed nothing: {d}")
    # The store hangs (it accepts, never answers): the NFs register, their
    # warm-up times out, and they exit; the chain's start is retried.
    r.stop(signal.SIGSTOP)
    for p in (L.path(f"{tag}-mon.json"), L.path(f"{tag}-lb.json")):
        os.unlink(p)
    empty = L.path(f"{tag}-empty.pcap")
    pcap.write_pcap(empty, [])
    node2 = L.node(f"{tag}-again", node_cfg(L, tag, empty, L.path(f"{tag}-out2.pcap"),
                                             dict(st, timeout_ms=3000), nfs)).start()
    try:
        store.wait_store(node2, CHAIN, lambda d: d["start_retries"] >= 1, 30,
                         "the chain's first start retried")
    finally:
        r.stop(signal.SIGCONT)
    d2 = store.wait_store(node2, CHAIN, lambda d: d["started"], 30, "the chain started")
    L.expect(node2.stop() == 0, f"{tag}: manager exit status (run 2)")
    for k in range(3):
        nf = d2[f"nf{k}"]
        L.expect(nf["recovered_epoch"] == d["committed"] and nf["loaded_chunks"] > 0,
                 f"{tag}: nf{k} loaded epoch {nf['recovered_epoch']} ({nf['loaded_chunks']} "
                 f"chunks), run 1 committed {d['committed']}")
    mon, lb = exports(L, tag)
    check_exports(L, frames, mon, lb, backend)
    r.kill()


def small_ring(L):
    """NF rings smaller than a replay's burst: a recovery still ends."""
    r = store.Redis(L, "redis-ring").start()
    frames = tagged_input(traces.trace("ssh.pcap"), 1)
    inp, out = L.path("ring-in.pcap"), L.path("ring-out.pcap")
    pcap.write_pcap(inp, frames)
    cfg = {"ports": [{"name": "p0", "dev": f"net_pcap0,rx_pcap={inp},tx_pcap={out}"}],
           "rings": {"nf_size": 128},
           "nfs": [{"name": "mon", "binary": "basic_monitor", "service": 1, "args": ["-p", "0"]}],
           "chains": [{"name": CHAIN, "services": [1], "ingress_port": "p0", "exit_port": "p0",
                       "resiliency": "stateless", "store": store.store_cfg(r.addr)}]}
    node = L.node("ring", cfg).start()
    node.wait_port("p0", "tx", len(frames), timeout=60)
    store.wait_store(node, CHAIN, lambda d: d["phase"] == "running", 10, "running")
    os.kill(node.nf_by(name="mon")[0]["pid"], signal.SIGKILL)  # our manager's NF
    store.wait_store(node, CHAIN, lambda d: d["recoveries"] == 1 and d["phase"] == "running",
                     30, "the chain recovered")
    L.expect(node.stop() == 0, "manager exit status")
    L.expect(len(pcap.read_capture_out(out)) == len(frames), "frames lost")
    r.kill()


def node_loss(L, mode, cache, seed, variant=None):
    """The primary node lost; the spare takes the chain over from the store
    and the predecessor's log.  `variant`: "small" (the spare's log holds
    64 packets, less than the replay: it fills, is sent on, and the rest of
    the replay comes after), "ring" (the same with a 256-packet log and
    127-packet NF rings: input must wait for the first ring in the log),
    "restart" (a spare NF killed before the
    failover: relaunched, held again), "restart_now" (the same, the failover
    offered while it is being relaunched: the spare takes over once it is
    back), "cutoff" (the primary lives on, the predecessor fails over all the
    same: it must stop for good), "stall" (the store stopped until the
    primary's small root log is full: what it dropped must come again)."""
    tag = (f"nlf-{variant}" if variant else
           "nl-" + store.mode_name(mode, cache).replace("+", "_"))
    rnd = random.Random(seed)
    r = store.Redis(L, f"redis-{tag}").start()
    # (the variants wait for a spare NF's relaunch first, which a loaded
    # machine makes slow: an input long enough to be still coming then)
    frames = tagged_input(traces.trace("ssh.pcap"), 96 if variant else 24, flows_per_copy=True)
    n = len(frames)
    # (the root's log holds over half the input: a store CPU-starved for a
    # second on a loaded machine does not fill it -- asserted below, so that
    # the variants test what they name; `stall` fills a small one on purpose)
    st = store.store_cfg(r.addr, mode, cache, flush_packets=32,
                         log_packets=1024 if variant == "stall" else 16384)
    spare_st = (dict(st, log_packets=64) if variant == "small" else
                dict(st, log_packets=256) if variant == "ring" else None)
    sink, spare, primary, pred = rc.build(L, frames, tag, stateful=True, store=st,
                                          spare_store=spare_st)
    if variant == "ring":
        spare.config["rings"] = {"nf_size": 128}
        spare.save_config()
    rc.start_all(sink, spare, primary, pred)
    q = lambda node: node.query("/onvm/store,c")
    if variant == "restart":
        old = spare.nf_by(name="vlan")[0]["pid"]
        os.kill(old, signal.SIGKILL)  # an NF of our own spare node
        # the spare's NFs relaunched, held again (the chain "starting")
        lab.wait_until(lambda: (lambda d: d["phase"] == "starting" and all(
            f"nf{k}" in d for k in range(3)))(q(spare)), 60, f"{tag}: the spare's NFs back")
    share = rnd.uniform(0.2, 0.7)
    lab.wait_until(lambda: q(primary)["released"] >= n * share, 120,
                   f"{share:.2f} of the input released")
    time.sleep(rnd.uniform(0, 0.02))
    before = q(primary)
    lab.check(before["released"] < n, f"{tag}: the whole input was out before the failure "
              f"(lengthen it): {before['released']} of {n}")
    if variant == "stall":
        # the store stops answering: the primary's exit cannot release,
        # its root's log fills and drops stamped input at the entry, which
        # the next LOG_TRIM would have the predecessor trim for good -- the
        # primary must take nothing after it until the predecessor sends
        # it again, once the store is back
        r.proc.send_signal(signal.SIGSTOP)  # our redis-server
        try:
            lab.wait_until(lambda: q(primary)["log_full"] > 0, 20, f"{tag}: the primary's "
                           "log full")
        finally:
            r.proc.send_signal(signal.SIGCONT)
        lab.wait_until(lambda: q(primary)["released"] >= n * 0.8, 60,
                       f"{tag}: the primary caught up")
        before = q(primary)
        pl = pred.query("/onvm/remote")["web"]
        L.expect(before["peer_lacks"] > 0 and pl["primary_resends"] > 0,
                 f"{tag}: no frame asked again: primary {before}, predecessor {pl}")
    else:
        L.expect(before["log_full"] == 0 and before["log_copy_fail"] == 0,
                 f"{tag}: the primary dropped input at its root: {before}")
    L.expect(before["peer_trims"] > 0 and q(spare)["peer_state"] == "spare",
             f"{tag}: no LOG_TRIM sent, or the spare not waiting: {before}")
    if variant == "restart_now":
        # a spare NF dies just before the failover: relaunched while the
        # predecessor offers the takeover (it must wait, not refuse)
        os.kill(spare.nf_by(name="lb")[0]["pid"], signal.SIGKILL)  # our spare's NF
        # (relaunched, not registered yet: no NF of the chain there)
        lab.wait_until(lambda: q(spare)["phase"] == "starting", 30, f"{tag}: the spare's NFs "
                       "relaunched", interval=0.002)
    if variant != "cutoff":
        primary.stop(sig=signal.SIGKILL)  # the node: its manager, its NFs die with it
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"{tag}: failover: {rep}")
    rem = lambda: pred.query("/onvm/remote")["web"]
    try:
        lab.wait_until(lambda: rem()["state"] == "standby" and rem()["stamped"] == n, 120,
                       f"{tag}: the replay and the input done")
    except lab.TestFailure:
        print(f"{tag}: predecessor {rem()}\nspare {q(spare)}", file=sys.stderr)
        raise
    lab.wait_until(lambda: q(spare)["peer_state"] == "active", 60, f"{tag}: replay ended")
    last = [-1]

    def quiet():
        d = q(spare)
        done = d["released"] == last[0] and sink.port("in_s")["rx"] >= d["released"]
        last[0] = d["released"]
        return done
    lab.wait_until(quiet, 60, f"{tag}: the spare's output drained", interval=0.3)
    d, p = q(spare), rem()
    if variant == "cutoff":
        # The old primary heard the predecessor's newer epoch: its NFs
        # stopped, never relaunched (they would fence the spare).
        dm = lab.wait_until(lambda: (lambda d: d if d["peer_state"] == "fenced" and
                                     not primary.nf_by() else None)(q(primary)), 30,
                            f"{tag}: the old primary stopped")
        time.sleep(0.5)
        L.expect(q(primary)["recoveries"] == dm["recoveries"] and not primary.nf_by(),
                 f"{tag}: the old primary relaunched its NFs: {q(primary)}")
        L.expect(all(d[f"nf{k}"]["fenced"] == 0 and d[f"nf{k}"]["lost"] == 0 for k in range(3)),
                 f"{tag}: the spare's NFs were fenced or lost state: {d}")
        L.expect(primary.stop() == 0, f"{tag}: the old primary's exit status")
    L.expect(spare.stop() == 0, f"{tag}: spare's exit status")
    for node in (pred, sink):
        node.stop()
    print(f"{tag}: killed at {share:.2f} (primary released {before['released']}, trimmed to "
          f"ts {before['peer_trimmed_ts']}); pred replayed {p['replayed']} from ts "
          f"{p['replay_from_ts']}; spare loaded epoch {d['nf0']['recovered_epoch']} (ts "
          f"{d['nf0']['recovered_ts']}), admitted {d['peer_admitted']}, covered "
          f"{d['peer_covered']}, gaps {d['peer_gap_drops']}, room {d['peer_room_drops']}, "
          f"released {d['released']}, dup {d['dup_suppressed']}, replay {d.get('peer_replay_us')} us")
    if variant == "ring":
        L.expect(d["ring_waits"] > 0, f"{tag}: the input never waited for the first ring: {d}")
    L.expect(d["peer_takeovers"] == 1 and d["dup_suppressed"] == 0 and d["log_full"] == 0 and
             d["log_copy_fail"] == 0 and d["exit_full"] == 0 and
             d["peer_before_takeover"] == 0,
             f"{tag}: spare: {d}")
    # (what the replay held of the loaded state, `peer_covered`, may be
    # none: the predecessor's log trimmed right up to the recovery point)
    L.expect(d["nf0"]["recovered_epoch"] > 0 and d["nf0"]["recovered_ts"] > 0,
             f"{tag}: the spare loaded nothing of the primary's: {d}")
    got_m = pcap.read_capture_out(L.path(f"sink-m{tag}.pcap"))
    got_s = pcap.read_capture_out(L.path(f"sink-s{tag}.pcap"))
    lost, backend = check_stateful(L, frames, got_m, got_s, allow_loss=n)
    print(f"{tag}: sink: {len(got_m)} from the primary, {len(got_s)} from the spare, {lost} "
          f"lost (the dead primary's tail)")
    L.expect(len(got_s) > 0, f"{tag}: nothing from the spare")
    mon, lb = exports(L, f"standby{tag}")
    check_exports(L, frames, mon, lb, backend)
    r.kill()


def test(L, which):
    if which in (None, "modes"):
        for mode, cache in store.MODES:
            modes(L, mode, cache)
    if which in (None, "kill"):
        seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
        for mode, cache in store.MODES:
            kill(L, mode, cache, seed)
    for kind in ("zombie", "restart", "restart_empty", "garbage"):
        if which in (None, kind, kind + "_unchecked"):
            seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
            faults(L, kind, seed, unchecked=which == kind + "_unchecked")
    if which in (None, "skip"):
        skip(L)
    if which in (None, "absent"):
        absent(L)
    if which in (None, "first_fail"):
        first_fail(L)
    if which in (None, "small_ring"):
        small_ring(L)
    if which in (None, "node_loss"):
        seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
        print(f"node_loss: seed {seed}")
        for mode, cache in store.MODES:
            node_loss(L, mode, cache, seed)
    if which in (None, "node_loss_faults"):
        seed = int(os.environ.get("ONVM_TEST_SEED", random.randrange(1 << 32)))
        print(f"node_loss_faults: seed {seed}")
        # (ONVM_NLF_VARIANTS=stall,cutoff: those only)
        for variant in os.environ.get("ONVM_NLF_VARIANTS",
                                      "small,ring,restart,restart_now,cutoff,stall").split(","):
            node_loss(L, "async", True, seed, variant)


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else None
    lab.Lab("stateless" + (f"_{which}" if which else "")).run(lambda L: test(L, which))
