# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.cluster -- the cluster's state in etcd (docs/design/cluster.md).

Everything the control plane knows lives under one prefix, as JSON:

  nodes/<node>            a node's registration, bound to its lease: gone
                          TTL seconds after its agent stopped renewing it
  drain/<node>            the operator drained it: given no new role
  chains/<chain>/spec     the chain as declared: NFs, scheme, predecessor,
                          standbys wanted
  chains/<chain>/roles    who does what, and the epoch: predecessor,
                          primary, standbys, synced (the standbys that may
                          take over), fenced (past primaries), epoch

A chain's roles change only by a transaction that compares the roles' mod
revision with the one the change was computed from: of two actors acting on
one reading (two predecessors, an operator and BFD, a node coming back), one
commits and the other is told it lost and reads again.  Epochs only grow,
and the epoch the data plane fences with is the one such a transaction
wrote.  Nothing here is on the data path: an agent calls it on a role
change, never per packet.

The client is python3-etcd3 (0.12, Debian's), which talks to one endpoint:
`Cluster` keeps the members' endpoints and moves to the next when one does
not answer, so a member lost costs one time-out.  No quorum: every call
raises `Unavailable` -- reads too (they are linearizable), so nothing acts
on a state a partition may have changed.
"""
import json
import time

import etcd3
import etcd3.exceptions
import grpc

PREFIX = "/reinforce/"
NODE_TTL = 3  # s: a node silent this long is gone (etcd's minimum is ~1.5 s)


class Unavailable(Exception):
    """No member answered with a quorum behind it."""


class Conflict(Exception):
    """A role change lost to another made on the same reading, or asked of
    a state that no longer holds (the epoch moved on, no synced standby)."""


def _key(*parts):
    return PREFIX + "/".join(parts)


def _load(raw):
    return json.loads(raw.decode()) if raw is not None else None


def _dump(obj):
    return json.dumps(obj, sort_keys=True)


_TRANSIENT = (etcd3.exceptions.ConnectionFailedError, etcd3.exceptions.ConnectionTimeoutError,
              etcd3.exceptions.InternalServerError, grpc.RpcError)


class Cluster:
    def __init__(self, endpoints, timeout=1.0):
        """`endpoints`: "host:port" of etcd's members (client URLs)."""
        if not endpoints:
            raise ValueError("no etcd endpoint")
        self.endpoints = list(endpoints)
        self.timeout = timeout
        self._cur = 0
        self._client = None

    # ---- the connection -------------------------------------------------

    def _connect(self, i):
        host, port = self.endpoints[i].rsplit(":", 1)
        return etcd3.client(host=host, port=int(port), timeout=self.timeout)

    def call(self, fn):
        """fn(client), on the member that answered last, then on each of the
        others; Unavailable when none did."""
        errors = []
        for k in range(len(self.endpoints)):
            i = (self._cur + k) % len(self.endpoints)
            try:
                if self._client is None or i != self._cur:
                    self._close()
                    self._client = self._connect(i)
                    self._cur = i
                return fn(self._client)
            except _TRANSIENT as e:
                errors.append(f"{self.endpoints[i]}: {type(e).__name__}")
                self._close()
        raise Unavailable("no etcd member answered: " + "; ".join(errors))

    def _close(self):
        if self._client is not None:
            try:
                self._client.close()
            except Exception:
                pass
            self._client = None

    def close(self):
        self._close()

    def members(self):
        """[(name, [client URLs])] of the etcd cluster."""
        return self.call(lambda c: [(m.name, list(m.client_urls)) for m in c.members])

    # ---- nodes --------------------------------------------------------

    def register(self, node, info, ttl=NODE_TTL):
        """The node's registration under a new lease; returns the lease,
        which the node's agent refreshes more often than `ttl`."""
        def do(c):
            lease = c.lease(ttl)
            c.put(_key("nodes", node), _dump(dict(info, name=node, registered=time.time())),
                  lease=lease)
            return lease
        return self.call(do)

    def refresh(self, lease):
        """Renew `lease`; False when it had expired (the node must register
        again, and may hold no role meanwhile)."""
        def do(c):
            resp = list(c.refresh_lease(lease.id))
            return bool(resp) and resp[0].TTL > 0
        return self.call(do)

    def nodes(self):
        """{node: info} of the registered nodes (their leases alive), with
        `drained` set for those the operator drained."""
        def do(c):
            out = {}
            for raw, meta in c.get_prefix(_key("nodes", "")):
                info = _load(raw)
                out[info["name"]] = info
            drained = {meta.key.decode()[len(_key("drain", "")):]
                       for _, meta in c.get_prefix(_key("drain", ""))}
            for name in out:
                out[name]["drained"] = name in drained
            return out
        return self.call(do)

    def drain(self, node, on=True):
        def do(c):
            if on:
                c.put(_key("drain", node), _dump({"since": time.time()}))
            else:
                c.delete(_key("drain", node))
        self.call(do)

    # ---- chains -------------------------------------------------------

    def chains(self):
        """{chain: {"spec": ..., "roles": ..., "revision": mod revision of
        the roles}}."""
        def do(c):
            out = {}
            for raw, meta in c.get_prefix(_key("chains", "")):
                name, what = meta.key.decode()[len(_key("chains", "")):].rsplit("/", 1)
                e = out.setdefault(name, {})
                e[what] = _load(raw)
                if what == "roles":
                    e["revision"] = meta.mod_revision
            return out
        return self.call(do)

    def chain(self, name):
        """(spec, roles, revision) of one chain, or (None, None, 0)."""
        def do(c):
            spec, _ = c.get(_key("chains", name, "spec"))
            roles, meta = c.get(_key("chains", name, "roles"))
            return _load(spec), _load(roles), meta.mod_revision if meta is not None else 0
        return self.call(do)

    def declare(self, name, spec):
        """Declare a chain once and place it: a primary and `standbys`
        standbys among the live nodes with room, none drained nor the
        predecessor.  Returns its roles; Conflict if it exists, or if too
        few nodes can take it."""
        check_spec(spec)
        nodes = self.nodes()
        chains = self.chains()
        if name in chains:
            raise Conflict(f"chain {name} exists")
        if spec["predecessor"] not in nodes:
            raise Conflict(f"chain {name}: predecessor {spec['predecessor']} is not registered")
        picked = place(nodes, chains, spec, exclude={spec["predecessor"]},
                       count=1 + spec["standbys"])
        if len(picked) < 1 + spec["standbys"]:
            raise Conflict(f"chain {name}: {len(picked)} node(s) with room, "
                           f"{1 + spec['standbys']} wanted")
        roles = {"epoch": 1, "predecessor": spec["predecessor"], "primary": picked[0],
                 "standbys": picked[1:], "synced": [], "fenced": [], "changed": time.time(),
                 "why": "declared"}

        def do(c):
            ok, _ = c.transaction(
                compare=[c.transactions.version(_key("chains", name, "spec")) == 0],
                success=[c.transactions.put(_key("chains", name, "spec"), _dump(spec)),
                         c.transactions.put(_key("chains", name, "roles"), _dump(roles))],
                failure=[])
            return ok
        if not self.call(do):
            raise Conflict(f"chain {name} exists")
        return roles

    def remove(self, name):
        """Remove a chain; False if there was none."""
        return self.call(lambda c: c.delete_prefix(_key("chains", name, "")).deleted > 0)

    def change_roles(self, name, fn, why):
        """One role change: fn(spec, roles) returns the new roles (epoch and
        all) from a reading, written only if the roles are still that
        reading's.  Returns the roles written; Conflict if another change
        came between (the caller reads again and decides again) or fn
        refused."""
        spec, roles, rev = self.chain(name)
        if roles is None:
            raise Conflict(f"no chain {name}")
        new = fn(spec, dict(roles))
        if new["epoch"] < roles["epoch"]:
            raise AssertionError("an epoch never goes back")
        new = dict(new, changed=time.time(), why=why)
        key = _key("chains", name, "roles")

        def do(c):
            ok, _ = c.transaction(compare=[c.transactions.mod(key) == rev],
                                  success=[c.transactions.put(key, _dump(new))], failure=[])
            return ok
        if not self.call(do):
            raise Conflict(f"chain {name}: the roles changed since revision {rev}")
        return new

    def promote(self, name, epoch, why):
        """The failover: the first synced standby becomes primary at epoch
        + 1, the primary is fenced.  `epoch` is the one the caller saw
        fail: a promotion for an epoch already left is a Conflict, so two
        requests for one failure make one promotion."""
        return self.change_roles(name, lambda spec, roles: promoted(name, roles, epoch), why)

    def add_standby(self, name, why="reprotect"):
        """A standby for a chain that has fewer than its spec wants: a live
        node with room, not drained, holding no role in the chain.  A fenced
        node may be picked (it comes back as a standby, never as primary).
        Returns the roles written, or None if none is wanted or none fits."""
        nodes = self.nodes()
        chains = self.chains()

        def fn(spec, roles):
            if len(roles["standbys"]) >= spec["standbys"]:
                raise _Nothing()
            busy = {roles["predecessor"], roles["primary"], *roles["standbys"]}
            picked = place(nodes, chains, spec, exclude=busy, count=1,
                           last=set(roles["fenced"]))
            if not picked:
                raise _Nothing()
            return dict(roles, standbys=roles["standbys"] + picked,
                        fenced=[f for f in roles["fenced"] if f != picked[0]])
        try:
            return self.change_roles(name, fn, why)
        except _Nothing:
            return None

    def mark_synced(self, name, node, epoch):
        """`node`, a standby of the chain at `epoch`, holds a whole copy:
        it may take over.  Conflict if it is no longer a standby there."""
        def fn(spec, roles):
            if roles["epoch"] != epoch or node not in roles["standbys"]:
                raise Conflict(f"chain {name}: {node} is not a standby at epoch {epoch}")
            return dict(roles, synced=sorted(set(roles["synced"]) | {node}))
        return self.change_roles(name, fn, "synced")


class _Nothing(Exception):
    pass


def promoted(name, roles, epoch):
    """The roles after the failover of `name` at `epoch`: its first synced
    standby primary at epoch + 1, the primary fenced; Conflict if the
    chain left that epoch or has no synced standby."""
    if roles["epoch"] != epoch:
        raise Conflict(f"chain {name}: at epoch {roles['epoch']}, not {epoch}")
    if not roles["synced"]:
        raise Conflict(f"chain {name}: no synced standby to promote")
    new = roles["synced"][0]
    return dict(roles, epoch=epoch + 1, primary=new,
                standbys=[s for s in roles["standbys"] if s != new],
                synced=[s for s in roles["synced"] if s != new],
                fenced=sorted(set(roles["fenced"]) | {roles["primary"]}))


SCHEMES = ("remote",)


def check_spec(spec):
    """A chain's spec: {"nfs": [...], "scheme": "remote", "predecessor":
    node, "standbys": n}; ValueError naming what is wrong."""
    if not isinstance(spec, dict):
        raise ValueError("a chain's spec is an object")
    for k in ("nfs", "scheme", "predecessor", "standbys"):
        if k not in spec:
            raise ValueError(f"a chain's spec needs '{k}'")
    extra = set(spec) - {"nfs", "scheme", "predecessor", "standbys", "config"}
    if extra:
        raise ValueError(f"unknown key(s) in a chain's spec: {', '.join(sorted(extra))}")
    if spec["scheme"] not in SCHEMES:
        raise ValueError(f"scheme {spec['scheme']!r}: one of {', '.join(SCHEMES)}")
    if not isinstance(spec["nfs"], list) or not spec["nfs"]:
        raise ValueError("'nfs' is a non-empty list")
    if not isinstance(spec["standbys"], int) or not 0 <= spec["standbys"] <= 8:
        raise ValueError("'standbys' is 0..8")
    if not isinstance(spec["predecessor"], str) or not spec["predecessor"]:
        raise ValueError("'predecessor' names a node")


def load(nodes, chains):
    """{node: NFs it runs or stands by for}, over every chain's roles."""
    out = {n: 0 for n in nodes}
    for e in chains.values():
        roles, spec = e.get("roles"), e.get("spec")
        if not roles or not spec:
            continue
        for n in [roles["primary"], *roles["standbys"]]:
            if n in out:
                out[n] += len(spec["nfs"])
    return out


def place(nodes, chains, spec, exclude, count, last=frozenset()):
    """Up to `count` nodes for the chain's primary or standbys, the least
    loaded first, those in `last` (the chain's fenced past primaries) after
    the others as loaded, then by name, so every caller picks alike:
    registered, not drained, not in `exclude`, with room for its NFs
    (`capacity` NFs per node; absent: no bound)."""
    used = load(nodes, chains)
    fit = [n for n, info in nodes.items()
           if n not in exclude and not info.get("drained") and
           used[n] + len(spec["nfs"]) <= info.get("capacity", 1 << 30)]
    return sorted(fit, key=lambda n: (used[n], n in last, n))[:count]
