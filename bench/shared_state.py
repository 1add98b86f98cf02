#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Shared state across NF instances: what an update costs, against the
updates per etcd transaction (DEFT's Fig 2d, where each update is a
remote operation and throughput grows with the batch).

One node: net_null0 (64-byte packets, as fast as the RX unit polls) ->
test_nf -A 0 (nf_shared_add(key 0, 1) per packet) -> dropped at the
chain's end; three etcd members on loopback.  The node's agent part
(onvm.shared.SharedSync, the code tools/onvm-agent runs) is driven here
every --periods ms, so a batch holds what the NF added in one period.
Per period, for --seconds: the NF's packet rate (= updates/s), the
updates per batch, each transaction's time (take, etcd, commit), and so
the etcd cost per update; next to the same node with test_nf without -A
(no update at all) in the same run.  Small batches come from an NF
slowed down by test_nf -d (--delays: ~1, 10, 100 k updates/s) with the
agent's transactions back to back.  Every update taken is checked to
be in etcd once (the counter = the updates the batches carried).

Writes shared_state.csv, shared_state_summary.txt and shared_state.png
into bench/results/ (or --out).
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from onvm import etcd_lab, lab, report, shared  # noqa: E402

FIELDS = ["series", "delay_us", "period_ms", "updates", "batches", "updates_per_batch", "txn_ms_p50", "txn_ms_p99",
          "etcd_us_per_update", "nf_mpps", "nf_mpps_no_adds", "etcd_value", "nf_packets"]


def nf_rx(node):
    return sum(nf["rx"] for nf in node.nfs().values())


