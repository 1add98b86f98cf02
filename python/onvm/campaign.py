# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.campaign -- a randomized fault campaign over the four-node lab of
remote resiliency (onvm.remote_lab), the way Jepsen tests databases: many
short episodes, each a fresh lab with a seeded random schedule of faults
injected while a paced input streams through the protected chain, and an
oracle after each.  bench/campaign.py runs it for a thousand faults and
more; tests/integration/test_campaign.py runs a short one.

An episode (run_episode), from plan(seed, episode) alone -- so that
`bench/campaign.py --seed S --episode E` replays its decisions (not its
timing):

  - the lab: the stateful chain basic_monitor -> vlan_tagger ->
    load_balancer, or its ND-heavy variant (nondet -m count:1 in the
    middle), alternating by episode; with or without local resiliency
    (every NF with a hot standby), with or without BFD on the
    predecessor's link to the primary; the sync link always through
    faulty_link.py, faultless until a fault says otherwise; the input a
    tagged trace (each frame numbered in its source MAC) sent at a fixed
    rate by paced_source.py into the predecessor's input port, so that it
    goes on while the predecessor restarts;
  - 10 to 20 faults, one after another, each after a random gap, each healed and
    its recovery awaited before the next (so that what it cost can be
    told apart): the kinds in KINDS.  Then, usually, one fault that fails
    the chain over (FAILOVER_KINDS), sometimes with an operator's
    failover racing its trigger and the standby's link or the sync link
    stalled during the replay.  A failover ends the chain's protection
    (nothing re-protects it yet), so it ends the episode's faults: the
    input goes on a second through the promoted node, stops, and the lab
    drains.
  - the oracle (check_episode): nothing released twice, every capture in
    input order, every output its input frame transformed by the chain,
    per flow the standby's frames after the primary's and one backend;
    every lost frame explained -- sent while the predecessor was down, in
    the failover's tail (after the primary's last release, per flow
    between the primary's frames and the standby's, at most the stages in
    flight and two bursts: the loss per failover, recorded), or covered by
    what the nodes counted as dropped (aborted stages, the latch's
    overflow, ingress gaps, NF drops) around the time it was sent; the
    NFs that ran on to the end (the promoted standby's, or the primary's
    when nothing failed over) counted no packet twice, every delivered one
    at least once, and exactly the input when nothing was lost on the way
    in; nondet drew once per packet; no node crashed, leaked mbufs or
    exited with an error; a fenced or restarted primary released nothing.

