# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.balancer -- load_balancer across a failover: a run of a capture
through test_nf -d 300 -> load_balancer ("resiliency": "local") with the
balancer killed by ONVM_NF_FAULT (failover_run), and the transparent-mode
run checked frame by frame against its input (run_transparent: every flow
on one backend across the failover, only the rewritten fields changed,
checksums valid, ND marks == flows, the promoted balancer's export == the
capture).  test_nf_load_balancer.py says in full what is asserted;
test_container_failover.py runs the same with the NFs in containers.

The frames are parsed here independently of the product (parse mirrors
onvm_pkt_parse's rules), and checksums summed independently.
"""
import os
import re
import struct

from onvm import containers, flowtable, lab, pcap

BACKENDS = [(f"198.18.1.{i}", f"02:00:00:00:01:0{i}") for i in range(1, 5)]
MIN_SPANNING = 25  # flows with packets before and after the kill, at the least
DYING_RE = re.compile(r"ONVM_NF_FAULT: dying at (\w+) after (\d+) packets")


# ---- frames, parsed independently of the product (mirrors onvm_pkt_parse's rules) ----

def parse(f):
    """(kind, info): kind is "non_ip", "malformed", "fragment" or "ok"; info has
    l3 (IPv4 header offset), ihl, proto, src, dst, sport, dport."""
    if len(f) < 14:
        return "malformed", None
    etype, off, tags = struct.unpack_from("!H", f, 12)[0], 14, 0
    while etype in (0x8100, 0x88A8) and tags < 2:
        if len(f) < off + 4:
            return "malformed", None
        etype = struct.unpack_from("!H", f, off + 2)[0]
        off, tags = off + 4, tags + 1
    if etype != 0x0800:
        return "non_ip", None
    if len(f) < off + 20 or f[off] >> 4 != 4 or (f[off] & 15) * 4 < 20:
        return "malformed", None
    ihl = (f[off] & 15) * 4
    tot = struct.unpack_from("!H", f, off + 2)[0]
    if len(f) < off + ihl or tot < ihl or off + tot > len(f):
        return "malformed", None
    frag = struct.unpack_from("!H", f, off + 6)[0]
    info = {"l3": off, "ihl": ihl, "tot": tot, "proto": f[off + 9],
            "src": f[off + 12:off + 16], "dst": f[off + 16:off + 20], "sport": 0, "dport": 0}
    if frag & 0x1FFF:
        return "fragment", info
    l4 = off + ihl
    if info["proto"] == 6:
        if l4 + 20 > off + tot or (f[l4 + 12] >> 4) * 4 < 20 or l4 + (f[l4 + 12] >> 4) * 4 > off + tot:
            return "malformed", None
    elif info["proto"] == 17:
        if l4 + 8 > off + tot:
            return "malformed", None
        ulen = struct.unpack_from("!H", f, l4 + 4)[0]
        if ulen < 8 or (not frag & 0x2000 and ulen > tot - ihl):
            return "malformed", None
    if info["proto"] in (6, 17):
        info["sport"], info["dport"] = struct.unpack_from("!HH", f, l4)
    return ("fragment" if frag & 0x2000 else "ok"), info


def key(info):
    return (ip_str(info["src"]), ip_str(info["dst"]), info["proto"], info["sport"], info["dport"])


def ip_str(b):
    return ".".join(str(x) for x in b)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def checksums_ok(f, info):
    l3, ihl, tot = info["l3"], info["ihl"], info["tot"]
    if csum(f[l3:l3 + ihl]) != 0xFFFF:
        return False
    if info["proto"] not in (6, 17):
        return True
    seg = f[l3 + ihl:l3 + tot]
    if info["proto"] == 17 and seg[6:8] == b"\0\0":
        return True
    pseudo = f[l3 + 12:l3 + 20] + struct.pack("!BBH", 0, info["proto"], tot - ihl)
    return csum(pseudo + seg) == 0xFFFF


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


# ---- runs -----------------------------------------------------------------------------

def write_config(path, vip=None):
    with open(path, "w") as f:
        f.write("{" + (f'"vip": "{vip}", ' if vip else "") + '"backends": [\n' +
                ",\n".join(f'  {{"ip": "{ip}", "mac": "{mac}"}}' for ip, mac in BACKENDS) +
                '],\n "idle_timeout_ms": 3600000, "flows": 16384}\n')


def failover_run(L, tag, point, at, path, conf, image=None):
    """Replay `path` through test_nf -d 300 -> load_balancer (local resiliency)
    with the balancer killed at `point` of the batch holding packet `at`.
    With `image`, both NFs (and the standby) run in containers of it
    (test_container_failover.py): the balancer's config and export in a
    directory that is its containers' only volume, the fault set in their
    environment (a container does not inherit the manager's).
    Returns (slot telemetry, port counters, packets the dead one received,
    output frames, the promoted balancer's export)."""
    out = L.path(f"{tag}-out.pcap")
    lb_dir = L.path(f"{tag}-lb")
    os.makedirs(lb_dir, exist_ok=True)
    exp = os.path.join(lb_dir, "lb.json")
    fault = f"load_balancer:{point}:{at}"
    cfg = {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "args": ["-d", "300"]},
                {"binary": "load_balancer", "service": 2, "resiliency": "local",
                 "args": ["-c", conf, "-e", exp, "-p", "0"]}],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "in", "exit_port": "in"}],
    }
    if image is not None:
        cfg = containers.containerize(cfg, image, volumes={1: [f"{lb_dir}:{lb_dir}"]})
        cfg["nfs"][0]["container"]["path"] = "/nf/bin/test_nf"
        cfg["nfs"][1]["container"]["args"] = [f"--env=ONVM_NF_FAULT={fault}"]
    node = L.node(f"lb-{tag}", cfg, env=None if image else {"ONVM_NF_FAULT": fault}).start()

    def lb_nf():
        return node.nf_by(service=2)[0]

    lab.wait_until(lambda: lb_nf()["failovers"] == 1, 120, f"{tag}: the failover")
    lab.wait_until(lambda: (lambda p: p["in_use"] == p["idle_in_use"])(node.pool()), 120,
                   f"{tag}: pool back to its idle level (trace done)")
    nf, port, info = lb_nf(), node.port("in"), node.info()
    m = DYING_RE.search(node.log())
    lab.check(m is not None and m.group(1) == point, f"{tag}: no 'dying at {point}' in the log")
    died_after = int(m.group(2))
    lab.wait_until(lambda: lb_nf()["standby_pid"] != 0, 30, f"{tag}: a fresh standby")
    if image is not None:
        # test_nf's, the promoted balancer's and the fresh standby's: the
        # dead one's is gone (podman's --rm; its CLI may take a moment).
        want = sorted([node.nf_by(service=1)[0]["container"], lb_nf()["container"],
                       lb_nf()["standby_container"]])
        lab.wait_until(lambda: containers.node_containers(node.prefix) == want, 30,
                       f"{tag}: the node's containers to be {want}")
        # (onvm-PREFIX-<instance><a|s>-<manager pid>.<launch>: launched as the standby)
        L.expect(lb_nf()["container"].split("-")[-2].endswith("s"),
                 f"{tag}: the balancer now runs in {lb_nf()['container']}, not in the "
                 f"standby's container")
    rc = node.stop()
    L.expect(rc == 0, f"{tag}: manager exit status {rc}")
    if image is not None:
        left = containers.node_containers(node.prefix)
        L.expect(not left, f"{tag}: containers left after the node stopped: {left}")
    print(f"{tag}: killed at {point} after {died_after} packets (asked {at}); re-emitted "
          f"{nf['failover_reemitted']}, dropped {nf['failover_dropped']}, reprocessed "
          f"{nf['failover_reprocessed']}")
    L.expect(nf["failovers"] == 1 and info["nf_failovers"] == 1,
             f"{tag}: failovers slot {nf['failovers']}, node {info['nf_failovers']}")
    L.expect(nf["failover_dropped"] == 0, f"{tag}: the failover dropped {nf['failover_dropped']}")
    L.expect(nf["bad_touches"] == 0, f"{tag}: {nf['bad_touches']} touches outside the regions")
    got = pcap.read_capture_out(out)
    L.expect(port["tx"] == len(got), f"{tag}: port tx {port['tx']}, capture {len(got)}")
    return nf, port, died_after, got, lab.read_json(exp)