def node_cfg(adds, delay_us=0):
    args = (["-A", "0"] if adds else []) + (["-d", str(delay_us)] if delay_us else [])
    return {
        "ports": [{"name": "in", "dev": "net_null0,size=64"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "args": args}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in"}],
    }


def run_period(L, ec, period_ms, seconds, rep, delay_us=0):
    node = L.node(f"sh{rep}-{period_ms}-{delay_us}", node_cfg(True, delay_us)).start()
    c = ec.client()
    sync = shared.SharedSync(c, node.tel, f"bench{rep}-{period_ms}-{delay_us}")
    times, sizes = [], []
    rx0, t0 = nf_rx(node), time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        before = sync.st["shared_ops"]
        if sync.step():
            times.append((time.monotonic() - t) * 1000)
            sizes.append(sync.st["shared_ops"] - before)
        time.sleep(max(0.0, period_ms / 1000 - (time.monotonic() - t)))
    rx1, t1 = nf_rx(node), time.monotonic()
    sync.step()
    # Every batch taken is in etcd once: the counter is the sum of their
    # deltas.  (A batch's add count may trail its delta by an add made
    # while it was taken -- counted in the next one.)
    total = sync.st["shared_delta"]
    value = sync.values().get(0, (0, 0))[0]
    node.stop()
    c.call(lambda cl: cl.delete(shared.value_key(0)))
    c.close()
    row = {"series": "paced" if delay_us else "full", "delay_us": delay_us,
           "period_ms": period_ms, "updates": total, "batches": len(times),
           "updates_per_batch": round(statistics.mean(sizes)) if sizes else 0,
           "txn_ms_p50": round(report.pct(times, 50), 2) if times else "",
           "txn_ms_p99": round(report.pct(times, 99), 2) if times else "",
           "etcd_us_per_update": round(sum(times) * 1000 / max(1, sum(sizes)), 4),
           "nf_mpps": round((rx1 - rx0) / (t1 - t0) / 1e6, 3),
           "etcd_value": value, "nf_packets": total}
    lab.check(value == total, f"period {period_ms}: etcd holds {value}, {total} updates made")
    report.log(f"delay {delay_us} us, period {period_ms} ms: {row['updates_per_batch']} updates a batch, txn "
               f"{row['txn_ms_p50']} ms p50, {row['etcd_us_per_update']} us of etcd per "
               f"update, NF {row['nf_mpps']} Mpps")
    return row


def baseline(L, seconds, rep, delay_us=0):
    node = L.node(f"sh{rep}-none-{delay_us}", node_cfg(False, delay_us)).start()
    rx0, t0 = nf_rx(node), time.monotonic()
    time.sleep(seconds)
    rx1, t1 = nf_rx(node), time.monotonic()
    node.stop()
    return (rx1 - rx0) / (t1 - t0) / 1e6


def plot(rows, path):
    plt = report.pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    allr = sorted(rows, key=lambda r: r["updates_per_batch"])
    ax[0].plot([r["updates_per_batch"] for r in allr], [r["etcd_us_per_update"] for r in allr],
               marker="o")
    rows = [r for r in rows if r["series"] == "full"]
    xs = [r["updates_per_batch"] for r in rows]
    ax[0].set_xscale("log")
    ax[0].set_yscale("log")
    ax[0].set_xlabel("updates per etcd transaction")
    ax[0].set_ylabel("etcd time per update (us)")
    ax[0].set_title("one transaction per batch", fontsize=9)
    ax[1].plot(xs, [r["nf_mpps"] for r in rows], marker="o", label="with nf_shared_add per packet")
    ax[1].plot(xs, [r["nf_mpps_no_adds"] for r in rows], "--", label="no update (same run)")
    ax[1].set_xscale("log")
    ax[1].set_xlabel("updates per etcd transaction")
    ax[1].set_ylabel("NF throughput (Mpps)")
    ax[1].set_ylim(bottom=0)
    ax[1].legend(fontsize=8)
    ax[1].set_title("the NF never waits for etcd", fontsize=9)
    fig.suptitle("Shared state through etcd: cost per update vs batch (DEFT Fig 2d)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(L, a):
    etcd_lab.require()
    os.makedirs(a.out, exist_ok=True)
    made = f"# made {time.strftime('%Y-%m-%d %H:%M')}, tree {report.repo_state()}"
    ec = etcd_lab.EtcdCluster(L, 3).start()
    rows = []
    for rep in range(a.reps):
        base = baseline(L, a.seconds, rep)
        for p in a.periods:
            r = run_period(L, ec, p, a.seconds, rep)
            r["nf_mpps_no_adds"] = round(base, 3)
            rows.append(r)
        # small batches: the NF slowed down (test_nf -d), the agent
        # back to back -- a batch is what comes in one transaction's time
        for d in a.delays:
            r = run_period(L, ec, 0, a.seconds, rep, d)
            r["nf_mpps_no_adds"] = round(baseline(L, a.seconds, rep, d), 3)
            rows.append(r)
    med = []
    for key in [("full", 0, p) for p in a.periods] + [("paced", d, 0) for d in a.delays]:
        rs = [r for r in rows if (r["series"], r["delay_us"], r["period_ms"]) == key]
        m = dict(rs[0])
        for f in ("updates_per_batch", "etcd_us_per_update", "nf_mpps", "nf_mpps_no_adds",
                  "txn_ms_p50"):
            m[f] = statistics.median(float(r[f]) for r in rs if r[f] != "")
        med.append(m)
    report.write_csv(os.path.join(a.out, "shared_state.csv"), FIELDS, rows)
    lines = [made, f"medians of {a.reps} runs of {a.seconds} s each",
             "series delay_us period_ms updates/batch txn_ms_p50 etcd_us/update nf_Mpps "
             "nf_Mpps_no_adds"]
    lines += [f"{m['series']:6} {m['delay_us']:>8} "
              f"{m['period_ms']:>9} {m['updates_per_batch']:>13.0f} {m['txn_ms_p50']:>10.2f} "
              f"{m['etcd_us_per_update']:>14.4f} {m['nf_mpps']:>7.3f} "
              f"{m['nf_mpps_no_adds']:>15.3f}" for m in med]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(a.out, "shared_state_summary.txt"), "w") as f:
        f.write(text + "\n")
    plot(med, os.path.join(a.out, "shared_state.png"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--periods", type=lambda v: [int(x) for x in v.split(",")],
                    default=[1, 3, 10, 30, 100, 300])
    ap.add_argument("--delays", type=lambda v: [int(x) for x in v.split(",") if x],
                    default=[1000, 100, 10], help="test_nf -d for the small batches (us)")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    lab.run("shared_state_bench", lambda L: main(L, ap.parse_args()))
