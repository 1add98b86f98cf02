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
                          take over), fenced (past primaries), epoch,
                          primaries (from which epoch each was primary)
  epochs/<chain>          a removed chain's last epoch: declared again, it
                          starts past it
  ready/<chain>/<node>    the node's manager runs the chain as a standby
                          (epoch, run), bound to its lease: it may be
                          made the new standby of a re-protection

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
import uuid

import etcd3
import etcd3.exceptions
import grpc

from onvm import cluster_config

PREFIX = "/reinforce/"
NODE_TTL = 3  # s: a node silent this long is gone (etcd's minimum is ~1.5 s)


class Unavailable(Exception):
    """No member answered with a quorum behind it: nothing was read, and
    nothing this call asked was written."""


class Unknown(Unavailable):
    """A write was sent and no member confirmed or denied it, nor could
    one be read after: it may have been made.  Read again."""


class Conflict(Exception):
    """A role change lost to another made on the same reading, or asked of
    a state that no longer holds (the epoch moved on, no synced standby)."""


class Refused(Exception):
    """etcd refused the request itself (its space quota, a bad argument,
    permissions): a member answered, with the reason."""


def _key(*parts):
    return PREFIX + "/".join(parts)


def _load(raw):
    return json.loads(raw.decode()) if raw is not None else None


def _dump(obj):
    return json.dumps(obj, sort_keys=True)


# No answer from that member (down, or no leader behind it): try the next.
# Any other error is an answer.
_TRANSIENT = (etcd3.exceptions.ConnectionFailedError, etcd3.exceptions.ConnectionTimeoutError)
_ANSWERS = (etcd3.exceptions.Etcd3Exception, grpc.RpcError)
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def _server_timeout(e):
    """An error etcd's member gave because it could not reach a quorum in
    time (status UNKNOWN, "context deadline exceeded", "request timed
    out", a leader lost), which python3-etcd3 0.12 passes on as is."""
    if not isinstance(e, grpc.RpcError) or not hasattr(e, "details"):
        return False
    what = (e.details() or "").lower()
    return any(w in what for w in ("deadline exceeded", "timed out", "leader", "no leader",
                                   "too many requests"))


def check_name(what, name):
    """A node's or chain's name: 1-64 of letters, digits, _ - . (a key's
    last part: no / to reach into another's keys)."""
    if not isinstance(name, str) or not 1 <= len(name) <= 64 or set(name) - NAME_CHARS:
        raise ValueError(f"{what} name {name!r}: 1-64 letters, digits, '_', '-', '.'")


# What an operator may ask a node's agent to run on its manager (onvmctl
# move, scale): flows moved or instances scaled, nothing else.
REQUEST_CMDS = ("/onvm/move", "/onvm/scale")
RESULT_TTL = 300  # s: a request's result kept this long
REQUEST_EXPIRES = 30  # s: a request not taken by then is answered expired, not run


def check_request(cmd, params):
    """A request's command and parameters: one of REQUEST_CMDS, parameters
    of letters, digits and . , : - (no other command reachable)."""
    if cmd not in REQUEST_CMDS:
        raise ValueError(f"command {cmd!r}: one of {', '.join(REQUEST_CMDS)}")
    if not isinstance(params, str) or not 1 <= len(params) <= 120 or \
            set(params) - set("abcdefghijklmnopqrstuvwxyz0123456789.,:-"):
        raise ValueError(f"parameters {params!r}: 1-120 of a-z 0-9 . , : -")


def parse_endpoint(e):
    host, sep, port = e.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"etcd endpoint {e!r}: HOST:PORT")
    return host, int(port)


