#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Flow migration and scaling asked through the cluster: `onvmctl move`
and `onvmctl scale` put a request into etcd, the node's agent runs it on
its manager at most once and answers (docs/operator-guide.md, "The
cluster").

One etcd member; one node with its agent: test_nf -d 150 -> load_balancer
x2 -> basic_monitor x2, the mixed traces of test_flow_move.  A third of
the way through, by onvmctl: half of one balancer's flows move to the
other (reprocessing), then the balancers are scaled 2 -> 3; a move of an
instance that does not exist is refused with the manager's sentence
(exit 1); a request for a node without an agent is withdrawn after its
wait (exit 1, not done); values under the node's requests that are not
requests (not JSON, not an object, nested past Python's recursion
limit, under a key no request has) are answered so or removed, and one
found taken is answered unknown, not run again, and one past its expiry
is answered expired, not run -- the agent serving on.  Asserted: the answers (the move's slot and
buckets, the scale's target), the move done and the scale reached, the
agent's counters, and the output by test_flow_move's oracle -- no frame
lost or twice, per-flow order, one backend per flow, the monitors' tables
equal to the input's flows.
"""
import json
import time

from onvm import cluster, cluster_lab, etcd_lab, lab
from onvm.balancer import write_config

import test_flow_move as fm


def test(L):
    etcd_lab.require()
    path = L.path("input.pcap")
    frames = fm.make_input(path)
    out, conf, mon = L.path("out.pcap"), L.path("lb.json"), L.path("mon-%i.json")
    write_config(conf)
    ec = etcd_lab.EtcdCluster(L, 1).start()
    node = L.node("cmove", fm.chain_cfg(path, out, conf, mon, {
        "binary": lab.TEST_NF, "args": ["-d", str(fm.DELAY_US)]})).start()
    agent = cluster_lab.agent(L, ec, "n1", node, "")
    by_svc = fm.instances_by_rank(node)
    lab.wait_until(lambda: "n1" in ec.client().nodes(), 30, "the agent registered")
    lab.wait_until(lambda: node.port("in")["tx"] >= len(frames) // 3, 120,
                   "a third of the input through")
    src, dst = by_svc[2]
    rc, r = cluster_lab.onvmctl(ec, "move", "n1", "2", str(src), str(dst), "half")
    print(f"onvmctl move: {rc} {r}")
    lab.check(rc == 0 and r and r["ok"] and "slot" in r and r["buckets"] > 0,
              f"onvmctl move answered {rc} {r}")
    slot = r["slot"]
    lab.wait_until(lambda: node.query(f"/onvm/moves,{slot}")["state"] in ("done", "failed"),
                   60, "the move over")
    mv = node.query(f"/onvm/moves,{slot}")
    L.expect(mv["state"] == "done" and mv["buckets"] == r["buckets"], f"the move: {mv}")
    # Anyone may write etcd: what is not a request is answered so and
    # removed, a request found taken (its agent stopped while it ran) is
    # answered unknown and not run -- and the agent goes on serving.
    c = ec.client()
    c.call(lambda cl: cl.put(cluster._key("requests", "n1", "nested", "x"), "{}"))
    for rid, raw in (("bad1", "[1]"), ("bad2", b"\xff\xfe"), ("bad3", "[" * 100000),
                     ("taken1", json.dumps({"cmd": "/onvm/move", "params": f"2,{src},{dst}",
                                            "at": "soon", "taken": True})),
                     ("old1", json.dumps({"cmd": "/onvm/move", "params": f"2,{src},{dst}",
                                          "at": 1.0, "expires": 2.0, "taken": False}))):
        c.call(lambda cl: cl.put(cluster._key("requests", "n1", rid), raw))
    lab.wait_until(lambda: c.requests("n1") == {}, 10, "the agent answered the odd requests")
    res = {rid: c.result("n1", rid) for rid in ("bad1", "bad2", "bad3", "taken1", "old1")}
    print(f"odd requests: {res}")
    L.expect(not res["bad1"]["ok"] and not res["bad2"]["ok"] and not res["bad3"]["ok"] and
             res["taken1"]["unknown"] and "expired" in res["old1"]["error"],
             f"answers to the odd requests: {res}")
    L.expect(node.query("/onvm/moves")["started"] == 1,
             "a taken request ran again, or an expired one ran")
    rc, r = cluster_lab.onvmctl(ec, "scale", "n1", "2", "3")
    print(f"onvmctl scale: {rc} {r}")
    lab.check(rc == 0 and r and r["ok"], f"onvmctl scale answered {rc} {r}")
    lab.wait_until(lambda: (lambda s: s["phase"] == "idle" and s["instances"] == 3)(
        node.query("/onvm/scale,2")), 60, "the balancers scaled to 3")
    rc, r = cluster_lab.onvmctl(ec, "move", "n1", "2", "40", str(dst))
    print(f"onvmctl move (no such instance): {rc} {r}")
    L.expect(rc == 1 and r and not r["ok"] and "must both run" in r.get("error", ""),
             f"a move of an instance that does not exist: {rc} {r}")
    t0 = time.monotonic()
    rc, r = cluster_lab.onvmctl(ec, "move", "ghost", "2", "0", "1", "--wait", "0.5")
    print(f"onvmctl move (no agent): {rc} {r} in {time.monotonic() - t0:.1f} s")
    L.expect(rc == 1 and r and "withdrawn" in r.get("error", ""),
             f"a request no agent takes: {rc} {r}")
    L.expect(ec.client().requests("ghost") == {}, "the withdrawn request left in etcd")
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 120,
                   "pool back to its idle level (input done)")
    by_svc3 = dict(by_svc)
    by_svc3[2] = list(fm.instances_by_rank(node)[2])
    st = cluster_lab.agent_status(agent)
    L.expect(st.get("requests_done") == 2 and st.get("requests_refused") == 5 and
             st.get("requests_unknown") == 1, f"agent: {st}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    got = fm.pcap.read_capture_out(out)
    backend = fm.check_output(L, "cluster_move", frames, got)
    fm.check_monitors(L, "cluster_move", by_svc3, frames, backend, mon)
    print(f"{len(got)} frames out of {len(frames)}")


if __name__ == "__main__":
    lab.Lab("cluster_move").run(test)