A violation is kept with the seed, the episode and its schedule (and the
nodes' logs, `keep`), the way a Jepsen history is.  Timing belongs to the
machine: a replay repeats the schedule, not necessarily the interleaving.
"""
import json
import os
import random
import re
import shutil
import signal
import struct
import time

from onvm import lab, pcap, report, traces
from onvm import remote_lab as rc

RATE = 5000          # input frames per second (the lab's paced links carry ~12 k)
POLL_S = 0.1         # the nodes' counters, polled this often
FLOW_SETS = 512      # the input's flows: this many copies of the trace's 2 (tables hold 4096)
TAIL_BOUND = rc.STAGES * rc.STAGE_PACKETS + 2 * 32  # a dead primary's tail (test_remote_chain)
SLACK_BEFORE, SLACK_AFTER = 1.0, 3.0  # a counted drop explains frames sent this near it
RECOVER_S = 30       # a fault's recovery awaited at most this long (then: liveness finding)
# BFD's interval on the predecessor's link (x 3): the lab's 10 ms (30 ms to
# detect) Downs falsely on two shared cores while a node restarts next to it
BFD_MS = 50
NODE_START_S = 120
HUGEPAGES_WAIT_S = 30  # for a killed run's hugepages to be free before its restart

# The faults that leave the primary in charge.  `weight` for the schedule;
# `when`: a condition on the episode's set-up.
KINDS = {
    "standby_kill":      {"weight": 3, "node": "standby"},   # SIGKILL, restarted: rejoins by a full cut
    "pred_restart":      {"weight": 2, "node": "pred"},      # SIGKILL, restarted: its log lost
    "nf_kill_primary":   {"weight": 3, "node": "primary", "when": "local"},  # a local failover
    "nf_kill_standby":   {"weight": 2, "node": "standby"},   # local failover, or the copy lost
    "sync_loss":         {"weight": 2, "node": "sync"},      # faulty_link: drop p
    "sync_dup":          {"weight": 1, "node": "sync"},
    "sync_reorder":      {"weight": 1, "node": "sync"},
    "sync_delay":        {"weight": 2, "node": "sync"},
    "sync_blackout":     {"weight": 2, "node": "sync"},      # drop everything for a while
    "sync_hold":         {"weight": 2, "node": "sync"},      # a stalled wire that loses nothing
    "sync_link_flap":    {"weight": 2, "node": "sync"},      # m_s or s_m down, then up
    "standby_link_flap": {"weight": 1, "node": "standby"},   # p_s or s_p down, then up
    "pause_standby":     {"weight": 1, "node": "standby"},   # SIGSTOP .. SIGCONT
    "pause_primary":     {"weight": 1, "node": "primary", "when": "no_bfd"},
    "pause_pred":        {"weight": 1, "node": "pred", "when": "no_bfd"},
}
# The faults that fail the chain over (one, last).
FAILOVER_KINDS = {
    "primary_kill":      {"weight": 4},  # SIGKILL; the operator fails over (or BFD does)
    "primary_restart":   {"weight": 2},  # SIGKILL and start again: trigger primary_restart
    "link_down_primary": {"weight": 3},  # p_m or m_p down: the link watch (false suspicion)
    "operator_failover": {"weight": 2},  # a switch-over of a healthy primary
    "pause_primary_bfd": {"weight": 1, "when": "bfd"},      # SIGSTOP past BFD's detection
    "nf_kill_primary_nolocal": {"weight": 2, "when": "no_local"},  # the chain broken: operator
}
# Injected along with a failover: an operator's request racing the trigger,
# the standby's link or the sync link stalled during the replay.
RACE_KINDS = ("operator_race", "replay_stall_link", "replay_stall_sync")
ALL_KINDS = list(KINDS) + list(FAILOVER_KINDS) + list(RACE_KINDS)


# ---- the plan: everything decided by (seed, episode) ---------------------------------

def _allowed(when, p):
    return (when is None or (when == "local" and p["local"]) or
            (when == "no_local" and not p["local"]) or (when == "bfd" and p["bfd"]) or
            (when == "no_bfd" and not p["bfd"]))


def _pick(rnd, table, p):
    names = [k for k, v in table.items() if _allowed(v.get("when"), p)]
    return rnd.choices(names, [table[k]["weight"] for k in names])[0]


def fault_params(rnd, kind, p):
    """The random parameters of one fault (milliseconds unless named)."""
    u = lambda a, b: round(rnd.uniform(a, b))
    if kind in ("standby_kill", "pred_restart"):
        return {"down_ms": u(0, 800)}
    if kind in ("nf_kill_primary", "nf_kill_standby", "nf_kill_primary_nolocal"):
        return {"nf": rnd.randrange(3)}
    if kind == "sync_loss":
        return {"drop": round(rnd.choice([rnd.uniform(0.001, 0.02), rnd.uniform(0.02, 0.3)]), 4),
                "dur_ms": u(200, 2000)}
    if kind == "sync_dup":
        return {"dup": round(rnd.uniform(0.01, 0.3), 3), "dur_ms": u(200, 2000)}
    if kind == "sync_reorder":
        return {"reorder": round(rnd.uniform(0.01, 0.3), 3), "dur_ms": u(200, 2000)}
    if kind == "sync_delay":
        return {"delay": round(rnd.uniform(0.05, 0.6), 3), "delay_us": u(200, 30000),
                "dur_ms": u(200, 2000)}
    if kind == "sync_blackout":
        return {"dur_ms": u(20, 600)}
    if kind == "sync_hold":
        return {"dur_ms": u(10, 400)}
    if kind == "sync_link_flap":
        return {"end": rnd.choice(["primary", "standby"]), "dur_ms": u(5, 600)}
    if kind == "standby_link_flap":
        return {"end": rnd.choice(["pred", "standby"]), "dur_ms": u(5, 600)}
    if kind in ("pause_standby", "pause_primary", "pause_pred"):
        return {"dur_ms": u(5, 250)}
    if kind == "primary_kill":
        # with BFD, half the time no operator: BFD alone fails over
        return {"operator_ms": None if p["bfd"] and rnd.random() < 0.5 else u(0, 150)}
    if kind == "primary_restart":
        return {}
    if kind == "link_down_primary":
        return {"end": rnd.choice(["pred", "primary"]), "up_after_ms": u(0, 500)}
    if kind == "operator_failover":
        return {}
    if kind == "pause_primary_bfd":  # past BFD's detection time (3 x BFD_MS)
        return {"dur_ms": u(3 * BFD_MS + 50, 3 * BFD_MS + 500)}
    if kind == "operator_race":
        return {"at_ms": round(rnd.uniform(-2, 30), 1)}
    if kind == "replay_stall_link":
        return {"end": rnd.choice(["pred", "standby"]), "at_ms": u(0, 30), "dur_ms": u(5, 400)}
    if kind == "replay_stall_sync":
        return {"at_ms": u(0, 30), "dur_ms": u(10, 400)}
    raise ValueError(kind)


def plan(seed, episode):
    """The episode's set-up and fault schedule: a function of (seed,
    episode) only."""
    rnd = random.Random(f"onvm-campaign/{seed}/{episode}")
    p = {"seed": seed, "episode": episode,
         "chain": ("stateful", "nd")[(seed + episode) % 2],
         "local": rnd.random() < 0.7, "bfd": rnd.random() < 0.5}
    faults = []
    for _ in range(rnd.randint(10, 20)):
        kind = _pick(rnd, KINDS, p)
        faults.append({"kind": kind, "gap_ms": round(rnd.uniform(300, 1500)),
                       "params": fault_params(rnd, kind, p)})
    if rnd.random() < 0.9:
        kind = _pick(rnd, FAILOVER_KINDS, p)
        f = {"kind": kind, "gap_ms": round(rnd.uniform(300, 1500)),
             "params": fault_params(rnd, kind, p), "races": []}
        for race in RACE_KINDS:
            if race == "operator_race" and kind == "operator_failover":
                continue
            if rnd.random() < 0.3:
                f["races"].append({"kind": race, "params": fault_params(rnd, race, p)})
        faults.append(f)
    p["faults"] = faults
    return p


def canary_plan(seed=1):
    """An episode the oracle must fail: the sink stops (SIGSTOP) long enough
    for its af_packet ring to overflow, so frames the primary released are
    lost where no node counts them (outside the protected chain).  A check that the oracle
    is not vacuous (tests/integration/test_campaign.py runs it)."""
    return {"seed": seed, "episode": -1, "chain": "stateful", "local": False, "bfd": False,
            "canary": True,
            "faults": [{"kind": "sync_loss", "gap_ms": 800, "params": {"drop": 0.005,
                                                                       "dur_ms": 300}},
                       {"kind": "pause_sink", "gap_ms": 500, "params": {"dur_ms": 4500}},
                       {"kind": "operator_failover", "gap_ms": 500, "params": {},
                        "races": []}]}


def restart_then_kill_plan(role, chain="stateful", seed=1):
    """A fixed episode: `role` ("pred" or "standby") killed and restarted
    mid-stream, then the primary killed and the operator failing over --
    each role's restart followed by a failover, checked by the oracle
    (tests/integration/test_campaign.py restart_then_kill)."""
    kind = {"pred": "pred_restart", "standby": "standby_kill"}[role]
    return {"seed": seed, "episode": -2, "chain": chain, "local": False, "bfd": False,
            "faults": [{"kind": kind, "gap_ms": 800, "params": {"down_ms": 300}},
                       {"kind": "primary_kill", "gap_ms": 1500,
                        "params": {"operator_ms": 50}, "races": []}]}


def describe(p):
    """The schedule, one line a fault (what a violation report carries)."""
    lines = [f"seed {p['seed']} episode {p['episode']}: chain {p['chain']}, local resiliency "
             f"{'on' if p['local'] else 'off'}, BFD {'on' if p['bfd'] else 'off'}"]
    for i, f in enumerate(p["faults"]):
        lines.append(f"  {i}: +{f['gap_ms']} ms {f['kind']} {json.dumps(f['params'])}")
        for r in f.get("races", []):
            lines.append(f"       with {r['kind']} {json.dumps(r['params'])}")
    return "\n".join(lines)


def planned_faults(p):
    return sum(1 + len(f.get("races", [])) for f in p["faults"])


# ---- the input ------------------------------------------------------------------------

_INPUT = {}


def episode_input(chain, n):
    """n tagged frames of the smtp trace (frame k's source MAC 02:00 + k),
    its two flows copied FLOW_SETS times (new flows each copy of the trace,
    or every 32 frames for the ND chain: the balancer draws a backend for
    each), the copies cycling so the NFs' tables never fill."""
    have = _INPUT.get(chain, [])
    if len(have) < n:
        trace = pcap.read_pcap(traces.trace("smtp.pcap"))
        every = 32 if chain == "nd" else len(trace)
        for k in range(len(have), n):
            f = rc.new_flows(trace[k % len(trace)], 1 + (k // every) % FLOW_SETS)
            have.append(f[:6] + b"\x02\x00" + struct.pack(">I", k + 1) + f[12:])
        _INPUT[chain] = have
    return have[:n]


def input_frames_needed(p, rate):
    """Enough input for the schedule with room to spare (the source is
    stopped when the episode is done with it)."""
    s = 10.0
    for f in p["faults"]:
        s += f["gap_ms"] / 1000 + f["params"].get("dur_ms", 0) / 1000 + 2.0
        if f["kind"] in ("standby_kill", "pred_restart", "primary_restart"):
            s += 8.0
    return int(min(s, 300) * rate)


# ---- findings ----------------------------------------------------------------------------

class Findings:
    """What the oracle saw: violations (a property broken: `cat` safety,
    loss, state, node, liveness, harness) and notes (suspicious, not
    broken).  Has expect(), so remote_lab's checks report into it."""

    def __init__(self):
        self.violations = []  # (category, message)
        self.at_fault = []    # the fault each was found at (its row)
        self.notes = []
        self.cat = "safety"
        self.fault = 0
        self.same = {}

    def expect(self, cond, msg):
        if not cond:
            self.add(self.cat, msg)
        return cond

    def add(self, cat, msg):
        # the same message for many frames: the first few, then a count
        key = (cat, re.sub(r"\d+", "#", msg)[:60])
        self.same[key] = self.same.get(key, 0) + 1
        if self.same[key] > 3:
            if self.same[key] == 4:
                self.violations.append((cat, "(more like the above: see the count below)"))
                self.at_fault.append(self.fault)
            return
        self.violations.append((cat, msg))
        self.at_fault.append(self.fault)

    def counts(self):
        """Messages repeated beyond the first three, with their count."""
        for (cat, pattern), n in self.same.items():
            if n > 3:
                self.violations.append((cat, f"{n} times: {pattern}..."))
                self.at_fault.append(self.fault)

    def note(self, msg):
        self.notes.append(msg)


# ---- an episode ------------------------------------------------------------------------

STANDBY_RE = re.compile(r"launched standby of NF '[^']*' \(.*\) pid (\d+)")
COUNTED_PRIMARY = ("out_aborted", "out_latch_full", "out_refused", "ingress_gaps",
                   "ingress_stale")
COUNTED_PRED = ("refused_full", "refused_frame")
NF_NAMES = {"stateful": ("mon", "vlan", "lb"), "nd": ("mon", "nd", "lb")}
# /onvm/drops reasons that never hit the chain's input (frames on a port
# with no chain: the kernel's, on the exit and sync ports)
NOT_INPUT = ("no_chain", "port_tx_full")  # (port_tx_full: the ports' tx_drop, per port)


def _drops(d):
    return {k: v for k, v in d.items() if isinstance(v, int) and k not in NOT_INPUT}


class Episode:
    """One episode of a campaign in Lab `L` (its own: a fresh lab)."""

    def __init__(self, L, p, rate=RATE, log=None):
        self.L, self.p, self.rate = L, p, rate
        self.log = log or (lambda msg: report.log(msg))
        self.f = Findings()
        self.rows = []          # one per injected fault
        self.windows = []       # (start, end, what): the predecessor down (frames lost unseen)
        self.fault_spans = []   # (start, end, kind): every fault, for the report
        self.counted_tl = []    # (time, counted drops so far): the counters' timeline
        self.st = {"pred": {}, "primary": {}, "standby": {}}  # last polled /onvm/remote
        self.drops = {"primary": {}, "standby": {}}
        self.acc = {"pred": {}, "primary": {}, "standby": {}}  # earlier runs' counters
        self.acc_drops = {"primary": 0, "standby": 0}
        self.acc_drops_by = {"primary": {}, "standby": {}}
        self.down = set()       # nodes killed or stopped on purpose
        self.paused = set()
        self.pending = []       # (due, fn): actions at a set time (races, heals)
        self.failover = None    # the failover: trigger, times, outcome
        self.primary_restarted = False
        self.released_at_fence = None
        self.standby_copy_lost = False  # an NF of the standby killed, none to replace it
        self.gaps_jump = 0              # ingress_gaps that are a restarted predecessor's clock
        self._rel_mark = 0
        self.last_poll = 0.0
        self.source = None
        self.dead = set()
        self.restarting = set()  # roles started again, not ready yet
        self.hugepages_held = {}  # role: bytes its killed run held
        self.flagged = set()     # counter invariants already reported
        self.sync_tx = []        # (time, the primary's frames sent on the sync link)

    # -- time and polling
    def now(self):
        return time.monotonic()

    def at(self, delay_s, fn):
        self.pending.append((self.now() + max(0.0, delay_s), fn))

    def _run_pending(self):
        due = sorted([x for x in self.pending if x[0] <= self.now()], key=lambda x: x[0])
        for x in due:
            self.pending.remove(x)
            x[1]()

    def wait(self, seconds=0.0, until=None, timeout=None, what=""):
        """Sleep `seconds`, or until `until()` (None: no condition) within
        `timeout`, running due actions and polling the nodes meanwhile.
        Returns True when `until` held (or just slept)."""
        end = self.now() + (seconds if until is None else timeout)
        while True:
            self._run_pending()
            if self.now() - self.last_poll >= POLL_S:
                self.poll()
            if until is not None and until():
                return True
            now = self.now()
            if now >= end:
                return until is None
            nxt = min([end, self.last_poll + POLL_S] + [d for d, _ in self.pending])
            time.sleep(max(0.0005, min(0.02, nxt - now)))

    def node(self, role):
        return {"pred": self.pred, "primary": self.primary, "standby": self.standby,
                "sink": self.sink}[role]

    def poll(self):
        self.last_poll = self.now()
        for role in list(self.restarting):
            try:
                if self.ready(role):
                    self.restarting.discard(role)
            except lab.TestFailure as e:
                self.restarting.discard(role)
                self.f.add("node", str(e))
        for role in ("pred", "primary", "standby", "sink"):
            node = self.node(role)
            if role in self.down or role in self.paused:
                continue
            if not node.running():
                self.down.add(role)
                self.f.add("node", f"{role} ({node.name}): onvm_mgr exited with status "
                           f"{node.proc.returncode} while it should run")
                continue
            if role == "sink":
                continue
            try:
                st = rc.remote(node)
                if role == "primary" and self.st[role]:
                    # A restarted predecessor's timestamps start again from
                    # its clock: a jump the primary must not count as
                    # frames lost on the link (ingress_new_base); kept out
                    # of the loss accounting if it does
                    jump = st.get("ingress_gaps", 0) - self.st[role].get("ingress_gaps", 0)
                    if jump > 1000000:
                        self.gaps_jump += jump
                        self.f.add("counter", f"the primary's ingress_gaps rose by {jump} in "
                                   f"{POLL_S} s: a restarted predecessor's new timestamp "
                                   "base counted as frames lost on its link")
                self.st[role] = st
                if role in self.drops:
                    self.drops[role] = _drops(node.drops())
                    ports = node.ports()
                    # released frames the exit port could not send: lost, counted
                    self.drops[role]["out_tx_drop"] = ports["out"]["tx_drop"]
                    if role == "primary":
                        self.sync_tx.append((self.last_poll, ports["to_s"]["tx"]))
            except Exception:  # (a node stopping under the query)
                pass
        for name, proc in (("faulty_link.py (the sync link's relay)", self.pred.relay),
                           ("paced_source.py (the input)", self.source)):
            if proc is not None and proc.poll() not in (None, 0) and name not in self.dead:
                self.dead.add(name)
                self.f.add("harness", f"{name} exited with status {proc.returncode}: "
                           f"{self.L.proc_log(proc)[-500:]}")
        self.counted_tl.append((self.last_poll, self.counted()))
        self.check_counters()

    def check_counters(self):
        """Invariants of the counters, at every poll (each reported once):
        no stage released without a vote; nothing out of the standby, and
        nothing at the sink from it, before a takeover."""
        m, s = self.st["primary"], self.st["standby"]
        bad = []
        if m and m.get("stages_released", 0) > m.get("votes", 0):
            bad.append(("released_unvoted", f"the primary released {m['stages_released']} "
                        f"stages on {m['votes']} votes"))
        if s and s.get("takeovers", 0) == 0 and (s.get("out_passed", 0) or
                                                 s.get("out_before_takeover", 0)):
            bad.append(("standby_out", f"the standby sent {s.get('out_passed')} frames out "
                        f"before any takeover (out_before_takeover "
                        f"{s.get('out_before_takeover')})"))
        for key, msg in bad:
            if key not in self.flagged:
                self.flagged.add(key)
                self.f.add("safety", msg)

    def counter(self, role, key):
        return self.acc[role].get(key, 0) + self.st[role].get(key, 0)

    def counted_parts(self):
        parts = {k: self.counter("primary", k) for k in COUNTED_PRIMARY}
        parts["ingress_gaps"] -= self.gaps_jump
        parts.update({k: self.counter("pred", k) for k in COUNTED_PRED})
        for role in ("primary", "standby"):
            d = dict(self.acc_drops_by[role])
            for k, v in self.drops[role].items():
                if isinstance(v, int) and v:
                    d[k] = d.get(k, 0) + v
            parts.update({f"{role}_drops_{k}": v for k, v in d.items() if v})
        return {k: v for k, v in parts.items() if v}

    def counted(self):
        """Frames the nodes counted as dropped so far, every run of each."""
        c = sum(self.counter("primary", k) for k in COUNTED_PRIMARY) - self.gaps_jump
        c += sum(self.counter("pred", k) for k in COUNTED_PRED)
        for role in ("primary", "standby"):
            c += self.acc_drops[role] + sum(v for v in self.drops[role].values()
                                            if isinstance(v, int))
        if self.failover and self.failover.get("took_over"):
            c += self.st["standby"].get("ingress_gaps", 0)
        return c

    def _fold(self, role):
        """A node goes away: keep its run's counters."""
        for k, v in self.st[role].items():
            if isinstance(v, int) and not isinstance(v, bool):
                self.acc[role][k] = self.acc[role].get(k, 0) + v
        self.st[role] = {}
        if role in self.drops:
            self.acc_drops[role] += sum(v for v in self.drops[role].values()
                                        if isinstance(v, int))
            for k, v in self.drops[role].items():
                if isinstance(v, int):
                    self.acc_drops_by[role][k] = self.acc_drops_by[role].get(k, 0) + v
            self.drops[role] = {}

    # -- nodes
    def kill(self, role):
        """The whole node dies at once (its manager and every NF, hot
        standbys too: Node.crash), then is reaped."""
        node = self.node(role)
        self.poll()
        self.down.add(role)
        for m in STANDBY_RE.finditer(node.log()):  # (Node.crash knows the actives)
            node.nf_pids.add(int(m.group(1)))
        t = self.now()
        node.crash()
        t1 = self.now()
        node.stop()
        t2 = self.now()
        self.hugepages_held[role] = lab.hugepage_bytes(node.prefix)
        node.remove_runtime()
        self._fold(role)
        if self.now() - t > 1.0:
            self.log(f"killing {role} took {self.now() - t:.1f} s (crash {t1 - t:.1f}, reap "
                     f"{t2 - t1:.1f}, runtime files {self.now() - t2:.1f})")

    def restart(self, role):
        """Start the node again once the memory its killed run held is free
        (a host restarting a process needs it too): the kernel may take
        seconds to tear a killed DPDK process down."""
        node = self.node(role)
        need, t = self.hugepages_held.pop(role, 0), self.now()
        if not self.wait(until=lambda: lab.hugepages_free_bytes() >= need,
                         timeout=HUGEPAGES_WAIT_S):
            self.log(f"{role}: {need >> 20} MiB of hugepages still not free "
                     f"{HUGEPAGES_WAIT_S} s after its kill: started anyway")
        elif self.now() - t > 0.5:
            self.log(f"{role}: started {self.now() - t:.1f} s late, when the killed "
                     f"run's hugepages were free")
        node.start(wait=False)
        self.restarting.add(role)

    def ready(self, role):
        node = self.node(role)
        if not node.running():
            # (EAL's and telemetry's chatter left out, not their errors)
            tail = [x for x in node.log().splitlines()
                    if not x.startswith(("EAL", "TELEM")) or
                    re.search(r"(?i)cannot|error|fail|not enough", x)]
            raise lab.TestFailure(f"{role} exited with status {node.proc.returncode} while "
                                  f"starting again: {tail[-6:]}")
        text = node.log()
        mine = [m for m in lab.READY_RE.finditer(text) if int(m.group(2)) == node.proc.pid]
        if not mine:
            return False
        node.pid = node.proc.pid
        node._learn_pids_from_log(text)
        self.down.discard(role)
        return True

    def wait_ready(self, role):
        if not self.wait(until=lambda: role not in self.restarting, timeout=NODE_START_S):
            raise lab.TestFailure(f"{role}: not ready after {NODE_START_S} s")

    def pause(self, role, dur_s):
        node = self.node(role)
        os.kill(node.proc.pid, signal.SIGSTOP)
        self.paused.add(role)

        def cont():
            os.kill(node.proc.pid, signal.SIGCONT)
            self.paused.discard(role)
        self.at(dur_s, cont)

    def link(self, end, ifname, up):
        ns = {"pred": self.pred.ns, "primary": self.primary.ns,
              "standby": self.standby.ns, "sink": self.sink.ns}[end]
        lab.run_cmd(lab.in_netns(ns, ["ip", "link", "set", "dev", ifname,
                                      "up" if up else "down"]))

    def nf(self, role, pos):
        """The /onvm/nfs entry of the chain's NF at position `pos`."""
        name = NF_NAMES[self.p["chain"]][pos]
        for v in self.node(role).nfs().values():
            if isinstance(v, dict) and v.get("name") == name and v.get("pid", 0) > 0:
                return v
        return None

    def kill_nf(self, role, pos):
        v = self.nf(role, pos)
        if v is None:
            return None
        node = self.node(role)
        # (only an NF of this node: its command line names the node's prefix)
        if f"--file-prefix={node.prefix}" in lab.pid_cmdline(v["pid"]):
            os.kill(v["pid"], signal.SIGKILL)
        return v

    # -- set-up
    def build(self):
        p = self.p
        self.n_max = input_frames_needed(p, self.rate)
        self.frames = episode_input(p["chain"], self.n_max)
        self.sink, self.standby, self.primary, self.pred = rc.build(
            self.L, self.frames, "", stateful=True, nd_heavy=p["chain"] == "nd",
            bfd=p["bfd"], source=self.rate, relay=True, local=p["local"],
            idle={"max_sleep_us": 200}, bfd_ms=BFD_MS)

    def start(self):
        for node in (self.sink, self.standby, self.primary):
            node.start(wait=False)
        for node in (self.sink, self.standby, self.primary):
            node.wait_ready(NODE_START_S)
        self.pred.start(wait=False)
        self.pred.wait_ready(NODE_START_S)
        if self.p["bfd"]:
            self.pred.wait_bfd("to_m", "Up", timeout=60)
        self.source = rc.start_source(self.L, self.pred)
        self.t0 = self.now()
        ok = self.wait(until=lambda: self.st["primary"].get("out_released", 0) > 0 and
                       self.st["standby"].get("synced") == 1, timeout=30)
        if not ok:
            self.f.add("liveness", f"nothing released, or the standby not in sync, 30 s after "
                       f"the start: primary {self.st['primary']} / standby {self.st['standby']}")

    def rel(self, t):
        return round(t - self.t0, 3)

    # -- faults
    def took_over(self):
        """The predecessor is failing the chain over, or has (a failover
        given up goes back to "primary")."""
        return self.st["pred"].get("state", "primary") != "primary"

    def settle_failover(self):
        """A failover under way: wait until it is taken or given up.
        Returns True if the chain failed over."""
        if not self.took_over():
            return False
        self.wait(until=lambda: self.st["pred"].get("state") in ("standby", "primary"),
                  timeout=30)
        return self.st["pred"].get("state") != "primary"

    def sync_peak(self, t0, t1):
        best = 0
        pts = [(t, v) for t, v in self.sync_tx if t0 - POLL_S <= t <= t1 + POLL_S]
        for (a, x), (b, y) in zip(pts, pts[1:]):
            if b > a and y >= x:
                best = max(best, (y - x) / (b - a))
        return round(best)

    def row(self, kind, params, t, outcome, loss="", counted=0, node=""):
        self.rows.append({"episode": self.p["episode"], "seed": self.p["seed"],
                          "chain": self.p["chain"], "local": int(self.p["local"]),
                          "bfd": int(self.p["bfd"]), "fault": len(self.rows), "kind": kind,
                          "node": node, "params": json.dumps(params, sort_keys=True),
                          "time_s": self.rel(t), "outcome": outcome, "counted_drops": counted,
                          "sync_fps_max": self.sync_peak(t, self.now()),
                          "loss": loss, "violations": ""})
        self.log(f"ep {self.p['episode']} +{self.rel(t):7.2f} s {kind} {json.dumps(params)}: "
                 f"{outcome}")

    def recovered(self):
        """The pair protects the chain again: the standby in sync, its NFs
        parked, the primary releasing."""
        s, m = self.st["standby"], self.st["primary"]
        return (s.get("synced") == 1 and s.get("state_lost") == 0 and
                m.get("out_released", 0) > self._rel_mark and "standby" not in self.down and
                "primary" not in self.down and not self.paused and not self.pending)

    def mark_released(self):
        self.poll()
        self._rel_mark = self.st["primary"].get("out_released", 0)

    def inject(self, f):
        kind, prm = f["kind"], f["params"]
        t = self.now()
        c0 = self.counted()
        outcome = ""
        node = KINDS.get(kind, {}).get("node", "")
        self.mark_released()
        given_up0 = self.st["pred"].get("failovers_given_up", 0)
        if kind in ("standby_kill", "pred_restart"):
            role = "standby" if kind == "standby_kill" else "pred"
            if role == "standby":
                self.standby_copy_lost = False  # its NFs start again: it rejoins
            self.kill(role)
            self.wait(prm["down_ms"] / 1000)
            self.restart(role)
            self.wait_ready(role)
            if role == "pred":
                self.windows.append((t - 0.2, self.now() + 0.05, "predecessor down"))
                self.wait(0.5)
            outcome = f"restarted after {self.now() - t:.1f} s"
        elif kind in ("nf_kill_primary", "nf_kill_standby"):
            role = "primary" if kind == "nf_kill_primary" else "standby"
            v = self.kill_nf(role, prm["nf"])
            if v is None:
                outcome = "no such NF running"
            else:
                outcome = f"killed {v['name']} pid {v['pid']}" + (
                    " (local standby)" if v.get("local") else " (no local standby)")
                if role == "standby" and not v.get("local"):
                    self.standby_copy_lost = True
        elif kind.startswith("sync_") and kind != "sync_link_flap":
            faults = {"sync_loss": {"drop": prm.get("drop")}, "sync_dup": {"dup": prm.get("dup")},
                      "sync_reorder": {"reorder": prm.get("reorder")},
                      "sync_delay": {"delay": prm.get("delay"), "delay_us": prm.get("delay_us")},
                      "sync_blackout": {"drop": 1.0},
                      "sync_hold": {"hold_ms": prm.get("dur_ms")}}[kind]
            rc.set_relay(self.pred, **faults)
            self.at(prm["dur_ms"] / 1000, lambda: rc.set_relay(self.pred))
            self.wait(prm["dur_ms"] / 1000 + 0.01)
        elif kind in ("sync_link_flap", "standby_link_flap", "sink_link_flap"):
            ifname = {("sync_link_flap", "primary"): "m_s", ("sync_link_flap", "standby"): "s_m",
                      ("standby_link_flap", "pred"): "p_s",
                      ("standby_link_flap", "standby"): "s_p",
                      ("sink_link_flap", "sink"): "k_m"}[(kind, prm.get("end", "sink"))]
            end = prm.get("end", "sink")
            self.link(end, ifname, False)
            self.at(prm["dur_ms"] / 1000, lambda: self.link(end, ifname, True))
            self.wait(prm["dur_ms"] / 1000 + 0.01)
        elif kind.startswith("pause_"):
            role = kind.split("_")[1]
            self.pause(role, prm["dur_ms"] / 1000)
            self.wait(prm["dur_ms"] / 1000 + 0.01)
            if role == "pred":
                self.windows.append((t - 0.2, self.now() + 0.05, "predecessor paused"))
        # the recovery: the pair protects the chain again (or a failover came)
        if self.settle_failover():
            outcome += "; the chain failed over"
        elif self.standby_copy_lost:
            outcome += "; the standby's copy is lost for good (no local resiliency)"
            self.wait(0.3)
        else:
            t1 = self.now()
            ok = self.wait(until=lambda: self.recovered() or self.took_over(),
                           timeout=RECOVER_S)
            if self.settle_failover():
                outcome += "; the chain failed over"
            elif ok:
                outcome += f"; protected again {self.now() - t1:.2f} s after healing"
            else:
                self.f.add("liveness", f"fault {len(self.rows)} ({kind} {prm}): the chain not "
                           f"protected again {RECOVER_S} s after it healed: standby "
                           f"{_brief(self.st['standby'])}, primary {_brief(self.st['primary'])}")
                outcome += "; NOT protected again"
        self.poll()
        st = self.st["pred"]
        if st.get("failovers_given_up", 0) > given_up0 and not self.took_over():
            outcome += (f"; a failover given up (trigger {st.get('failover_trigger')}, "
                        f"standby synced {self.st['standby'].get('synced')})")
            self.f.note(f"fault {len(self.rows)} ({kind}): the predecessor asked for a failover "
                        f"(trigger {st.get('failover_trigger')}) and gave it up: "
                        f"{_brief(st)}")
        self.fault_spans.append((t, self.now(), kind))
        self.row(kind, prm, t, outcome.lstrip("; "), counted=self.counted() - c0, node=node)

    def inject_failover(self, f):
        kind, prm = f["kind"], f["params"]
        t = self.now()
        self.poll()
        self.failover = fo = {"kind": kind, "t": t, "primary_dies": False,
                              "synced_before": self.st["standby"].get("synced"),
                              "before": dict(self.st["primary"])}
        operator = lambda: self.pred.query("/onvm/remote/failover,web")
        link_down = None
        if kind == "primary_kill":
            fo["primary_dies"] = True
            self.kill("primary")
            if prm["operator_ms"] is not None:
                self.at(prm["operator_ms"] / 1000, operator)
        elif kind == "primary_restart":
            fo["primary_dies"] = True
            self.kill("primary")
            self.restart("primary")
            self.primary_restarted = True
        elif kind == "link_down_primary":
            end, ifname = prm["end"], {"pred": "p_m", "primary": "m_p"}[prm["end"]]
            self.link(end, ifname, False)
            link_down = (end, ifname)
        elif kind == "operator_failover":
            operator()
        elif kind == "pause_primary_bfd":
            self.pause("primary", prm["dur_ms"] / 1000)
        elif kind == "nf_kill_primary_nolocal":
            # no instance left for a step of the chain: the primary drops its
            # input and no cut of the chain commits (remote.md, "Several
            # instances"): it is down unless the standby takes over
            fo["primary_dies"] = True
            v = self.kill_nf("primary", prm["nf"])
            fo["nf"] = v and v["name"]
            self.at(0.05, operator)
        for r in f.get("races", []):
            self.race(r, t)
        # the failover, or its being given up
        fo0, gu0 = (self.st["pred"].get(k, 0) for k in ("failovers", "failovers_given_up"))
        self.wait(until=lambda: self.st["pred"].get("failovers", 0) > fo0, timeout=30)
        tries = 0
        while True:
            ok = self.wait(until=lambda: self.st["pred"].get("state") == "standby" or
                           self.st["pred"].get("failovers_given_up", 0) > gu0 + tries,
                           timeout=30)
            st = self.st["pred"]
            if st.get("state") == "standby":
                fo["took_over"] = True
                break
            if not ok:
                self.f.add("liveness", f"failover ({kind}): no takeover and none given up "
                           f"30 s on: predecessor {_brief(st)}, standby "
                           f"{_brief(self.st['standby'])}")
                break
            tries += 1
            fo["given_up"] = tries
            if not fo["primary_dies"] or tries >= 3:
                break
            # the primary is dead: the operator tries again
            self.wait(1.0)
            operator()
        st = self.st["pred"]
        fo["trigger"] = st.get("failover_trigger", "")
        fo["t_done"] = self.now()
        if link_down:
            self.wait(prm["up_after_ms"] / 1000)
            self.link(link_down[0], link_down[1], True)
        self.wait(0.05)
        self.poll()
        if fo.get("took_over"):
            if "primary" not in self.down:
                ok = self.wait(until=lambda: self.st["primary"].get("state") == "fenced",
                               timeout=10)
                if not ok and not self.primary_restarted:
                    self.f.add("safety", f"failover ({kind}): the old primary, alive, not fenced "
                               f"10 s after the takeover: {_brief(self.st['primary'])}")
                self.released_at_fence = self.st["primary"].get("out_released")
            s, p = self.st["standby"], self.st["pred"]
            ms = lambda a, b: (b - a) / 1e6 if a and b and b >= a else float("nan")
            fo["pred_ms"] = ms(p.get("failover_req_ns"), p.get("replay_end_ns"))
            outcome = (f"takeover, trigger {fo['trigger']}; the predecessor's request -> "
                       f"REPLAY_END {fo['pred_ms']:.1f} ms, the standby's replay "
                       f"{ms(s.get('replay_start_ns'), s.get('replay_end_ns')):.1f} ms; seen "
                       f"{fo['t_done'] - t:.1f} s after the fault")
        elif fo.get("given_up"):
            outcome = (f"failover given up {fo['given_up']}x (standby synced before: "
                       f"{fo['synced_before']}); "
                       + ("the chain is down" if fo["primary_dies"] else "the primary goes on"))
        else:
            outcome = "no failover"
        fo["outcome"] = outcome
        self.fault_spans.append((t, self.now(), kind))
        self.row(kind, prm, t, outcome, node="primary")
        self.failover_row = len(self.rows) - 1
        for r in f.get("races", []):
            self.row(r["kind"], r["params"], t + r["params"].get("at_ms", 0) / 1000,
                     r.get("outcome", ""), node="pred" if r["kind"] == "operator_race" else
                     "standby" if r["kind"] == "replay_stall_link" else "sync")

    def race(self, r, t):
        kind, prm = r["kind"], r["params"]
        delay = prm["at_ms"] / 1000
        if kind == "operator_race":
            def go():
                rep = self.pred.query("/onvm/remote/failover,web")
                r["outcome"] = f"operator request: {rep.get('status')}"
            self.at(delay, go)
        elif kind == "replay_stall_link":
            end, ifname = prm["end"], {"pred": "p_s", "standby": "s_p"}[prm["end"]]
            dur = prm["dur_ms"] / 1000

            def down():
                # The replay may be over already (a short one ends in a
                # few ms): then this is the input link of the chain's
                # active node down, and what is sent meanwhile is lost
                # on it, as on any link.
                try:
                    over = self.standby.query("/onvm/remote")["web"].get("state") == "active"
                except Exception:
                    over = False
                if over:
                    t0 = self.now()
                    self.windows.append((t0 - 0.01, t0 + dur + 0.05,
                                         "the active node's input link down"))
                    r["outcome"] += " (after the replay)"
                self.link(end, ifname, False)
            self.at(delay, down)
            self.at(delay + dur, lambda: self.link(end, ifname, True))
            r["outcome"] = f"{ifname} down {prm['dur_ms']} ms"
        elif kind == "replay_stall_sync":
            self.at(delay, lambda: rc.set_relay(self.pred, hold_ms=prm["dur_ms"]))
            r["outcome"] = f"sync link held {prm['dur_ms']} ms"

    # -- the end
    def drain(self):
        """The input stops a second after the faults; everything it sent
        comes out (or is counted)."""
        self.wait(1.0)
        self.source.send_signal(signal.SIGTERM)
        # (generous: on a loaded machine the source may get little CPU)
        self.source.wait(60)
        self.t_end = self.now()
        _, total = rc.source_progress(self.pred)
        self.n = total
        took = bool(self.failover and self.failover.get("took_over"))
        last = {}

        def quiet():
            st_p, st_m, st_s = self.st["pred"], self.st["primary"], self.st["standby"]
            if "pred" in self.down or self.pending:
                return False
            if took:
                key = (st_p.get("stamped"), st_s.get("out_passed"))
                done = (st_s.get("state") == "active" and st_p.get("state") == "standby" and
                        self.sink.port("in_s")["rx"] >= st_s.get("out_passed", 0))
            elif ("primary" not in self.down and st_m.get("state") == "primary" and
                  not (self.failover or {}).get("primary_dies")):
                key = (st_p.get("stamped"), st_m.get("out_released"), st_m.get("out_aborted"))
                done = (st_m.get("stages_busy") == 0 and st_m.get("out_waiting") == 0 and
                        self.sink.port("in_m")["rx"] >= self.primary.port("out")["tx"])
            else:  # the chain is down
                key, done = (st_p.get("stamped"),), True
            stable = last.get("key") == key and self.now() - last.get("t", 0) >= 0.5
            if last.get("key") != key:
                last.update(key=key, t=self.now())
            return done and stable
        if not self.wait(until=quiet, timeout=60):
            self.f.add("liveness", f"the lab did not drain in 60 s: predecessor "
                       f"{_brief(self.st['pred'])}, primary {_brief(self.st['primary'])}, "
                       f"standby {_brief(self.st['standby'])}")
        self.poll()
        if self.primary_restarted and "primary" not in self.down:
            released = self.st["primary"].get("out_released", 0)
            self.f.cat = "safety"
            self.f.expect(released == 0, f"the restarted primary released {released} frames "
                          "(its stages must get no vote)")
        if self.released_at_fence is not None and "primary" not in self.down:
            rel = self.st["primary"].get("out_released")
            self.f.cat = "safety"
            self.f.expect(rel == self.released_at_fence,
                          f"the fenced primary released {rel - self.released_at_fence} more "
                          "frames after it was fenced")
        s = self.st["standby"]
        self.f.cat = "safety"
        self.f.expect(s.get("out_before_takeover", 0) == 0,
                      f"the standby let {s.get('out_before_takeover')} frames out before a "
                      "takeover")
        self.f.expect(self.st["pred"].get("failovers", 0) <= 1 + self.st["pred"].get(
            "failovers_given_up", 0), f"more failovers than one (and those given up): "
            f"{_brief(self.st['pred'])}")

    def stop_all(self):
        self.rc_exit, self.stop_s = {}, {}
        for role in ("pred", "standby", "primary", "sink"):
            node = self.node(role)
            if role in self.down:
                continue
            t = self.now()
            code = self.stop_node(role)
            self.stop_s[role] = round(self.now() - t, 1)
            if self.stop_s[role] > 5 and code != "reaper":
                self.f.note(f"{role}: took {self.stop_s[role]} s to stop")
            self.rc_exit[role] = code
            if code == "reaper":
                continue
            if code != 0:
                self.f.add("node", f"{role}: onvm_mgr exit status {code}")
                continue
            if node.leftover_nfs:
                self.f.add("node", f"{role}: NFs left running {node.leftover_nfs}")
            m = re.findall(r"pool in use at exit: (\d+) \(at start (\d+)\)", node.log())
            if not m or m[-1][0] != m[-1][1]:
                self.f.add("node", f"{role}: mbufs not all back at exit: "
                           f"{m[-1] if m else 'no pool line'}")
        if self.pred.relay is not None and self.pred.relay.poll() is None:
            self.pred.relay.send_signal(signal.SIGTERM)
            self.pred.relay.wait(10)

    def stop_node(self, role, timeout=20):
        """SIGINT; returns the exit status, or "reaper" if the manager was
        done but its NF reaper thread still in the kernel `timeout` s later
        (docs/design/nf-lifecycle.md: reaping a dead NF can spin in
        shrink_dcache_parent() for a minute; then SIGKILL).  Any other
        manager that will not stop is a finding, with its threads."""
        node = self.node(role)
        try:
            node.nfs()
        except Exception:
            pass
        node.proc.send_signal(signal.SIGINT)
        try:
            node.proc.wait(timeout)
        except Exception:
            th = threads(node.proc.pid)
            live = [x for x in th if x.split()[2] != "Z"]
            if live and all(x.split()[1] == "onvm-reap" for x in live):
                self.f.note(f"{role}: exit held {timeout} s and more by its NF reaper thread "
                            f"in the kernel (a dead NF's release_task); SIGKILLed: {live}")
                node.stop(timeout=2)
                return "reaper"
            self.f.add("node", f"{role}: onvm_mgr did not stop in {timeout} s after SIGINT; "
                       f"its threads: {th}; its log's end: {node.log().splitlines()[-3:]}")
        return node.stop(timeout=2)

    def run(self):
        self.build()
        self.start()
        for f in self.p["faults"]:
            self.wait(f["gap_ms"] / 1000)
            if self.settle_failover():
                break
            self.f.fault = len(self.rows)
            if f["kind"] in FAILOVER_KINDS:
                self.inject_failover(f)
                break
            self.inject(f)
            if self.took_over():
                break
        if self.settle_failover() and not self.failover:
            self.unplanned_failover()
        self.f.fault = max(0, len(self.rows) - 1)
        t = [self.now()]
        self.drain()
        t.append(self.now())
        self.stop_all()
        t.append(self.now())
        check_episode(self)
        t.append(self.now())
        self.log(f"ep {self.p['episode']}: the primary's sync link peaked at "
                 f"{self.sync_rate_max()} frames/s; drained in {t[1] - t[0]:.1f} s, stopped in "
                 f"{t[2] - t[1]:.1f} s {self.stop_s}, checked in {t[3] - t[2]:.1f} s")
        return self.result()

    def unplanned_failover(self):
        """A fault not meant to fail the chain over did (BFD after a
        paused node, a false Down): the episode ends with it."""
        self.wait(until=lambda: self.st["pred"].get("state") == "standby" or
                  self.st["pred"].get("failovers_given_up", 0) > 0, timeout=30)
        st = self.st["pred"]
        kind = self.rows[-1]["kind"] if self.rows else "none"
        self.failover = {"kind": kind, "t": self.now(), "primary_dies": False,
                         "unplanned": True, "took_over": st.get("state") == "standby",
                         "trigger": st.get("failover_trigger"), "before": {}}
        self.f.note(f"fault {len(self.rows) - 1} ({kind}) failed the chain over: trigger "
                    f"{st.get('failover_trigger')}")
        self.failover_row = max(0, len(self.rows) - 1)
        if self.failover["took_over"] and "primary" not in self.down:
            self.wait(until=lambda: self.st["primary"].get("state") == "fenced", timeout=10)
            self.released_at_fence = self.st["primary"].get("out_released")

    def sync_rate_max(self):
        """The primary's highest rate on the sync link, frames/s over a poll."""
        best = 0
        for (t0, a), (t1, b) in zip(self.sync_tx, self.sync_tx[1:]):
            if t1 > t0 and b >= a:
                best = max(best, (b - a) / (t1 - t0))
        return round(best)

    def result(self):
        v = self.f.violations
        for i, row in enumerate(self.rows):
            cats = [c for (c, _), at in zip(v, self.f.at_fault)
                    if at == i or (i == len(self.rows) - 1 and at >= i)]
            row["violations"] = f"{len(cats)} ({','.join(sorted(set(cats)))})" if cats else 0
        return {"plan": self.p, "rows": self.rows, "violations": v, "notes": self.f.notes,
                "sync_max_fps": self.sync_rate_max(),
                "state_check": getattr(self, "state_check", "not checked"),
                "failover": self.failover, "n": getattr(self, "n", 0),
                "lost": getattr(self, "lost", None), "tail_loss": getattr(self, "tail_loss", None)}


def threads(pid):
    """name, state and kernel wait channel of each thread of `pid`."""
    out = []
    try:
        for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
            d = f"/proc/{pid}/task/{tid}"
            try:
                comm = open(f"{d}/comm").read().strip()
                stat = open(f"{d}/stat").read().rsplit(")", 1)[1].split()
                state = stat[0]
                # user and system CPU time (clock ticks): where a running thread spins
                wchan = (open(f"{d}/wchan").read().strip() +
                         f" utime={stat[11]} stime={stat[12]}")
            except OSError:
                continue
            try:  # the kernel stack's innermost frames (root only)
                stack = [x.split()[-1] for x in open(f"{d}/stack").read().splitlines()[:4]]
            except OSError:
                stack = []
            out.append(f"{tid} {comm} {state} {wchan} {'<'.join(stack)}".strip())
    except OSError as e:
        out.append(str(e))
    return out


def _brief(st):
    keys = ("state", "epoch", "synced", "state_lost", "failovers", "failovers_given_up",
            "failover_trigger", "out_released", "out_aborted", "out_latch_full", "stages_busy",
            "out_waiting", "takeovers", "takeovers_refused", "takeovers_not_synced",
            "out_passed", "out_dup", "stamped", "replayed", "joins", "full_applied",
            "votes", "aborts_no_vote", "resyncs_asked", "full_cuts", "cuts_too_old",
            "state_bytes_applied", "layout_mismatch")
    brief = {k: st[k] for k in keys if k in st}
    # what the node refused on its sync link, by reason: where a pair that
    # never protects again is stuck
    brief.update({k: v for k, v in st.items() if k.startswith("ctl_") and k != "ctl_ok" and v})
    return brief


# ---- the oracle ----------------------------------------------------------------------------

def send_times(points):
    """tag -> CLOCK_MONOTONIC time it was sent, from the source's log."""
    def at(tag):
        lo, hi = 0, len(points) - 1
        if not points or points[-1][1] < tag:
            return points[-1][0] if points else 0.0
        while lo < hi:
            mid = (lo + hi) // 2
            if points[mid][1] >= tag:
                hi = mid
            else:
                lo = mid + 1
        return points[lo][0]
    return at


def clusters(times, gap=0.5):
    """Sorted times grouped where they are less than `gap` apart."""
    out = []
    for t in sorted(times):
        if out and t - out[-1][1] < gap:
            out[-1][1] = t
            out[-1][2] += 1
        else:
            out.append([t, t, 1])
    return out


def counted_between(tl, a, b):
    """What the counters' timeline rose by from time a to time b."""
    before = [v for t, v in tl if t <= a]
    after = [v for t, v in tl if t <= b]
    return (after[-1] if after else 0) - (before[-1] if before else 0)


def check_episode(e):
    f, L = e.f, e.L
    n = e.n
    frames = e.frames[:n]
    fo = e.failover or {}
    took = bool(fo.get("took_over"))

    def capture(name):
        got = pcap.read_capture_out(L.path(name))
        mine = [x for x in got if x[6:8] == b"\x02\x00"]
        if len(mine) != len(got):
            f.note(f"{name}: {len(got) - len(mine)} frames not of the input (the kernel's?)")
        return mine
    got_m, got_s = capture("sink-m.pcap"), capture("sink-s.pcap")
    f.cat = "safety"
    for where, got in (("the primary", got_m), ("the standby", got_s), ("both", got_m + got_s)):
        seen, twice = set(), []
        for x in got:
            t = rc.tag_of(x)
            if t in seen:
                twice.append(t)
            seen.add(t)
        if twice:
            f.add("safety", f"{len(twice)} frames reached the sink twice from {where}: tags "
                  f"{twice[:5]}... (first {min(twice)}, last {max(twice)})")
            if where != "both":
                break
    lost_n, backend = rc.check_stateful(f, frames, got_m, got_s, allow_loss=n, tail=False,
                                        vlan=e.p["chain"] == "stateful")
    sent = {rc.tag_of(x) for x in frames}
    delivered = {rc.tag_of(x) for x in got_m + got_s} & sent
    lost = sorted(sent - delivered)
    e.lost = len(lost)
    when = send_times(rc.source_progress(e.pred)[0])
    # -- every lost frame explained
    f.cat = "loss"
    unexplained = []
    last_m = max((rc.tag_of(x) for x in got_m), default=0)
    tail = []
    # (sent while a link was down or the predecessor was: lost there, not
    # in the failover's tail)
    in_window = lambda t: any(a <= when(t) <= b for a, b, _ in e.windows)
    if fo and (fo.get("primary_dies") or took):
        tail = [t for t in lost if t > last_m and when(t) >= fo["t"] - SLACK_BEFORE and
                not in_window(t)]
        if took:
            flow = lambda t: rc.flow_of(frames[t - 1])
            rc.check_tail_loss(f, flow, [rc.tag_of(x) for x in got_m],
                               [rc.tag_of(x) for x in got_s], tail, per_flow=True)
    e.tail_loss = len(tail) if fo else None
    tail_set = set(tail)
    down = [(a, b) for a, b, _ in e.windows]
    if fo.get("primary_dies") and not took:
        down.append((fo["t"] - SLACK_BEFORE, e.t_end + 1))  # the chain is down
    rest = []
    in_windows = 0
    for t in lost:
        if t in tail_set:
            continue
        s = when(t)
        if any(a <= s <= b for a, b in down):
            in_windows += 1
        else:
            rest.append(s)
    tail_budget = TAIL_BOUND + fo.get("before", {}).get("out_waiting", 0)
    if took and fo.get("primary_dies"):
        if len(tail) > tail_budget + counted_between(e.counted_tl, fo["t"] - SLACK_BEFORE,
                                                    fo["t"]):
            f.add("loss", f"the failover lost {len(tail)} frames after the primary's last, "
                  f"more than its tail ({tail_budget})")
    elif took and tail:
        # a healthy primary fenced: what it held is replayed or was released
        f.note(f"a failover from a live primary ({fo.get('kind')}) lost {len(tail)} frames")
        rest += [when(t) for t in tail]
    for a, b, k in clusters(rest):
        c = counted_between(e.counted_tl, a - SLACK_BEFORE, b + SLACK_AFTER)
        where = [kind for s0, s1, kind in e.fault_spans if s0 - SLACK_AFTER <= b and a <= s1 + 1]
        if c < k:
            unexplained.append(f"{k} frames sent at +{e.rel(a):.2f}..+{e.rel(b):.2f} s "
                               f"(near {where or 'no fault'}), counted dropped then: {c}")
        elif not where:
            f.note(f"{k} frames lost at +{e.rel(a):.2f}..+{e.rel(b):.2f} s, near no fault, "
                   f"counted ({c}): dropped by the nodes unprovoked")
    for u in unexplained:
        f.add("loss", "unexplained loss: " + u)
    total_counted = e.counted()
    if len(rest) > total_counted:
        f.add("loss", f"{len(rest)} frames lost neither in the failover's tail nor while the "
              f"predecessor was down, more than the nodes counted as dropped ({total_counted})")
    e.loss_detail = {"lost": len(lost), "counted": total_counted, "pred_down": in_windows,
                     "tail": len(tail)}
    # -- the state of the NFs that ran on
    f.cat = "state"
    role = "standby" if took else ("primary" if "primary" not in e.down and
                                   not fo.get("primary_dies") else None)
    if role and e.rc_exit.get(role) in (0, "reaper"):
        doc = lambda nf: lab.read_json(L.path(f"{role}-{nf}.json"))
        docs = {"basic_monitor": doc("mon"), "load_balancer": doc("lb")}
        if e.p["chain"] == "nd":
            docs["nondet"] = doc("nd")
        # lost on the way into the NFs (not after them, as an aborted stage)
        before_nfs = (in_windows + e.counter("primary", "ingress_gaps") - e.gaps_jump +
                      e.counter("primary", "ingress_stale") +
                      sum(e.counter("pred", k) for k in COUNTED_PRED) +
                      sum(e.acc_drops.values()) + sum(
                          v for r in ("primary", "standby") for v in e.drops[r].values()
                          if isinstance(v, int)) +
                      (e.st["standby"].get("ingress_gaps", 0) if took else 0))
        exact = before_nfs == 0
        e.state_check = f"{role}'s NFs, " + ("exact" if exact else
                                             f"bounded (lost on the way in: {before_nfs})")
        check_state(f, frames, delivered, docs, backend, before_nfs)
    if fo and fo.get("took_over"):
        row = e.rows[e.failover_row]
        row["loss"] = len(tail)
    f.counts()
    e.log(f"ep {e.p['episode']}: {n} frames, lost {len(lost)} (tail {len(tail)}, predecessor "
          f"down {in_windows}, counted dropped {total_counted}: {e.counted_parts()}); state: "
          f"{getattr(e, 'state_check', 'not checked')}; {len(f.violations)} violation(s)")


def check_state(f, frames, delivered, docs, backend, lost_before):
    """The NFs' exports: per flow no packet counted twice (never above the
    input), every delivered one counted; in all, no more packets missing
    than were lost on the way into the NFs (`lost_before`: exactly the
    input when none was); nondet's draws one per packet; the balancer's
    table as the captures show it."""
    key = lambda fl: (rc.ip4(fl[0]), rc.ip4(fl[1]), fl[2], fl[3], fl[4])
    want, dl = {}, {}
    for x in frames:
        fl = rc.flow_of(x)
        if fl is not None:
            want[key(fl)] = want.get(key(fl), 0) + 1
            if rc.tag_of(x) in delivered:
                dl[key(fl)] = dl.get(key(fl), 0) + 1
    for name, doc in docs.items():
        got = {(e["src"], e["dst"], e["proto"], e["sport"], e["dport"]): e["packets"]
               for e in doc["flows"]}
        # (a starting node's af_packet port briefly takes frames of the other
        # interfaces of its namespace -- BFD's, RSync's: flows of no input)
        foreign = [k for k in got if k not in want]
        if foreign:
            f.note(f"{name}: {len(foreign)} flows not of the input, e.g. {foreign[:2]}")
            got = {k: v for k, v in got.items() if k in want}
        over = [(k, v, want.get(k, 0)) for k, v in got.items() if v > want.get(k, 0)]
        f.expect(not over, f"{name}: {len(over)} flows counted more packets than the input "
                 f"had (a packet processed twice), e.g. {over[:3]}")
        under = [(k, got.get(k, 0), v) for k, v in dl.items() if got.get(k, 0) < v]
        f.expect(not under, f"{name}: {len(under)} flows counted fewer packets than reached "
                 f"the sink (a released packet missing from the state), e.g. {under[:3]}")
        missing = sum(max(0, v - got.get(k, 0)) for k, v in want.items())
        if lost_before == 0:
            f.expect(got == want, f"{name}: per-flow packets differ from the input's with "
                     f"nothing lost on the way in ({sum(got.values())} vs "
                     f"{sum(want.values())})")
        else:
            f.expect(missing <= lost_before, f"{name}: {missing} input packets never counted, "
                     f"more than were lost on the way into the NFs ({lost_before})")
        if name == "nondet":
            bad = [e for e in doc["flows"] if e["nd_events"] != e["packets"]]
            f.expect(not bad and doc["nd_events"] == doc["packets"],
                     f"nondet: draws not one per packet ({doc['nd_events']} draws, "
                     f"{doc['packets']} packets; flows {bad[:3]})")
    for e in docs["load_balancer"]["flows"]:
        k = (bytes(int(x) for x in e["src"].split(".")),
             bytes(int(x) for x in e["dst"].split(".")), e["proto"], e["sport"], e["dport"])
        if k in backend:
            f.expect(e["backend_ip"] == rc.ip4(backend[k][1]),
                     f"load_balancer's table: flow {k} on {e['backend_ip']}, the capture "
                     f"says {rc.ip4(backend[k][1])}")


# ---- running episodes ------------------------------------------------------------------

def run_episode(seed, episode, rate=RATE, keep_dir=None, log=None, p=None):
    """One episode in a lab of its own; returns its result (rows,
    violations, ...).  `keep_dir`: a violating episode's logs and schedule
    are copied there; `p`: this plan instead of plan(seed, episode)."""
    p = p or plan(seed, episode)
    L = lab.Lab(f"campaign-{seed}-{episode}")
    e = Episode(L, p, rate, log)
    t0 = time.monotonic()
    try:
        res = e.run()
    except Exception as exc:  # recorded, the campaign goes on
        import traceback
        tb = traceback.format_exc()
        # a wait that timed out (a node that never got ready): liveness;
        # anything else is the harness's own failure
        e.f.add("liveness" if isinstance(exc, lab.TestFailure) else "harness",
                f"{type(exc).__name__}: {exc}")
        e.log(tb)
        res = e.result()
        res["traceback"] = tb
    finally:
        for role in list(e.paused):
            try:
                os.kill(e.node(role).proc.pid, signal.SIGCONT)
            except Exception:
                pass
        if res_has_violations(e) and keep_dir:
            keep(e, keep_dir)
        L.cleanup()
    res["seconds"] = round(time.monotonic() - t0, 1)
    return res


def res_has_violations(e):
    return bool(e.f.violations)


def keep(e, keep_dir):
    d = os.path.join(keep_dir, f"seed{e.p['seed']}-ep{e.p['episode']}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "schedule.txt"), "w") as out:
        out.write(describe(e.p) + "\n\nviolations:\n")
        for cat, msg in e.f.violations:
            out.write(f"  [{cat}] {msg}\n")
        out.write("\nnotes:\n" + "".join(f"  {x}\n" for x in e.f.notes))
        out.write("\nfaults:\n" + "".join(f"  {json.dumps(r)}\n" for r in e.rows))
    for name in os.listdir(e.L.tmp):
        if (name.endswith((".log", ".node.json", ".pcap")) and not name.startswith("input")
                or name.startswith("faults") or name.endswith("-mon.json")):
            try:
                shutil.copy(os.path.join(e.L.tmp, name), d)
            except OSError:
                pass


def summarize(results, commit, seconds, args_line):
    """campaign_summary.txt's text."""
    rows = [r for res in results for r in res["rows"]]
    by_kind = {}
    for r in rows:
        by_kind[r["kind"]] = by_kind.get(r["kind"], 0) + 1
    viol = [(res["plan"]["seed"], res["plan"]["episode"], c, m) for res in results
            for c, m in res["violations"]]
    losses = [r["loss"] for r in rows if r["loss"] != ""]
    fo = [res["failover"] for res in results if res["failover"]]
    triggers = {}
    for x in fo:
        k = x.get("trigger") or "none"
        if x.get("took_over"):
            triggers[k] = triggers.get(k, 0) + 1
    lines = [f"# {args_line}",
             f"commit: {commit}",
             f"episodes: {len(results)}, faults injected: {len(rows)}, total time "
             f"{seconds / 60:.1f} min",
             f"chains: stateful {sum(r['plan']['chain'] == 'stateful' for r in results)}, "
             f"nd {sum(r['plan']['chain'] == 'nd' for r in results)}; local resiliency in "
             f"{sum(r['plan']['local'] for r in results)}, BFD in "
             f"{sum(r['plan']['bfd'] for r in results)}",
             "", "faults by kind:"]
    for k in ALL_KINDS:
        if k in by_kind:
            lines.append(f"  {k:26s} {by_kind[k]}")
    lines += ["", f"failovers: {sum(1 for x in fo if x.get('took_over'))} taken over "
              f"(triggers: {', '.join(f'{k} {v}' for k, v in sorted(triggers.items()))}), "
              f"{sum(1 for x in fo if x.get('given_up') and not x.get('took_over'))} given up"]
    if losses:
        lines.append(f"loss per failover (frames after the primary's last release): p50 "
                     f"{report.pct(losses, 50)}, p99 {report.pct(losses, 99)}, max "
                     f"{max(losses)} (n={len(losses)}; bound {TAIL_BOUND} + the latch's wait "
                     "queue)")
    lost = [res["lost"] for res in results if res.get("lost") is not None]
    lines.append(f"frames lost per episode, all causes: p50 {report.pct(lost, 50) if lost else 0}"
                 f", max {max(lost) if lost else 0}")
    lines += ["", f"violations: {len(viol)}"]
    for s, ep, c, m in viol:
        lines.append(f"  seed {s} episode {ep} [{c}] {m}")
    notes = [(res["plan"]["seed"], res["plan"]["episode"], m) for res in results
             for m in res["notes"]]
    lines += ["", f"notes (suspicious, not violations): {len(notes)}"]
    for s, ep, m in notes:
        lines.append(f"  seed {s} episode {ep}: {m}")
    return "\n".join(lines) + "\n"


CSV_FIELDS = ["episode", "seed", "chain", "local", "bfd", "fault", "kind", "node", "params",
              "time_s", "outcome", "counted_drops", "sync_fps_max", "loss", "violations"]