class Cluster:
    def __init__(self, endpoints, timeout=1.0):
        """`endpoints`: "host:port" of etcd's members (client URLs)."""
        if not endpoints:
            raise ValueError("no etcd endpoint")
        for e in endpoints:
            parse_endpoint(e)
        self.endpoints = list(endpoints)
        self.timeout = timeout
        self._cur = 0
        self._client = None
        self.timed_out = False  # the last call: an attempt timed out

    # ---- the connection -------------------------------------------------

    def _connect(self, i):
        host, port = parse_endpoint(self.endpoints[i])
        return etcd3.client(host=host, port=port, timeout=self.timeout)

    def call(self, fn):
        """fn(client), on the member that answered last, then on each of the
        others in turn; Unavailable when none answered, Refused when one
        did with an error.  A write fn may have been made by a member that
        did not answer in time: callers that write check (_written)."""
        errors = []
        first = self._cur
        self.timed_out = False
        for k in range(len(self.endpoints)):
            i = (first + k) % len(self.endpoints)
            try:
                if self._client is None or i != self._cur:
                    self._close()
                    self._client = self._connect(i)
                    self._cur = i
                return fn(self._client)
            except _TRANSIENT as e:
                # (no connection: not sent; a time-out: sent, maybe taken)
                self.timed_out |= isinstance(e, etcd3.exceptions.ConnectionTimeoutError)
                errors.append(f"{self.endpoints[i]}: {type(e).__name__}")
                self._close()
            except _ANSWERS as e:
                if not _server_timeout(e):
                    raise Refused(f"etcd at {self.endpoints[i]}: {e}") from e
                # the member took it and gave up waiting for a quorum
                # (a leader lost): not an answer -- and maybe applied
                self.timed_out = True
                errors.append(f"{self.endpoints[i]}: {e.details()}")
                self._close()
        raise Unavailable("no etcd member answered: " + "; ".join(errors))

    def _txn(self, do, made):
        """A write transaction do(client) -> committed?, whose outcome a
        lost answer must not hide.  A member that timed out may have passed
        it to the leader, and the next member then answers "no" to a
        compare the first attempt already changed: whenever an attempt
        timed out, made() reads back whether this very change is there.
        Not there, it may still be on its way: Unknown.  No attempt sent
        (no connection to any member): Unavailable, nothing written."""
        try:
            ok = self.call(do)
        except Unavailable as e:
            if not self.timed_out:
                raise
            try:
                if made():
                    return True
            except Unavailable:
                pass
            raise Unknown(f"{e}; the change may have been made: read again") from e
        if ok or not self.timed_out:
            return ok
        try:
            return made()
        except Unavailable as e:
            raise Unknown(f"{e}; the change may have been made: read again") from e

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
        check_name("node", node)

        def do(c):
            lease = c.lease(ttl)
            c.put(_key("nodes", node), _dump(dict(info, name=node, registered=time.time())),
                  lease=lease)
            return lease
        return self.call(do)

    def update_registration(self, node, info, lease):
        """The node's registration rewritten under its current lease (what
        it registered changed: its manager's ports came up, say)."""
        check_name("node", node)
        self.call(lambda c: c.put(_key("nodes", node), _dump(dict(
            info, name=node, registered=time.time())), lease=lease))

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
        check_name("node", node)

        def do(c):
            if on:
                c.put(_key("drain", node), _dump({"since": time.time()}))
            else:
                c.delete(_key("drain", node))
        self.call(do)

    def mark_ready(self, name, node, epoch, run, lease):
        """`node`'s manager runs chain `name` as a standby at `epoch` (its
        manager's run `run`): the predecessor may make the node that runs
        the chain its primary again with it as the new standby
        (re-protection).  Under the node's lease: gone with the node."""
        def do(c):
            c.put(_key("ready", name, node), _dump({"epoch": epoch, "run": run,
                                                    "since": time.time()}), lease=lease)
        self.call(do)

    def unmark_ready(self, name, node):
        """`node`'s manager no longer runs chain `name` as a standby."""
        self.call(lambda c: c.delete(_key("ready", name, node)))

    def ready(self, name):
        """{node: {"epoch", "run", "since"}} of chain `name`'s standbys
        whose managers run it (mark_ready)."""
        def do(c):
            return {meta.key.decode().rsplit("/", 1)[1]: _load(raw)
                    for raw, meta in c.get_prefix(_key("ready", name, ""))}
        return self.call(do)

    # ---- operator requests a node's agent carries out --------------------

    def request(self, node, cmd, params, expires=REQUEST_EXPIRES):
        """Ask `node`'s agent to run telemetry command `cmd` (one of
        REQUEST_CMDS) with `params` on its manager, once; returns the
        request's id (answer() writes its result, result() reads it)."""
        check_name("node", node)
        check_request(cmd, params)
        rid = uuid.uuid4().hex
        key = _key("requests", node, rid)
        now = time.time()
        # (an agent down, or onvmctl gone, must not run it an hour later)
        val = _dump({"cmd": cmd, "params": params, "at": now, "expires": now + expires,
                     "taken": False})

        def do(c):
            c.put(key, val)
            return True
        # (an answer lost after etcd took it: read back, so a retry by the
        # operator is not a second request -- Unknown if that fails too)
        self._txn(do, lambda: self.call(lambda c: c.get(key))[0] is not None or
                  self.result(node, rid) is not None)
        return rid

    def requests(self, node):
        """{id: (request, mod revision)} of the requests waiting for `node`;
        a value that is not a JSON object (anyone may write etcd) is given
        as None."""
        def load(raw):
            try:
                v = _load(raw)
            except (ValueError, RecursionError):  # (not UTF-8, not JSON, too deep)
                return None
            return v if isinstance(v, dict) else None

        prefix = _key("requests", node, "").encode()

        def do(c):
            out = {}
            for raw, meta in c.get_prefix(prefix.decode()):
                rid = meta.key[len(prefix):].decode(errors="replace")
                if set(rid) - NAME_CHARS or not 1 <= len(rid) <= 64:
                    # (a key no request has: removed as it is)
                    c.delete(meta.key)
                    continue
                out[rid] = (load(raw), meta.mod_revision)
            return out
        return self.call(do)

    def take(self, node, rid, req, rev):
        """Mark a request taken before it is run (at most once: a request
        found taken again, after an agent's restart, is answered as
        unknown, never run twice).  False if it changed or went."""
        key = _key("requests", node, rid)
        taken = _dump(dict(req, taken=True))

        def do(c):
            ok, _ = c.transaction(compare=[c.transactions.mod(key) == rev],
                                  success=[c.transactions.put(key, taken)], failure=[])
            return ok
        return self._txn(do, lambda: (self.call(lambda c: c.get(key))[0] or b"") ==
                         taken.encode())

    def answer(self, node, rid, result, ttl=RESULT_TTL):
        """A request's result, written once, and the request removed, in one
        transaction; the result kept `ttl` seconds."""
        key, out = _key("requests", node, rid), _key("results", node, rid)

        def do(c):
            lease = c.lease(ttl)
            ok, _ = c.transaction(compare=[c.transactions.version(key) > 0],
                                  success=[c.transactions.put(out, _dump(result), lease=lease),
                                           c.transactions.delete(key)], failure=[])
            return ok
        return self._txn(do, lambda: self.result(node, rid) is not None)

    def result(self, node, rid):
        """A request's result, or None (not answered yet)."""
        return _load(self.call(lambda c: c.get(_key("results", node, rid)))[0])

    def withdraw(self, node, rid):
        """Remove a request no agent took yet; True if it was withdrawn."""
        key = _key("requests", node, rid)

        def do(c):
            raw, meta = c.get(key)
            req = _load(raw)
            if req is None or req.get("taken"):
                return False
            ok, _ = c.transaction(compare=[c.transactions.mod(key) == meta.mod_revision],
                                  success=[c.transactions.delete(key)], failure=[])
            return ok
        return self._txn(do, lambda: self.call(lambda c: c.get(key))[0] is None and
                         self.result(node, rid) is None)

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
        """(spec, roles, revision) of one chain, or (None, None, 0): one
        range read, so spec and roles are of one moment."""
        def do(c):
            got = {meta.key.decode().rsplit("/", 1)[1]: (raw, meta)
                   for raw, meta in c.get_prefix(_key("chains", name, ""))}
            spec, roles = got.get("spec"), got.get("roles")
            return (_load(spec[0]) if spec else None, _load(roles[0]) if roles else None,
                    roles[1].mod_revision if roles else 0)
        return self.call(do)

    def declare(self, name, spec):
        """Declare a chain once and place it: a primary and `standbys`
        standbys among the live nodes with room, none drained nor the
        predecessor.  Its epoch starts past any a chain of that name had
        before (kept when it was removed): epochs never go back.  Returns
        its roles; Conflict if it exists, or if too few nodes can take it.
        (Placement reads the nodes and other chains outside the write:
        two chains declared at once may both count a node's room.)"""
        check_name("chain", name)
        check_spec(spec, name)
        nodes = self.nodes()
        chains = self.chains()
        if name in chains:
            raise Conflict(f"chain {name} exists")
        if spec["predecessor"] not in nodes:
            raise Conflict(f"chain {name}: predecessor {spec['predecessor']} is not registered")
        picked = place(nodes, chains, spec, exclude={spec["predecessor"]},
                       count=1 + spec["standbys"], name=name)
        if len(picked) < 1 + spec["standbys"]:
            raise Conflict(f"chain {name}: {len(picked)} node(s) with room, "
                           f"{1 + spec['standbys']} wanted")
        last_key = _key("epochs", name)
        raw, meta = self.call(lambda c: c.get(last_key))
        last = _load(raw) or 0
        roles = with_segments({
            "epoch": last + 1, "predecessor": spec["predecessor"], "primary": picked[0],
            "standbys": picked[1:], "synced": [], "fenced": [],
            "primaries": [[last + 1, picked[0]]], "changed": time.time(),
            "why": "declared", "change_id": uuid.uuid4().hex}, nodes)

        def do(c):
            ok, _ = c.transaction(
                compare=[c.transactions.version(_key("chains", name, "spec")) == 0,
                         c.transactions.mod(last_key) ==
                         (meta.mod_revision if meta is not None else 0)],
                success=[c.transactions.put(_key("chains", name, "spec"), _dump(spec)),
                         c.transactions.put(_key("chains", name, "roles"), _dump(roles))],
                failure=[])
            return ok
        if not self._txn(do, lambda: self._is_change(name, roles["change_id"])):
            raise Conflict(f"chain {name} exists, or was removed meanwhile")
        return roles

    def _is_change(self, name, change_id):
        return (self.chain(name)[1] or {}).get("change_id") == change_id

    def remove(self, name):
        """Remove a chain, keeping its last epoch (a chain declared again
        under that name starts past it).  Conflict if there is none, or it
        changed while being removed."""
        check_name("chain", name)
        _, roles, rev = self.chain(name)
        if roles is None:
            raise Conflict(f"no chain {name}")

        def do(c):
            ok, _ = c.transaction(
                compare=[c.transactions.mod(_key("chains", name, "roles")) == rev],
                success=[c.transactions.delete(_key("chains", name, "spec")),
                         c.transactions.delete(_key("chains", name, "roles")),
                         c.transactions.put(_key("epochs", name), _dump(roles["epoch"]))],
                failure=[])
            return ok
        if not self._txn(do, lambda: self.chain(name)[1] is None):
            raise Conflict(f"chain {name} changed while being removed")

    def change_roles(self, name, fn, why):
        """One role change: fn(spec, roles) returns the new roles (epoch and
        all) from a reading, written only if the roles are still that
        reading's.  Returns the roles written; Conflict if another change
        came between (the caller reads again and decides again) or fn
        refused; Unknown if etcd went silent after it was sent."""
        spec, roles, rev = self.chain(name)
        if roles is None:
            raise Conflict(f"no chain {name}")
        new = fn(spec, dict(roles))
        if new["epoch"] < roles["epoch"]:
            raise AssertionError("an epoch never goes back")
        new = dict(new, changed=time.time(), why=why, change_id=uuid.uuid4().hex)
        key = _key("chains", name, "roles")

        def do(c):
            ok, _ = c.transaction(compare=[c.transactions.mod(key) == rev],
                                  success=[c.transactions.put(key, _dump(new))], failure=[])
            return ok
        if not self._txn(do, lambda: self._is_change(name, new["change_id"])):
            raise Conflict(f"chain {name}: the roles changed since revision {rev}")
        return new

    def promote(self, name, epoch, why):
        """The failover: the first live synced standby becomes primary at
        epoch + 1, the primary is fenced.  `epoch` is the one the caller
        saw fail: a promotion for an epoch already left is a Conflict, so
        two requests for one failure make one promotion."""
        nodes = self.nodes()
        return self.change_roles(name, lambda spec, roles: with_segments(
            promoted(name, roles, epoch, set(nodes)), nodes), why)

    def add_standby(self, name, why="reprotect", among=None, most=None):
        """A standby for a chain that has fewer live ones than its spec
        wants (and than `most`, if given): a live node with room, not
        drained, holding no role in the chain (standbys whose node is gone
        are dropped first), not one that declined at this epoch, and in
        `among` if given (the nodes the predecessor's standby link
        reaches).  A fenced node may be picked, last (it comes back as a
        standby, never as primary).  Returns the roles written, or None if
        none is wanted or none fits."""
        nodes = self.nodes()
        chains = self.chains()

        def fn(spec, roles):
            standbys = [s for s in roles["standbys"] if s in nodes]
            if len(standbys) >= (spec["standbys"] if most is None else
                                 min(spec["standbys"], most)):
                raise _Nothing()
            busy = {roles["predecessor"], roles["primary"], *standbys,
                    *(n for n, e in roles.get("declined", {}).items() if e == roles["epoch"])}
            if among is not None:
                busy |= set(nodes) - set(among)
            fit = place(nodes, chains, spec, exclude=busy, count=len(nodes),
                        last=set(roles["fenced"]), name=name)
            picked = fit[:1]
            if not picked:
                raise _Nothing()
            return with_segments(dict(roles, standbys=standbys + picked,
                                      synced=[s for s in roles["synced"] if s in standbys],
                                      fenced=[f for f in roles["fenced"] if f != picked[0]]),
                                 nodes)
        try:
            return self.change_roles(name, fn, why)
        except _Nothing:
            return None

    def decline_standby(self, name, node, epoch, why):
        """`node`, placed a standby of the chain at `epoch`, cannot be one
        (its node's service manager failed to start it): no standby any
        more, and not placed again at that epoch (`declined`).  None if it
        is not one, or the chain left that epoch."""
        def fn(spec, roles):
            if node not in roles["standbys"] or roles["epoch"] != epoch:
                raise _Nothing()
            declined = {n: e for n, e in roles.get("declined", {}).items() if e == epoch}
            return dict(roles, standbys=[s for s in roles["standbys"] if s != node],
                        synced=[s for s in roles["synced"] if s != node],
                        declined=dict(declined, **{node: epoch}))
        try:
            return self.change_roles(name, fn, why)
        except _Nothing:
            return None

    def unmark_synced(self, name, node):
        """`node` no longer holds a whole copy (its manager restarted): it
        may not be promoted until it syncs again.  None if it was not
        synced there."""
        def fn(spec, roles):
            if node not in roles["synced"]:
                raise _Nothing()
            return dict(roles, synced=[s for s in roles["synced"] if s != node])
        try:
            return self.change_roles(name, fn, "not synced")
        except _Nothing:
            return None

    def mark_synced(self, name, node, epoch):
        """`node`, a standby of the chain at `epoch`, holds a whole copy of
        that epoch's primary: it may take over.  Conflict if it is no
        longer a standby there."""
        def fn(spec, roles):
            if roles["epoch"] != epoch or node not in roles["standbys"]:
                raise Conflict(f"chain {name}: {node} is not a standby at epoch {epoch}")
            return dict(roles, synced=sorted(set(roles["synced"]) | {node}))
        return self.change_roles(name, fn, "synced")


