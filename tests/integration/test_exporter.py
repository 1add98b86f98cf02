#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""tools/onvm-exporter with a real Prometheus (Debian's) and a real node.

1. prometheus: a node with a `local` simple_forward on net_null; the
   exporter names it and a node that is not there; Prometheus scrapes the
   exporter every second with examples/prometheus/alerts.yml loaded
   (evaluated every second).  Before: Prometheus's query API says
   onvm_up 1 for the node and 0 for the missing one, onvm_nf_failovers_total
   0 and no ONVMNFFailedOver alert.  The NF's active is SIGKILLed: the
   standby takes over; through the query API, onvm_nf_failovers_total rose
   by exactly one and the alert ONVMNFFailedOver fires naming that NF
   (nf="simple_forward", its instance and service).
   The histogram of wake -> first packet counts that failover once, and
   ONVMNFInstanceLost stays silent (a standby took it over).
2. restart: the node is stopped (the exporter reports onvm_up 0 and none of
   its other metrics, and keeps serving), started again under the same
   prefix (onvm_up 1 again, its uptime the new run's), and a socket that
   answers garbage is counted in onvm_exporter_errors_total{reason} without
   the exporter failing.
3. odd nodes: a socket that greets and never answers, one whose id list
   holds a null: the scrape comes back within the node budget, the good
   node up, the odd list counted as a bad reply.
"""
import json
import os
import threading
import shutil
import signal
import socket
import time
import urllib.parse

from onvm import lab
from onvm.exporter import free_port, http_get, metric, metrics, start_exporter

ALERTS = os.path.join(lab.SRC, "examples", "prometheus", "alerts.yml")


def prom_query(port, q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        doc = json.loads(http_get(url))
    except OSError:
        return None  # not serving yet
    lab.check(doc.get("status") == "success", f"prometheus query {q}: {doc}")
    return doc["data"]["result"]


def prom_value(port, q):
    r = prom_query(port, q)
    return float(r[0]["value"][1]) if r is not None and len(r) == 1 else None


def fake_node(L, prefix, answer, done, greeting=b'{"version":"DPDK 22.11","pid":1,'
                                                 b'"max_output_len":16384}'):
    """A telemetry socket where node `prefix`'s would be, served until `done`
    is set: it greets, then answers each command with answer(cmd) (bytes;
    None: no answer).  Returns the listening socket (closed by the caller)."""
    d = os.path.join(lab.RUNTIME_ROOT, prefix)
    os.makedirs(d, exist_ok=True)
    L.extra_dirs.append(d)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(os.path.join(d, "dpdk_telemetry.v2"))
    srv.listen(4)
    srv.settimeout(0.2)

    def serve():
        while not done.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            try:
                c.settimeout(3)
                c.send(greeting)
                while True:
                    cmd = c.recv(4096).decode()
                    if not cmd:
                        break
                    reply = answer(cmd)
                    if reply is not None:
                        c.send(reply)
            except OSError:
                pass
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    return srv


def local_node(L, name):
    return L.node(name, {
        "nf_defaults": {"cpus": "1"},
        "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                  {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
        "nfs": [{"binary": "simple_forward", "service": 1, "resiliency": "local"}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "gen", "exit_port": "sink"}],
    })


def with_prometheus(L):
    prom = shutil.which("prometheus")
    lab.check(prom is not None, "prometheus is not installed (scripts/setup.sh installs it)")
    node = local_node(L, "exported").start()
    missing = f"absent{os.getpid()}"
    eport, pport = free_port(), free_port()
    start_exporter(L, [node.prefix, missing], eport, "prom")
    cfg_dir = L.path("prometheus")
    os.makedirs(cfg_dir)
    shutil.copy(ALERTS, os.path.join(cfg_dir, "alerts.yml"))
    with open(os.path.join(cfg_dir, "prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "rule_files:\n  - alerts.yml\n"
                "scrape_configs:\n  - job_name: onvm\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{eport}']\n")
    p = L.spawn("prometheus", [prom, f"--config.file={cfg_dir}/prometheus.yml",
                               f"--storage.tsdb.path={cfg_dir}/data",
                               f"--web.listen-address=127.0.0.1:{pport}"])
    lab.wait_until(lambda: p.poll() is None and
                   prom_value(pport, f'onvm_up{{node="{node.prefix}"}}') == 1.0, 60,
                   "Prometheus: onvm_up 1 for the node")
    L.expect(prom_value(pport, f'onvm_up{{node="{missing}"}}') == 0.0,
             "Prometheus: the missing node is not onvm_up 0")
    before = prom_value(pport, f'onvm_nf_failovers_total{{node="{node.prefix}"}}')
    L.expect(before == 0.0, f"Prometheus: failovers before the kill {before}")
    L.expect(not prom_query(pport, 'ALERTS{alertname="ONVMNFFailedOver"}'),
             "the failover alert fired before any failover")
    lab.wait_until(lambda: node.nf_by(service=1)[0]["standby_parked"] == 1, 30,
                   "the standby parked")
    victim = node.nf_by(service=1)[0]
    os.kill(victim["pid"], signal.SIGKILL)
    lab.wait_until(lambda: prom_value(
        pport, f'onvm_nf_failovers_total{{node="{node.prefix}"}}') == before + 1, 30,
        "Prometheus: the failover counter up by one")
    alerts = lab.wait_until(lambda: prom_query(
        pport, 'ALERTS{alertname="ONVMNFFailedOver",alertstate="firing"}') or None, 30,
        "Prometheus: ONVMNFFailedOver firing")
    lab.check(len(alerts) == 1, f"Prometheus: {len(alerts)} failover alerts: {alerts}")
    labels = alerts[0]["metric"]
    L.expect(labels.get("nf") == "simple_forward" and
             labels.get("nf_instance") == str(victim["instance"]) and
             labels.get("service") == str(victim["service"]) and
             labels.get("node") == node.prefix,
             f"the alert names {labels}, not simple_forward instance {victim['instance']}")
    time.sleep(2)
    L.expect(prom_value(pport, f'onvm_nf_failovers_total{{node="{node.prefix}"}}') ==
             before + 1, "Prometheus: the failover counter rose by more than one")
    L.expect(not prom_query(pport, 'ALERTS{alertname="ONVMNFInstanceLost"}'),
             "ONVMNFInstanceLost fired for a failover a standby took")
    lab.wait_until(lambda: prom_value(
        pport, f'onvm_nf_failover_wake_to_first_packet_seconds_count{{node="{node.prefix}"}}')
        == 1.0, 30, "Prometheus: the failover's wake -> first packet observed once")
    node.stop()
    print(f"prometheus: failovers {before:.0f} -> {before + 1:.0f}; alert names "
          f"{labels.get('nf')} instance {labels.get('nf_instance')}")


def restart_and_garbage(L):
    node = local_node(L, "restarted").start()
    bogus = f"bogus{os.getpid()}"
    done = threading.Event()
    srv = fake_node(L, bogus, lambda cmd: b"not json at all", done)
    eport = free_port()
    exp = start_exporter(L, [node.prefix, bogus], eport, "restart")
    m = None
    for _ in range(3):
        m = metrics(eport)
    L.expect(metric(m, "onvm_up", node=node.prefix) == 1.0, "up before the restart")
    L.expect(metric(m, "onvm_up", node=bogus) == 0.0, "the garbage node counted up")
    bad = metric(m, "onvm_exporter_errors_total", node=bogus, reason="bad_json")
    L.expect(bad is not None and bad >= 2, f"garbage replies counted {bad}")
    uptime0 = metric(m, "onvm_uptime_seconds", node=node.prefix)
    node.stop()
    m = metrics(eport)
    L.expect(metric(m, "onvm_up", node=node.prefix) == 0.0, "a stopped node is not up 0")
    left = [n for (n, ls) in m if ("node", node.prefix) in ls and n not in
            ("onvm_up", "onvm_exporter_scrape_seconds") and not n.startswith(
                "onvm_nf_failover_wake_to_first_packet")]
    L.expect(not left, f"a stopped node still has metrics: {sorted(set(left))[:5]}")
    restarted = time.monotonic()
    node.start()
    lab.wait_until(lambda: metric(metrics(eport), "onvm_up", node=node.prefix) == 1.0, 30,
                   "up again after the restart")
    uptime1 = metric(metrics(eport), "onvm_uptime_seconds", node=node.prefix)
    L.expect(uptime1 is not None and uptime0 is not None and
             uptime1 <= time.monotonic() - restarted + 1,
             f"uptime {uptime0} -> {uptime1}: not the new run's")
    L.expect(exp.poll() is None, "the exporter exited")
    node.stop()
    done.set()
    srv.close()
    print("restart: up 1 -> 0 -> 1, garbage counted, exporter alive")


def odd_nodes(L):
    """Telemetry sockets that misbehave: one greets and never answers, one
    answers a node's replies but an id list with a null in it.  The scrape
    still comes back, within the node budget, with the good node up."""
    node = local_node(L, "neighbour").start()
    done = threading.Event()
    odd_greeting = b'{"version":"DPDK 22.11","pid":1,"max_output_len":null}'

    def odd_answer(cmd):
        key = cmd.split(",")[0]
        value = {"/onvm/info": {"node": "odd", "pid": 7}, "/onvm/nf/ids": [None, 3]}.get(key, {})
        return json.dumps({key: value}).encode()
    silent, odd = f"silent{os.getpid()}", f"oddids{os.getpid()}"
    socks = [fake_node(L, silent, lambda cmd: None, done, odd_greeting),
             fake_node(L, odd, odd_answer, done, odd_greeting)]
    eport = free_port()
    exp = start_exporter(L, [node.prefix, silent, odd], eport, "odd")
    t0 = time.monotonic()
    m = metrics(eport)
    took = time.monotonic() - t0
    L.expect(took < 3.0, f"a scrape with a silent node took {took:.1f} s")
    L.expect(metric(m, "onvm_up", node=node.prefix) == 1.0, "the good node not up")
    L.expect(metric(m, "onvm_up", node=silent) == 0.0, "the silent node not up 0")
    L.expect(metric(m, "onvm_up", node=odd) == 0.0, "the node with odd ids not up 0")
    L.expect((metric(m, "onvm_exporter_errors_total", node=odd, reason="bad_reply") or 0) >= 1,
             "the odd id list not counted as a bad reply")
    L.expect(exp.poll() is None, "the exporter exited")
    done.set()
    node.stop()
    for s in socks:
        s.close()
    print(f"odd nodes: scrape {took * 1e3:.0f} ms with a silent node, odd ids counted")


def test(L):
    odd_nodes(L)
    restart_and_garbage(L)
    with_prometheus(L)


if __name__ == "__main__":
    lab.Lab("exporter").run(test)
