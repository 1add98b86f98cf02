# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.shared -- shared state across NF instances, the agent's part
(docs/design/elastic.md; the manager's is onvm_mgr/elastic/shared.c).

Each round the node's agent takes the manager's batch of adds
(/onvm/shared/take: per key the sum of the deltas the node's NFs added,
under a batch id of the manager's run), applies it to etcd in ONE
transaction -- every key's value compared by mod revision and put as the
old value plus the delta, and the batch id recorded under the node and
the manager's run -- and hands etcd's values back (/onvm/shared/commit).
A conflict (another node's batch in between) is read again and retried;
a batch whose id etcd already holds is not applied again (the agent or
its answer was lost after the commit), so no add counts twice however
often a batch is offered; an answer lost with the outcome unknown reads
the id back (cluster.Cluster._txn).  Values are read back every round
anyway, so a node sees the others' adds within a round.
"""
import time

from onvm import cluster

VALUE = cluster.PREFIX + "shared/value/"      # <key>: the counter, decimal text
APPLIED = cluster.PREFIX + "shared/applied/"  # <node>/<run>: the last batch applied
KEYS = 16  # ONVM_SHARED_KEYS
VALUES_S = 0.1  # values refreshed this often without a batch, while in use
IDLE_S = 5.0    # ... and while the node uses none
TRIES = 20  # conflicts in a row before a round gives up (the batch waits)


INT64 = (-(1 << 63), (1 << 63) - 1)


def to_int(v):
    """An etcd value as a counter (a signed 64-bit integer), or None."""
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n if INT64[0] <= n <= INT64[1] else None


def value_key(k):
    return f"{VALUE}{k}"


def applied_key(node, run):
    return f"{APPLIED}{node}/{run}"


class SharedSync:
    def __init__(self, c, tel, node):
        self.c, self.tel, self.node = c, tel, node
        self.active = False   # the node's NFs use shared state (or etcd holds some)
        self.values_at = 0.0  # when the values are read next without a batch
        self.st = {"shared_batches": 0, "shared_ops": 0, "shared_delta": 0,
                   "shared_conflicts": 0, "shared_already": 0, "shared_given_up": 0}

    def _applied(self, client, ak):
        v, _ = client.get(ak)
        return int(v) if v is not None else 0

    def apply(self, b):
        """Batch `b` (/onvm/shared/take's reply) into etcd; True once there."""
        run, batch = int(b["run"]), int(b["batch"])
        # (strings: the telemetry's dict integers are 32-bit)
        deltas = {int(k[1:]): int(v) for k, v in b.items() if k.startswith("d")}
        ak = applied_key(self.node, run)
        for _ in range(TRIES):
            already = []

            def do(client):
                if self._applied(client, ak) >= batch:
                    already.append(1)
                    return True
                _, am = client.get(ak)
                cur = {}
                for k in deltas:
                    v, m = client.get(value_key(k))
                    n = to_int(v) if v is not None else 0
                    if n is None:  # not a counter: the batch cannot be applied
                        raise cluster.Refused(f"{value_key(k)} holds {v!r}, not an integer")
                    cur[k] = (n, m.mod_revision if m else 0)
                t = client.transactions
                compare = [t.mod(value_key(k)) == rev for k, (_, rev) in cur.items()]
                compare.append(t.mod(ak) == (am.mod_revision if am else 0))
                for k, (v, _) in cur.items():
                    if to_int(v + deltas[k]) is None:
                        raise cluster.Refused(f"{value_key(k)}: {v} + {deltas[k]} overflows")
                success = [t.put(value_key(k), str(v + deltas[k])) for k, (v, _) in cur.items()]
                success.append(t.put(ak, str(batch)))
                ok, _ = client.transaction(compare=compare, success=success, failure=[])
                return ok

            if self.c._txn(do, lambda: self.c.call(lambda cl: self._applied(cl, ak) >= batch)):
                if already:
                    self.st["shared_already"] += 1
                else:
                    self.st["shared_batches"] += 1
                    self.st["shared_ops"] += sum(int(v) for k, v in b.items() if k[0] == "n")
                    self.st["shared_delta"] += sum(deltas.values())
                return True
            self.st["shared_conflicts"] += 1
        self.st["shared_given_up"] += 1
        return False

    def values(self):
        """{key: (value, mod revision)} of every shared key in etcd whose
        value is an integer (others skipped, counted: shared_bad_values)."""
        def do(client):
            out = {}
            for v, m in client.get_prefix(VALUE):
                k = m.key.decode()[len(VALUE):]
                if k.isdigit() and int(k) < KEYS:
                    n = to_int(v)
                    if n is None:
                        self.st["shared_bad_values"] = self.st.get("shared_bad_values", 0) + 1
                        continue
                    out[int(k)] = (n, m.mod_revision)
            return out
        return self.c.call(do)

    def step(self, now=None):
        """One round: take, apply, say so, hand the values back.  Raises
        what cluster.Cluster raises (etcd not there: the batch waits,
        offered again next round) and what the telemetry client raises.
        etcd is asked only when there is a batch, or to refresh the
        values: after a batch, every VALUES_S while the node takes part,
        every IDLE_S while it does not (a node with no shared state costs
        etcd one read in IDLE_S, and an agent whose etcd is down is not
        held up by shared state it does not use)."""
        now = time.monotonic() if now is None else now
        b = self.tel.query("/onvm/shared/take") or {}
        batch = 0
        if "batch" in b:
            self.active = True
            if self.apply(b):
                batch = int(b["batch"])
                # (at once: a failure reading the values must not leave
                # the batch in flight)
                self.tel.query(f"/onvm/shared/commit,{int(b['run'])},{batch}")
        if not batch and now < self.values_at:
            return batch
        vals = self.values()
        self.active |= bool(vals)
        self.values_at = now + (VALUES_S if self.active else IDLE_S)
        if vals:
            self.tel.query(f"/onvm/shared/commit,{int(b.get('run', 0))},0," +
                           ",".join(f"{k}={v}@{r}" for k, (v, r) in sorted(vals.items())))
        return batch