class _Nothing(Exception):
    pass


def promoted(name, roles, epoch, live=None):
    """The roles after the failover of `name` at `epoch`: its first synced
    standby primary at epoch + 1 -- one that is `live` (registered), if
    given, before one whose lease lapsed -- the primary fenced.  (A
    standby whose agent is down or cut off from etcd may still run and
    hold a whole copy: promoting it costs nothing if it is dead -- the
    data plane's takeover is given up and asked again -- while refusing
    would leave the chain on a dead primary.)  The other standbys synced
    to the old primary, not to this one: none is synced any more.
    Conflict if the chain left that epoch or has no synced standby."""
    if roles["epoch"] != epoch:
        raise Conflict(f"chain {name}: at epoch {roles['epoch']}, not {epoch}")
    ready = sorted(roles["synced"], key=lambda s: live is not None and s not in live)
    if not ready:
        raise Conflict(f"chain {name}: no synced standby to promote")
    new = ready[0]
    past = roles.get("primaries") or [[roles["epoch"], roles["primary"]]]
    return dict(roles, epoch=epoch + 1, primary=new,
                standbys=[s for s in roles["standbys"] if s != new], synced=[],
                fenced=sorted(set(roles["fenced"]) | {roles["primary"]}),
                primaries=(past + [[epoch + 1, new]])[-PRIMARIES_KEPT:])