BY_IP = {ip: (n, mac_bytes(mac)) for n, (ip, mac) in enumerate(BACKENDS)}


def rewritten(f, inf, g, fields):
    """True if g is f with only `fields` (byte ranges) and the checksums changed."""
    l3 = inf["l3"]
    want = bytearray(f)
    for a, b in fields + [(l3 + 10, l3 + 12)]:
        want[a:b] = g[a:b]
    c = {6: 16, 17: 6}.get(inf["proto"])
    if c is not None:
        a = l3 + inf["ihl"] + c
        want[a:a + 2] = g[a:a + 2]
    return g == bytes(want[:len(g)])


def run_transparent(L, point, at, path, frames, image=None):
    tag = f"transparent-{point}" + ("-ctr" if image else "")
    conf = L.path(f"{tag}-lb/lb.conf.json")
    os.makedirs(os.path.dirname(conf), exist_ok=True)
    write_config(conf)
    nf, port, died_after, got, doc = failover_run(L, tag, point, at, path, conf, image)

    # Frame by frame: output j is the j-th input frame the balancer forwards.
    kinds = [parse(f) for f in frames]
    fwd = [i for i, (k, _) in enumerate(kinds) if k in ("ok", "non_ip")]
    L.expect(len(got) == len(fwd), f"{tag}: {len(got)} frames out, want {len(fwd)} "
                                   f"({len(frames)} in, {len(frames) - len(fwd)} dropped by design)")
    backend_of, packets, side = {}, {}, {}
    bad_csum = 0
    for j, (g, i) in enumerate(zip(got, fwd)):
        f, (kind, inf) = frames[i], kinds[i]
        truncated = isinstance(g, pcap.TruncatedFrame)
        g = bytes(g)
        lab.check(truncated or len(g) == len(f), f"{tag}: output {j} (input {i}) changed length")
        if kind == "non_ip":
            lab.check(g == f[:len(g)], f"{tag}: output {j} (input {i}, not IPv4) changed")
            continue
        l3 = inf["l3"]
        dst = ip_str(g[l3 + 16:l3 + 20])
        lab.check(dst in BY_IP, f"{tag}: output {j} (input {i}) goes to {dst}, no backend")
        b, mac = BY_IP[dst]
        lab.check(g[:6] == mac, f"{tag}: output {j} to {dst} with MAC {g[:6].hex()}")
        lab.check(rewritten(f, inf, g, [(0, 6), (l3 + 16, l3 + 20)]),
                  f"{tag}: output {j} (input {i}) differs beyond the rewritten fields")
        if not truncated and not checksums_ok(g, inf):
            bad_csum += 1
        k = key(inf)
        if backend_of.setdefault(k, b) != b:
            raise lab.TestFailure(f"{tag}: flow {k} went to backend {backend_of[k]} and to {b} "
                                  f"(output {j}, input {i}, kill after {died_after})")
        packets[k] = packets.get(k, 0) + 1
        side.setdefault(k, set()).add(i < died_after)
    L.expect(bad_csum == 0, f"{tag}: {bad_csum} rewritten frames with a bad checksum")
    spanning = sum(1 for s in side.values() if len(s) == 2)
    print(f"{tag}: {len(backend_of)} flows, each on one backend; {spanning} of them with "
          f"packets before and after the failover")
    L.expect(spanning >= MIN_SPANNING,
             f"{tag}: only {spanning} flows span the failover (want >= {MIN_SPANNING})")

    # ND marks: one per new flow, nowhere else.
    n_flows = len(backend_of)
    L.expect(nf["nd_events"] == n_flows, f"{tag}: nd_events {nf['nd_events']}, flows {n_flows}")
    L.expect(port["tx_nd"] == n_flows, f"{tag}: tx_nd {port['tx_nd']}, flows {n_flows}")

    # The promoted balancer's export agrees with the capture.
    exported = {}
    for fl in doc["flows"]:
        k = (fl["src"], fl["dst"], fl["proto"], fl["sport"], fl["dport"])
        lab.check(k not in exported, f"{tag}: flow {k} exported twice")
        exported[k] = (BY_IP.get(fl["backend_ip"], (None,))[0], fl["packets"])
    seen = {k: (backend_of[k], packets[k]) for k in backend_of}
    diff = flowtable.diff_flows(exported, seen)
    L.expect(not diff, f"{tag}: export vs capture:\n    " + "\n    ".join(diff))
    counters = {k: doc[k] for k in ("packets", "balanced", "new_flows", "non_ip", "table_full")}
    L.expect(counters == {"packets": len(frames), "balanced": sum(packets.values()),
                          "new_flows": n_flows,
                          "non_ip": sum(1 for k, _ in kinds if k == "non_ip"), "table_full": 0},
             f"{tag}: export counters {counters}")
    return backend_of
