#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The cluster's state in etcd (onvm.cluster, tools/onvmctl), on a real
three-member etcd cluster on loopback (onvm.etcd_lab).

Scenarios (argument; none: all of them):

  roles    four nodes register with leases; a chain declared is placed on
           the least loaded (a primary and a standby, never the
           predecessor, never a drained node); the standby synced, the
           primary's failure promotes it at epoch 2 and fences the old
           primary; a standby added back (the fenced node last);
           promotion refused without a synced standby or for an epoch
           already left; a change whose answer is lost (none came, or a
           member asked again said the compare failed) reported made,
           and made once; a node whose agent stops renewing its lease is
           gone after the TTL, and a standby on it replaced (promoted,
           synced, if no live one is); removed and
           declared again, a chain's epoch goes on; bad names, specs and
           endpoints refused; every roles change shows in onvmctl's JSON.
  race     two actors each ask, 20 times, for the promotion of the same
           failure of one chain: in odd rounds two clients that both read
           the roles before either writes, in even rounds two onvmctl
           switchover --epoch (the epoch both saw) at once: exactly
           one promotion per epoch, the loser told (exit 1, a conflict),
           and the epochs 2..21 each written once.
  config   a chain declared with its part of the nodes' configurations:
           onvmctl config renders a node's for its role (JSON asserted:
           the node's own part, the chain's, the role's remote entry at
           etcd's epoch) and refuses a node without the chain's ports;
           a config onvm_mgr would refuse is refused at the declaration;
           three agents (no manager) named the standby in turn: one
           whose node has no ports for the chain and one whose rendered
           configuration onvm_mgr --check refuses decline the role
           without running their hooks (each replaced by onvmctl
           reprotect), and the third hands its --on-standby hook the
           rendered configuration (ONVM_CONFIG, read back, root's only);
           a fourth agent's hook that hangs is killed at --hook-timeout
           and its node declines.
  members  one member SIGKILLed: reads and role changes go on (the client
           moves to a live member); a second killed: no quorum -- every
           onvmctl command exits 2 and changes nothing, a promotion is
           refused, not half-made; the members back on their data: the
           role change goes through, at the next epoch.
"""
import json
import os
import subprocess
import sys
import threading
import time

from onvm import lab

from onvm import etcd_lab

cluster = etcd_lab.cluster  # (None without python3-etcd3: test() skips)

ONVMCTL = lab.SRC + "/tools/onvmctl"
SPEC = {"nfs": ["basic_monitor", "load_balancer"], "scheme": "remote", "predecessor": "n0",
        "standbys": 1}


def ctl(ec, *args, timeout=1.0):
    """onvmctl --json ARGS: (exit status, its JSON)."""
    p = subprocess.run(["/usr/bin/python3", ONVMCTL, "--json",
                        "--timeout", str(timeout), "--endpoints", ",".join(ec.endpoints),
                        *args], capture_output=True, text=True, timeout=60)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        raise lab.TestFailure(f"onvmctl {' '.join(args)}: not JSON: {p.stdout!r} {p.stderr!r}")
    return p.returncode, out


def register_all(c, names, capacity=8, ttl=60):
    return {n: c.register(n, {"capacity": capacity, "ports": ["p0", "p1"]}, ttl=ttl)
            for n in names}


class LostAnswer(cluster.Cluster if cluster else object):
    """A client whose next write transaction is made by etcd but whose
    answer is lost: `mode` "silent", no answer at all (every member timed
    out); "retried", the next member, asked again, answers that the
    compare failed -- because the first attempt had changed the roles."""

    def __init__(self, endpoints, mode):
        super().__init__(endpoints, timeout=2.0)
        self.mode = mode

    def call(self, fn):
        out = super().call(fn)
        if self.mode is None or fn.__qualname__ != "Cluster.change_roles.<locals>.do":
            return out
        mode, self.mode = self.mode, None
        if mode == "retried":
            out = super().call(fn)  # the same transaction again: "no"
        self.timed_out = True
        if mode == "silent":
            raise cluster.Unavailable("the answer was lost (the test's)")
        return out


def with_chain(L, tag, spec):
    """A started etcd cluster, a client, four nodes registered for a minute
    (n0 the predecessor) and the chain "web" declared."""
    ec = etcd_lab.EtcdCluster(L, tag=tag).start()
    c = ec.client()
    register_all(c, ["n0", "a", "b", "c"], ttl=60)
    c.declare("web", spec)
    return ec, c


def roles(L):
    ec = etcd_lab.EtcdCluster(L, tag="ra").start()
    c = ec.client()
    # leases of a minute (a loaded machine's onvmctl takes up to a second
    # a call); the expiry is checked on a node of its own, below
    register_all(c, ["n0", "n1", "n2", "n3"], ttl=60)
    rc, out = ctl(ec, "drain", "n1")
    L.expect(rc == 0 and out["drained"], f"drain: {rc} {out}")
    rc, out = ctl(ec, "declare", "web", json.dumps(SPEC))
    ch = out.get("chain", {})
    L.expect(rc == 0 and ch.get("epoch") == 1 and ch.get("primary") == "n2" and
             ch.get("standbys") == ["n3"] and ch.get("status") == "unprotected",
             f"declare: placed on n2 and n3 (n0 is the predecessor, n1 drained): {rc} {out}")
    rc, out = ctl(ec, "declare", "web", json.dumps(SPEC))
    L.expect(rc == 1 and "exists" in out.get("error", ""), f"declared twice: {rc} {out}")
    rc, out = ctl(ec, "declare", "bad", json.dumps(dict(SPEC, scheme="carrier-pigeon")))
    L.expect(rc == 1 and "scheme" in out.get("error", ""), f"a bad spec: {rc} {out}")
    rc, out = ctl(ec, "declare", "web/spec", json.dumps(SPEC))
    L.expect(rc == 1 and "name" in out.get("error", ""), f"a name with a '/': {rc} {out}")
    rc, out = ctl(ec, "declare", "x", "@/nonexistent/spec.json")
    L.expect(rc == 1 and out.get("ok") is False, f"a spec file missing: {rc} {out}")
    rc, out = ctl(ec, "switchover", "web")
    L.expect(rc == 1 and "no synced standby" in out.get("error", ""),
             f"promoted a standby not in sync: {rc} {out}")
    c.mark_synced("web", "n3", 1)
    rc, out = ctl(ec, "chain", "web")
    L.expect(out.get("chain", {}).get("status") == "protected", f"synced: {out}")
    # its copy lost (a restart): not promoted until it syncs again
    c.unmark_synced("web", "n3")
    try:
        c.promote("web", 1, "a standby whose copy is gone")
        L.expect(False, "promoted a standby no longer synced")
    except cluster.Conflict:
        pass
    L.expect(c.unmark_synced("web", "n3") is None, "unsynced twice")
    c.mark_synced("web", "n3", 1)
    # the primary fails: the predecessor's agent promotes for the epoch it saw
    new = c.promote("web", 1, "bfd: n2 down")
    L.expect(new["epoch"] == 2 and new["primary"] == "n3" and new["fenced"] == ["n2"] and
             new["standbys"] == [] and new["synced"] == [],
             f"promotion: epoch 2, n3 primary, n2 fenced: {new}")
    # who was primary when: what an agent started late compares its data
    # plane with
    L.expect(new["primaries"] == [[1, "n2"], [2, "n3"]] and
             [cluster.primary_at(new, e) for e in (0, 1, 2, 3)] == ["n2", "n2", "n3", "n3"],
             f"the primaries' history: {new.get('primaries')}")
    try:
        c.promote("web", 1, "a late second request for the same failure")
        L.expect(False, "promoted twice for one failure")
    except cluster.Conflict:
        pass
    rc, out = ctl(ec, "chain", "web")
    L.expect(out.get("chain", {}).get("status") == "unprotected", f"after it: {out}")
    # a change made whose answer is lost is reported made, once
    for mode, node in (("silent", "n2"), ("retried", "n0")):
        lossy = LostAnswer(ec.endpoints, mode)
        try:
            new = lossy.change_roles("web", lambda spec, r: dict(r, fenced=r["fenced"] + [mode]),
                                     f"answer {mode}")
            L.expect(mode in new["fenced"], f"{mode}: {new}")
        except (cluster.Unavailable, cluster.Conflict) as e:
            L.expect(False, f"a change made, its answer {mode}: reported {type(e).__name__}: {e}")
        finally:
            lossy.close()
        _, r, _ = c.chain("web")
        L.expect(r["fenced"].count(mode) == 1, f"{mode}: made {r['fenced'].count(mode)} times")
    c.change_roles("web", lambda spec, r: dict(r, fenced=["n2"]), "test: back")
    # n1 undrained: the standby added is n1 (n2, fenced, comes last)
    ctl(ec, "undrain", "n1")
    rc, out = ctl(ec, "reprotect", "web")
    L.expect(rc == 0 and out.get("chain", {}).get("standbys") == ["n1"],
             f"reprotect picks n1: {rc} {out}")
    rc, out = ctl(ec, "reprotect", "web")
    L.expect(rc == 1, f"a standby added where none was wanted: {rc} {out}")
    # a node whose agent stops renewing is gone after the TTL; one whose
    # agent renews stays
    short = register_all(c, ["s1", "s2"], ttl=cluster.NODE_TTL)
    t0 = time.monotonic()
    while time.monotonic() - t0 < cluster.NODE_TTL + 2:
        L.expect(c.refresh(short["s1"]), "s1's lease would not renew")
        time.sleep(0.5)
    rc, out = ctl(ec, "nodes")
    names = [n["name"] for n in out.get("nodes", [])]
    L.expect(names == ["n0", "n1", "n2", "n3", "s1"],
             f"s2 stopped renewing, s1 did not: the nodes are {names}")
    L.expect(not c.refresh(short["s2"]), "an expired lease renewed")
    register_all(c, ["s1"], ttl=60)  # (kept from here on, without an agent)
    # a standby whose node is gone: the chain is degraded, reprotect
    # replaces it
    c.mark_synced("web", "n1", 2)
    c.drain("n1")  # (not picked again)
    rc, out = ctl(ec, "chain", "web")
    L.expect(out.get("chain", {}).get("status") == "protected", f"n1 synced: {out}")
    c.call(lambda e: e.delete(cluster.PREFIX + "nodes/n1"))  # (its lease lapsed)
    rc, out = ctl(ec, "chain", "web")
    ch = out.get("chain", {})
    L.expect(ch.get("status") == "unprotected" and ch.get("down") == ["n1"],
             f"its standby's node gone: {out}")
    # ... yet, synced, it is still the one a failure would promote (its
    # agent may be down or cut off from etcd, its data plane healthy),
    # after a live synced one
    _, r, _ = c.chain("web")
    live = set(c.nodes())
    L.expect(cluster.promoted("web", r, r["epoch"], live)["primary"] == "n1" and
             cluster.promoted("web", dict(r, synced=["n1", "s1"]), r["epoch"],
                              live)["primary"] == "s1",
             f"a synced standby whose lease lapsed, promoted last: {r}")
    rc, out = ctl(ec, "reprotect", "web")
    ch = out.get("chain", {})
    L.expect(rc == 0 and ch.get("standbys") == ["s1"] and ch.get("synced") == [],
             f"the lost standby replaced: {rc} {out}")
    # removed and declared again: the epoch goes on, never back
    rc, out = ctl(ec, "remove", "web")
    L.expect(rc == 0, f"remove: {rc} {out}")
    rc, out = ctl(ec, "chains")
    L.expect(rc == 0 and out["chains"] == [], f"chains after remove: {out}")
    rc, out = ctl(ec, "declare", "web", json.dumps(SPEC))
    L.expect(rc == 0 and out.get("chain", {}).get("epoch") == 3,
             f"declared again: epoch 3 (it was 2): {rc} {out}")
    _, r, _ = c.chain("web")
    L.expect(cluster.primary_at(r, 1) == r["primary"],
             f"declared again: a data plane at the old epoch runs its primary: {r}")
    rc, out = ctl(ec, "--endpoints", "no-port", "nodes")
    L.expect(rc == 1 and "HOST:PORT" in out.get("error", ""), f"a bad endpoint: {rc} {out}")
    reach(L, c)
    c.close()
    ec.stop()


def reach(L, c):
    """A re-protection's standby only where the predecessor's standby link
    reaches, the old primary's: with segments, the nodes on the previous
    primary's (a spare before the fenced old primary), known after its
    registration lapsed; never the predecessor, nor a third segment;
    without segments, the previous primary."""
    seg = {"p": "a", "m": "a", "x": "a", "s": "b", "y": "b", "z": "c", "h": "a"}
    for n, sg in seg.items():
        # (h hosts another chain only: first by name on the spare's
        # segment, never placed for this one)
        c.register(n, dict({"capacity": 8, "segment": sg}, **({"hosts": ["db"]} if n == "h"
                                                               else {})), ttl=60)
    for n in ("n0", "n2", "n3", "s1"):
        c.drain(n)  # (placed on these only)
    c.declare("seg", dict(SPEC, predecessor="p"))
    _, r, _ = c.chain("seg")
    L.expect((r["primary"], r["standbys"]) == ("m", ["s"]) and
             r.get("segments") == {"m": "a", "s": "b"},
             f"placed by name, the least loaded, segments recorded: {r}")
    c.mark_synced("seg", "s", 1)
    r = c.promote("seg", 1, "the test's")
    nodes = c.nodes()
    got = cluster.standby_reach(nodes, r)
    L.expect(got == {"m", "x", "h"},
             f"reach: the old primary's segment but the predecessor: {got}")
    r = c.add_standby("seg", among=got)
    L.expect(r is not None and r["standbys"] == ["x"],
             f"the spare placed before the fenced old primary, not h (it hosts db only): {r}")
    c.call(lambda e: e.delete(cluster.PREFIX + "nodes/m"))  # (its lease lapsed)
    got = cluster.standby_reach(c.nodes(), r)
    L.expect(got == {"x", "h"}, f"the old primary's segment from the roles: {got}")
    bare = {"predecessor": "p", "primary": "n2", "primaries": [[1, "n3"], [2, "n2"]]}
    got = cluster.standby_reach(nodes, bare)
    L.expect(got == {"n3"}, f"no segments: the previous primary only: {got}")
    mismatch(L)


def mismatch(L):
    """A node's manager against etcd's roles (cluster.placement_mismatch):
    said when they disagree at one epoch, not while a change is under way."""
    roles = {"epoch": 2, "primary": "s", "standbys": ["x"], "predecessor": "p",
             "primaries": [[1, "m"], [2, "s"]]}
    dp = lambda role, state, epoch: {"role": role, "state": state, "epoch": epoch}
    agree = [("m", dp("primary", "primary", 1)),    # the old primary, before it hears
             ("m", dp("primary", "fenced", 1)),
             ("s", dp("standby", "standby", 1)),    # promoted in etcd, not yet taken over
             ("s", dp("standby", "active", 2)),     # taken over
             ("s", dp("primary", "primary", 2)),    # made primary by a re-protection
             ("x", dp("standby", "standby", 2)),
             ("p", dp("predecessor", "primary", 2)),
             ("x", dp("standby", "replaying", 3))]  # ahead of etcd (a node's failover)
    wrong = [("x", dp("primary", "primary", 2)),    # configured primary, etcd says not
             ("s", dp("standby", "standby", 2)),    # etcd's primary parked as a standby
             ("y", dp("standby", "standby", 2)),    # a standby etcd never placed
             ("x", dp("standby", "active", 2))]     # took over where etcd had s
    for node, d in agree:
        why = cluster.placement_mismatch(node, d, roles)
        L.expect(why is None, f"{node} {d}: no mismatch expected, got {why}")
    for node, d in wrong:
        L.expect(cluster.placement_mismatch(node, d, roles) is not None,
                 f"{node} {d}: a mismatch not seen")


def race(L):
    ec, c = with_chain(L, "rc", SPEC)
    rounds = 20
    results = []
    for epoch in range(1, rounds + 1):
        # a standby synced (the one promoted last round replaced): a
        # double promotion would show as two epochs, or a promotion of
        # nothing synced
        _, r, _ = c.chain("web")
        for s in r["standbys"]:
            c.mark_synced("web", s, epoch)
        barrier = threading.Barrier(2)
        got = []
        if epoch % 2:
            # two agents (clients of their own) read the same roles, then
            # both try to write their promotion: only the transaction's
            # compare can keep the second out
            def ask():
                agent = ec.client(timeout=5.0)

                def fn(spec, roles):
                    barrier.wait(10)
                    return cluster.promoted("web", roles, epoch)
                try:
                    new = agent.change_roles("web", fn, "race")
                    got.append((0, {"epoch": new["epoch"], "primary": new["primary"]}))
                except cluster.Conflict as e:
                    got.append((1, {"error": str(e)}))
                finally:
                    agent.close()
        else:
            # two operators' onvmctl, on the epoch both saw
            def ask():
                barrier.wait(10)
                got.append(ctl(ec, "switchover", "web", "--epoch", str(epoch), timeout=5.0))
        ts = [threading.Thread(target=ask) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        wins = [o for rc, o in got if rc == 0]
        losses = [o for rc, o in got if rc == 1]
        L.expect(len(wins) == 1 and len(losses) == 1,
                 f"epoch {epoch}: {len(wins)} promotion(s) of 2 requests: {got}")
        _, r, _ = c.chain("web")
        L.expect(r["epoch"] == epoch + 1, f"after round {epoch}: epoch {r['epoch']}")
        results.append((r["epoch"], r["primary"]))
        # the fenced node comes back as a standby for the next round
        c.add_standby("web")
    if L.expect([e for e, _ in results] == list(range(2, rounds + 2)),
                f"epochs not written once each: {results}"):
        print(f"race: {rounds} rounds of two simultaneous switchovers, one promotion each")
    c.close()
    ec.stop()


def members(L):
    ec, c = with_chain(L, "mb", SPEC)
    _, r, _ = c.chain("web")
    c.mark_synced("web", r["standbys"][0], 1)
    # the member the client talks to first goes (the leader, often: an
    # election follows, a second or two with no answer)
    ec.kill(0)
    ec.wait_healthy(30)
    rc, out = ctl(ec, "chains")
    L.expect(rc == 0 and out["chains"][0]["epoch"] == 1, f"one member down, chains: {rc} {out}")
    rc, out = ctl(ec, "switchover", "web")
    L.expect(rc == 0 and out.get("chain", {}).get("epoch") == 2,
             f"one member down, switchover: {rc} {out}")
    c.add_standby("web")
    # no quorum: nothing read, nothing changed
    ec.kill(1)
    t0 = time.monotonic()
    for args in (["chains"], ["nodes"], ["switchover", "web"], ["reprotect", "web"],
                 ["declare", "db", json.dumps(SPEC)]):
        rc, out = ctl(ec, *args, timeout=0.5)
        L.expect(rc == 2 and out.get("unavailable"), f"no quorum: onvmctl {args[0]}: {rc} {out}")
    print(f"members: no quorum: 5 commands refused in {time.monotonic() - t0:.1f} s")
    try:
        c.promote("web", 2, "during the outage")
        L.expect(False, "a promotion without a quorum")
    except cluster.Unavailable:
        pass
    ec.restart(0)
    ec.restart(1)
    ec.wait_healthy(60)
    _, r, _ = c.chain("web")
    L.expect(r["epoch"] == 2 and "db" not in c.chains(),
             f"back: the outage changed nothing: epoch {r['epoch']}, chains {list(c.chains())}")
    c.mark_synced("web", r["standbys"][0], 2)
    rc, out = ctl(ec, "switchover", "web")
    L.expect(rc == 0 and out.get("chain", {}).get("epoch") == 3,
             f"quorum back, switchover: {rc} {out}")
    c.close()
    ec.stop()


NODE_BASE = {
    "node": {"lcores": "0@0"},
    "ports": [{"name": "from_p", "dev": "net_af_packet0,iface=x_p"},
              {"name": "to_m", "dev": "net_af_packet1,iface=x_s"},
              {"name": "out", "dev": "net_af_packet2,iface=x_k"}],
    "cluster": {"chains": {"web": {"ingress_port": "from_p", "exit_port": "out",
                                   "sync_port": "to_m"}}}}
CHAIN_CONFIG = {"id": 7, "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
                "services": [1], "primary": {"stages": 4},
                "standby": {"window": 32, "reprotect": True}}


def config(L):
    ec = etcd_lab.EtcdCluster(L, tag="cf").start()
    c = ec.client()
    register_all(c, ["n0", "a0"], ttl=60)
    good, bad, unchecked = (L.path(f"node-{k}.json") for k in ("good", "bad", "unchecked"))
    for path, base in ((good, NODE_BASE),
                       (bad, {k: v for k, v in NODE_BASE.items() if k != "cluster"}),
                       # (rendered, but a field onvm_mgr --check refuses)
                       (unchecked, dict(NODE_BASE, startup={"nonsense": 1}))):
        with open(path, "w") as f:
            json.dump(base, f)
    agents = {}
    for name, base in (("ag_bad", bad), ("ag_check", unchecked), ("ag_good", good)):
        out = L.path(f"hook-{name}")
        status = L.path(f"agent-{name}.json")
        agents[name] = (L.spawn(f"agent-{name}", [
            "/usr/bin/python3", lab.SRC + "/tools/onvm-agent", "--node", name,
            "--prefix", f"no-manager-{name}", "--endpoints", ",".join(ec.endpoints),
            "--ttl", "10", "--status", status, "--node-config", base,
            "--config-dir", L.tmp, "--on-standby",
            f"printf %s \"$ONVM_CONFIG\" > {out}.tmp && mv {out}.tmp {out}"]), status, out)
    lab.wait_until(lambda: set(agents) <= set(c.nodes()), 30, "the agents registered")
    spec = dict(SPEC, nfs=["simple_forward"], config=CHAIN_CONFIG)
    # a config onvm_mgr would refuse is refused at the declaration
    for bad_config, why in ((dict(CHAIN_CONFIG, id=0), "1-65535"),
                            (dict(CHAIN_CONFIG, manager={"node": {}}), "not node"),
                            (dict(CHAIN_CONFIG, services=None), "needs 'services'")):
        rc, out = ctl(ec, "declare", "web", json.dumps(dict(spec, config=bad_config)))
        L.expect(rc == 1 and why in out.get("error", ""), f"declared {bad_config}: {rc} {out}")
    rc, out = ctl(ec, "declare", "web", json.dumps(spec))
    ch = out.get("chain", {})
    L.expect(rc == 0 and ch.get("primary") == "a0" and ch.get("standbys") == ["ag_bad"],
             f"declared: {rc} {out}")
    # onvmctl config: the primary's, and a standby's, at etcd's epoch
    entry = {"name": "web", "id": 7, "chain": "web", "predecessor_port": "from_p", "epoch": 1}
    want = {"node": NODE_BASE["node"], "ports": NODE_BASE["ports"],
            "nfs": CHAIN_CONFIG["nfs"],
            "chains": [{"name": "web", "services": [1], "ingress_port": "from_p",
                        "exit_port": "out"}]}
    rc, out = ctl(ec, "config", "web", "--node", "a0", "--base", good)
    L.expect(rc == 0 and out.get("role") == "primary" and out.get("epoch") == 1 and
             out.get("config") == dict(want, remote={"chains": [dict(
                 entry, role="primary", standby_port="to_m", stages=4)]}),
             f"onvmctl config (the primary's): {rc} {out}")
    rc, out = ctl(ec, "config", "web", "--node", "ag_good", "--base", good, "--role", "standby")
    want_standby = dict(want, remote={"chains": [dict(
        entry, role="standby", primary_port="to_m", window=32, reprotect=True)]})
    L.expect(rc == 0 and out.get("role") == "standby" and out.get("config") == want_standby,
             f"onvmctl config (a standby's): {rc} {out}")
    rc, out = ctl(ec, "config", "web", "--node", "ag_good", "--base", bad, "--role", "standby")
    L.expect(rc == 1 and "no ports for chain 'web'" in out.get("error", ""),
             f"onvmctl config, a node without the chain's ports: {rc} {out}")
    rc, out = ctl(ec, "config", "web", "--node", "n0", "--base", good)
    L.expect(rc == 1 and "no role in chain web" in out.get("error", ""),
             f"onvmctl config, the predecessor: {rc} {out}")
    # the agents: two nodes declining in turn (each replaced, as a
    # predecessor's agent would, by onvmctl reprotect), the third's hook
    # given its configuration
    for name, declined in (("ag_bad", {"ag_bad": 1}),
                           ("ag_check", {"ag_bad": 1, "ag_check": 1})):
        lab.wait_until(lambda: c.chain("web")[1].get("declined") == declined, 30,
                       f"{name} declining")
        rc, out = ctl(ec, "reprotect", "web")
        L.expect(rc == 0 and out.get("chain", {}).get("standbys") ==
                 ["ag_check" if name == "ag_bad" else "ag_good"],
                 f"the next standby after {name}: {rc} {out}")
    hook_out = agents["ag_good"][2]
    lab.wait_until(lambda: os.path.exists(hook_out), 30, "ag_good's hook run")
    with open(hook_out) as f:
        rendered = f.read()
    with open(rendered) as f:
        L.expect(json.load(f) == want_standby, f"ag_good's ONVM_CONFIG ({rendered})")
    L.expect(os.path.basename(rendered) == "ag_good.web.standby.e1.json" and
             os.stat(rendered).st_mode & 0o777 == 0o600, f"ag_good's file: {rendered}")
    roles = c.chain("web")[1]
    L.expect(roles["standbys"] == ["ag_good"], f"the roles after the declines: {roles}")

    def status(name):
        try:
            with open(agents[name][1]) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}
    for name, why in (("ag_bad", "no ports for chain 'web'"),
                      ("ag_check", "startup.nonsense: unknown field")):
        lab.wait_until(lambda: status(name).get("render_failures") == 1, 10,
                       f"{name}'s status written")
        st = status(name)
        L.expect(st.get("standby_starts") == 0 and not os.path.exists(agents[name][2]) and
                 why in st.get("last", ""), f"{name} declined ({why}), ran no hook: {st}")
    L.expect(not [f for f in os.listdir(L.tmp) if f.startswith("ag_check.") or
                  f.endswith(".tmp")], f"files left: {os.listdir(L.tmp)}")
    L.expect(status("ag_good").get("configs_rendered") == 1, f"ag_good: {status('ag_good')}")
    # a hook that hangs is killed at --hook-timeout, and its node declines
    # (it would hold every other chain's hook); for chain "db", placed on
    # b0 (primary) and zz_hang, the nodes of "web" drained
    hang_status, hang_base = L.path("agent-zz_hang.json"), L.path("node-hang.json")
    with open(hang_base, "w") as f:
        json.dump(dict(NODE_BASE, cluster={"chains": {
            "db": NODE_BASE["cluster"]["chains"]["web"]}}), f)
    hang = L.spawn("agent-zz_hang", [
        "/usr/bin/python3", lab.SRC + "/tools/onvm-agent", "--node", "zz_hang",
        "--prefix", "no-manager-zz_hang", "--endpoints", ",".join(ec.endpoints),
        "--ttl", "10", "--status", hang_status, "--node-config", hang_base,
        "--config-dir", L.tmp, "--hook-timeout", "2", "--on-standby", "exec sleep 600"])
    register_all(c, ["b0"], ttl=60)
    lab.wait_until(lambda: "zz_hang" in c.nodes(), 30, "zz_hang registered")
    for node in ("a0", "ag_bad", "ag_check", "ag_good"):
        c.drain(node)
    rc, out = ctl(ec, "declare", "db", json.dumps(dict(spec, config=dict(CHAIN_CONFIG, id=8))))
    L.expect(rc == 0 and out.get("chain", {}).get("standbys") == ["zz_hang"],
             f"db declared on b0 and zz_hang: {rc} {out}")
    lab.wait_until(lambda: c.chain("db")[1].get("declined") == {"zz_hang": 1}, 30,
                   "zz_hang's hung hook killed and declined")

    def hang_st():
        try:
            with open(hang_status) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}
    lab.wait_until(lambda: hang_st().get("hooks_failed") == 1, 10, "zz_hang's status")
    L.expect(hang_st().get("hooks_timed_out") == 1, f"zz_hang: {hang_st()}")
    hang.terminate()
    hang.wait(10)
    for p, _, _ in agents.values():
        p.terminate()
        p.wait(10)
    c.close()
    ec.stop()


def test(L, which):
    etcd_lab.require()
    if which in (None, "roles"):
        roles(L)
    if which in (None, "race"):
        race(L)
    if which in (None, "config"):
        config(L)
    if which in (None, "members"):
        members(L)


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else None
    lab.Lab("cluster" + (f"_{which}" if which else "")).run(lambda L: test(L, which))