PRIMARIES_KEPT = 16  # the roles' history of primaries: its last entries


def previous_primary(roles):
    """The node that was primary before the current one (None: none was),
    by the roles' history."""
    before = [node for e, node in sorted(roles.get("primaries", []))
              if node != roles["primary"]]
    return before[-1] if before else None


def with_segments(roles, nodes):
    """`roles` with the network segment of its primary and standbys
    recorded (as their nodes registered it): which side of the
    predecessor a node was on is known after its registration lapsed."""
    seg = dict(roles.get("segments", {}))
    for n in [roles["primary"], *roles["standbys"]]:
        if nodes.get(n, {}).get("segment"):
            seg[n] = nodes[n]["segment"]
    return dict(roles, segments=seg) if seg else roles


def standby_reach(nodes, roles):
    """The live nodes a predecessor's standby link reaches once a
    re-protection swapped its sides: the old primary's link.  If the
    previous primary's network segment is known (registered, or recorded
    in the roles), every node registered on that segment -- a spare
    there, and the previous primary's node; else only that node."""
    prev = previous_primary(roles)
    if prev is None:
        return set()
    seg = nodes.get(prev, {}).get("segment") or roles.get("segments", {}).get(prev)
    if not seg:
        return {prev}
    return {n for n, info in nodes.items() if info.get("segment") == seg and
            n not in (roles["predecessor"], roles["primary"])}


