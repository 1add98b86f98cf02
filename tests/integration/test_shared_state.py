#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Shared state across NF instances on two nodes, through etcd, while an
etcd member is killed: no update lost, none counted twice
(docs/design/elastic.md, "Shared state").

Three etcd members (etcd_lab); two nodes, each a manager with its agent
(tools/onvm-agent, which applies the manager's batches of adds to etcd in
one transaction each).  Node A runs test_nf -A x2, node B x1: each adds
to shared counter 0 per packet (nf_shared_add) -- 1 on node A, 2^32 + 1
on node B (more than a 32-bit integer: deltas must travel whole).  Each
node replays the twelve traces mixed, twice (~6 700 frames), spread over a few seconds
by test_nf -d 400.  A third of the way, the etcd member the agents talk
to first is SIGKILLed; adds must go on reaching etcd through the other
two (asserted) before it is restarted.

Asserted: each manager handed all of its adds to etcd (/onvm/shared:
ops_committed == the packets its NFs handled, nothing in flight); adds
reached etcd while the member was down; etcd's counter 0 is exactly the
sum of every add the NFs of both nodes made -- each once; each manager reads that value back
(what nf_shared_get returns); the agents saw the member's loss
(shared_etcd_waits or conflicts are not required: a kill between rounds
costs nothing) and applied at least one batch after it.
"""
import os
import time

from onvm import cluster_lab, etcd_lab, lab, pcap, shared, traces


# Node b adds more than 32 bits hold per packet (the telemetry's dict
# integers are 32-bit: the deltas travel as strings).
DELTA = {"a": 1, "b": (1 << 32) + 1}


def node_cfg(path, out, instances, delta):
    return {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "instances": instances,
                 "args": ["-d", "400", "-A", f"0:{delta}"]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in"}],
    }


def test(L):
    etcd_lab.require()
    frames = traces.mix([traces.trace(t) for t in sorted(os.listdir(traces.traces_dir()))
                         if t.endswith(".pcap")]) * 2
    path = L.path("input.pcap")
    pcap.write_pcap(path, frames)
    ec = etcd_lab.EtcdCluster(L, 3).start()
    a = L.node("shared-a", node_cfg(path, L.path("a-out.pcap"), 2, DELTA["a"]))
    b = L.node("shared-b", node_cfg(path, L.path("b-out.pcap"), 1, DELTA["b"]))
    a.start()
    b.start()
    agents = {n: cluster_lab.agent(L, ec, n, node, "") for n, node in (("a", a), ("b", b))}
    def handled():
        return sum(nf["rx"] for node in (a, b) for nf in node.nfs().values())

    def committed():
        return sum(node.query("/onvm/shared")["ops_committed"] for node in (a, b))
    # a third of the way, and some of it in etcd already, the first member
    # (every agent's first endpoint) goes
    lab.wait_until(lambda: handled() >= len(frames) * 2 // 3 and committed() > 0, 60,
                   "a third of the input handled, some of it committed")
    ec.kill(0)
    killed_at = time.monotonic()
    at_kill = committed()
    print(f"etcd member 0 killed: {handled()} packets handled, {at_kill} adds in etcd")
    # adds go on meanwhile: they reach etcd through the other members
    lab.wait_until(lambda: committed() > at_kill, 30, "adds committed while a member is down")
    time.sleep(0.5)
    ec.restart(0)
    want = {}
    for name, node in (("a", a), ("b", b)):
        lab.wait_until(lambda: node.port("in")["rx"] >= len(frames), 120,
                       f"{name}: the input read")
        # (a slow NF's ring overflows now and then: what it handled is
        # what it added -- once the rings are empty, nothing more comes)
        lab.wait_until(lambda: all(nf["rx_ring_count"] == 0 for nf in node.nfs().values()), 120,
                       f"{name}: the NFs' rings drained")
        # (an NF counts a burst in rx once it is handled: the last one may
        # be under way with its ring empty)
        seen = []

        def settled():
            seen.append(sum(nf["rx"] for nf in node.nfs().values()))
            return len(seen) > 1 and seen[-1] == seen[-2]
        lab.wait_until(settled, 30, f"{name}: the NFs' counts settled", interval=0.3)
        n = seen[-1]
        print(f"{name}: NFs handled {n}: " + ", ".join(
            f"{i} rx {nf['rx']} drops {nf.get('ring_full_drops', '?')}"
            for i, nf in node.nfs().items()))
        last = {}

        def all_in():
            last.update(node.query("/onvm/shared"))
            return last["ops_committed"] >= n and last["in_flight"] == 0
        try:
            lab.wait_until(all_in, 60, f"{name}: every add in etcd", interval=0.1)
        except lab.TestFailure:
            print(f"{name}: {last}; agent {cluster_lab.agent_status(agents[name])}")
            raise
        want[name] = n
    c = ec.client()
    try:
        got = shared.SharedSync(c, None, "test").values().get(0, (None, 0))[0]
    finally:
        c.close()
    total = sum(want[n] * DELTA[n] for n in want)
    L.expect(got == total, f"etcd's counter 0 is {got}, {total} adds were made "
             f"({'lost' if got < total else 'counted twice'}: {abs(total - got)})")
    for name, node in (("a", a), ("b", b)):
        sh = node.query("/onvm/shared")
        L.expect(sh["ops_committed"] == want[name],
                 f"{name}: {sh['ops_committed']} adds committed, {want[name]} made")
        lab.wait_until(lambda: int(node.query("/onvm/shared").get("v0", "0")) == total, 10,
                       f"{name}: the manager reads etcd's value back")
        st = cluster_lab.agent_status(agents[name])
        print(f"{name}: {sh}; agent {({k: v for k, v in st.items() if 'shared' in k})}")
        L.expect(st.get("shared_batches", 0) > 0, f"{name}: the agent applied no batch: {st}")
    # The agent's values are outside input: a malformed commit changes
    # nothing (a value past 64 bits, a signed or trailing revision, a key
    # twice, a key out of range), refused and counted.
    bad = ["0,0,0=99999999999999999999@1", "0,0,0=5@-1", "0,0,0=5@7x", "0,0,0=5@1,0=6@2",
           "0,0,16=5@1", "-1,0", "0,0,0=@1"]
    for p in bad:
        r = b.query(f"/onvm/shared/commit,{p}")
        L.expect(not r, f"/onvm/shared/commit,{p} answered {r}")
    sh = b.query("/onvm/shared")
    L.expect(int(sh.get("v0", "0")) == total and sh["commits_refused"] == len(bad),
             f"b after malformed commits: v0 {sh.get('v0')}, refused {sh['commits_refused']}")
    for name, node in (("a", a), ("b", b)):
        rc = node.stop()
        L.expect(rc == 0, f"{name}: manager exit status {rc}")
    print(f"counter 0 = {got} = {want['a']} + {want['b']} x {DELTA['b']}; etcd member killed "
          f"{time.monotonic() - killed_at:.1f} s before the end")


if __name__ == "__main__":
    lab.Lab("shared_state").run(test)