def placement_mismatch(node, dp, roles):
    """What is wrong, if anything, with `node`'s manager running a chain
    as `dp` says (its /onvm/remote/brief entry: role, state, epoch) when
    etcd's roles are `roles` -- the nodes' configurations come from their
    JSON, which must match what the cluster placed.  None when they agree,
    or when they cannot be compared yet (a failover or re-protection under
    way: the data plane at another epoch than etcd's)."""
    if roles is None or not isinstance(dp, dict) or dp.get("role") not in ("primary",
                                                                          "standby"):
        return None
    epoch, state = dp.get("epoch"), dp.get("state")
    if not isinstance(epoch, int) or epoch > roles["epoch"]:
        return None  # (ahead of etcd: a failover by the node itself, say)
    runs = (dp["role"] == "primary" and state != "fenced") or state in ("replaying", "active")
    named = primary_at(roles, epoch)
    if runs and named != node:
        return f"runs the chain at epoch {epoch}, where etcd's primary is {named}"
    if dp["role"] == "standby" and state == "standby" and epoch == roles["epoch"]:
        if named == node:
            return f"a parked standby at epoch {epoch}, where etcd names it primary"
        if node not in roles["standbys"]:
            return f"a standby at epoch {epoch}, which etcd's roles do not name"
    return None


def primary_at(roles, epoch):
    """The node that was the chain's primary at `epoch` -- the one a data
    plane still at that epoch runs: the last promotion at or before it,
    else the first primary the history names (a chain declared again
    starts past the epoch its nodes were configured with, same primary)."""
    past = roles.get("primaries") or [[roles["epoch"], roles["primary"]]]
    at = [p for e, p in past if e <= epoch]
    return at[-1] if at else past[0][1]


SCHEMES = ("remote",)
MAX_STANDBYS = {"remote": 1}  # standbys a chain of each scheme may have


def check_spec(spec, name="the chain"):
    """A chain's spec: {"nfs": [...], "scheme": "remote", "predecessor":
    node, "standbys": n[, "config": the chain's part of its nodes'
    configurations (onvm.cluster_config)]}; ValueError naming what is
    wrong."""
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
    # (one standby link per chain on the predecessor, and the data plane
    # fails over to the standby it is wired to: a second standby in etcd
    # could be promoted while the other one takes over)
    if not isinstance(spec["standbys"], int) or isinstance(spec["standbys"], bool) or \
            not 0 <= spec["standbys"] <= MAX_STANDBYS[spec["scheme"]]:
        raise ValueError(f"'standbys' is 0..{MAX_STANDBYS[spec['scheme']]} for scheme "
                         f"{spec['scheme']}")
    if not isinstance(spec["predecessor"], str) or not spec["predecessor"]:
        raise ValueError("'predecessor' names a node")
    if "config" in spec:  # (RenderError is a ValueError)
        cluster_config.check_config(name, spec)


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


def place(nodes, chains, spec, exclude, count, last=frozenset(), name=None):
    """Up to `count` nodes for the chain `name`'s primary or standbys, the
    least loaded first, those in `last` (the chain's fenced past primaries)
    after the others as loaded, then by name, so every caller picks alike:
    registered, not drained, not in `exclude`, with room for its NFs
    (`capacity` NFs per node; absent: no bound), and hosting that chain
    (a node's `hosts`, the chains it may host; absent: any)."""
    used = load(nodes, chains)
    fit = [n for n, info in nodes.items()
           if n not in exclude and not info.get("drained") and
           used[n] + len(spec["nfs"]) <= info.get("capacity", 1 << 30) and
           (info.get("hosts") is None or name in info["hosts"])]
    return sorted(fit, key=lambda n: (used[n], n in last, n))[:count]
