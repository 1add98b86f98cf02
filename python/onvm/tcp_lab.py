# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.tcp_lab -- a real TCP transfer through a protected chain, shared by
tests/integration/test_remote_tcp.py and bench/remote_tcp_stall.py.

A kernel HTTP server (python3 -m http.server) in one network namespace
serves a file; a kernel TCP client in another downloads it.  The server's
data goes through the protected chain:

  server s0 -> pred "src" -> stamped, logged -> primary (or standby) ->
      basic_monitor (state) -> "out" -> sink "in_m"/"in_s" -> "to_cli" -> client c0

and the client's requests and ACKs come back on a direct veth (c1 -> s1),
outside the chain: only one direction needs protecting to show the point,
and it is the one carrying the data.  Static neighbour entries, no ARP;
the server's interface sends whole, checksummed frames (no TSO/GSO, no
checksum offload): af_packet hands the DPDK port what the kernel queued.

  topology(L)          the namespaces, veths, addresses and neighbours (made
                       once: the nodes of several rounds run on them)
  nodes(L, ns, tag)    sink, standby, primary, pred of one round (names and
                       files suffixed with `tag`)
  serve(L, ns, data)   the HTTP server of a file with these bytes
  download(L, ns, ...) the client: raw socket reads, each timestamped
                       (CLOCK_MONOTONIC, the managers' clock) into a file
  Capture              dumpcap on an interface of a namespace (kernel
                       timestamps), read back as TCP segments
  read_log, gaps, retransmissions, rto_ms: what the client, the captures
                       and the server's socket say about a transfer
"""
import json
import os
import re
import signal
import struct
import subprocess
import time

from onvm import lab, pcap

SERVER, CLIENT = "198.18.20.2", "198.18.20.1"
PORT = 8080
DUMPCAP = "/usr/bin/dumpcap"
SNAPLEN = 128  # MACs, a shim, IPv4 and TCP headers with options


def macs(ns, ifname):
    out = lab.run_cmd(lab.in_netns(ns, ["ip", "-j", "link", "show", "dev", ifname]))
    return json.loads(out)[0]["address"]


def af(n, ifn, frames=4096):
    return f"net_af_packet{n},iface={ifn},qpairs=1,framecnt={frames}"


def topology(L):
    """Namespaces p (predecessor), m (primary), s (standby), k (sink), srv,
    cli and the links; returns {role letter or "srv"/"cli": namespace}."""
    ns = {k: L.netns(k) for k in ("p", "m", "s", "k", "srv", "cli")}
    # the chain's links, DPDK at both ends
    for a, b in (("p_m", "m_p"), ("p_s", "s_p"), ("m_s", "s_m"), ("m_k", "k_m"),
                 ("s_k", "k_s")):
        L.veth(ns[a[0]], a, ns[b[0]], b)
        if a in ("p_m", "p_s"):  # the shim adds 12 bytes to full-size frames
            for n, ifn in ((ns[a[0]], a), (ns[b[0]], b)):
                lab.run_cmd(lab.in_netns(n, ["ip", "link", "set", "dev", ifn, "mtu", "9000"]))
    # the kernel ends: the server's data into the predecessor, out of the sink
    # to the client; and the direct way back
    L.veth(ns["p"], "p_in", ns["srv"], "s0", addr_b=f"{SERVER}/24")
    L.veth(ns["k"], "k_c", ns["cli"], "c0", addr_b=f"{CLIENT}/24")
    L.veth(ns["cli"], "c1", ns["srv"], "s1")
    for n, ifn in ((ns["srv"], "s0"), (ns["cli"], "c1"), (ns["srv"], "s1")):
        lab.run_cmd(lab.in_netns(n, ["ethtool", "-K", ifn, "tx", "off", "tso", "off",
                                     "gso", "off"]))
    for n in (ns["srv"], ns["cli"]):
        for k in ("all", "default"):
            lab.run_cmd(lab.in_netns(n, ["sysctl", "-qw", f"net.ipv4.conf.{k}.rp_filter=0"]))
    lab.run_cmd(lab.in_netns(ns["srv"], ["ip", "neigh", "replace", CLIENT, "lladdr",
                                         macs(ns["cli"], "c0"), "dev", "s0", "nud",
                                         "permanent"]))
    lab.run_cmd(lab.in_netns(ns["cli"], ["ip", "route", "replace", f"{SERVER}/32", "dev", "c1",
                                         "src", CLIENT]))
    lab.run_cmd(lab.in_netns(ns["cli"], ["ip", "neigh", "replace", SERVER, "lladdr",
                                         macs(ns["srv"], "s1"), "dev", "c1", "nud",
                                         "permanent"]))
    return ns


def nodes(L, ns, tag="", primary_extra=None, standby_extra=None, pred_extra=None):
    """The round's sink, standby, primary and predecessor (not started);
    `*_extra` update the remote chain's entry of that role."""
    wait = {"startup": {"link_wait_ms": 60000}}
    cpu = lambda c: {"node": {"lcores": f"0@{c}"}}
    big = 16384
    sink = L.node("sink" + tag, dict(wait, **cpu(0), **{
        "ports": [{"name": "in_m", "dev": af(0, "k_m", big)},
                  {"name": "in_s", "dev": af(1, "k_s", big)},
                  {"name": "to_cli", "dev": af(2, "k_c")}],
        "chains": [{"name": "m", "services": [], "ingress_port": "in_m", "exit_port": "to_cli"},
                   {"name": "s", "services": [], "ingress_port": "in_s",
                    "exit_port": "to_cli"}],
    }), netns=ns["k"])

    def chain_node(name, role):
        sync_port = "to_s" if role == "primary" else "to_m"
        rc = {"name": "web", "id": 7, "role": role, "chain": "c", "predecessor_port": "from_p"}
        if role == "primary":
            rc.update(standby_port=sync_port, stages=8, stage_packets=64, stage_close_us=200,
                      retrans_us=5000, max_tries=20, standby_window=16, checkpoint_ms=5)
            rc.update(primary_extra or {})
        else:
            rc.update(primary_port=sync_port)
            rc.update(standby_extra or {})
        x = 'm' if role == 'primary' else 's'
        return L.node(name + tag, dict(wait, **cpu(1 if role == "primary" else 0), **{
            "ports": [{"name": "from_p", "dev": af(0, f"{x}_p", big)},
                      {"name": sync_port, "dev": af(1, f"{x}_{'s' if x == 'm' else 'm'}")},
                      {"name": "out", "dev": af(2, f"{x}_k")}],
            "nfs": [{"name": "mon", "binary": "basic_monitor", "service": 1,
                     "args": ["-f", "1024", "-e", L.path(f"{name}{tag}-mon.json"), "-p", "0"]}],
            "chains": [{"name": "c", "services": [1], "ingress_port": "from_p",
                        "exit_port": "out"}],
            "remote": {"chains": [rc]},
        }), netns=ns[x])

    standby = chain_node("standby", "standby")
    primary = chain_node("primary", "primary")
    pred = L.node("pred" + tag, dict(wait, **cpu(1), **{
        "ports": [{"name": "src", "dev": af(0, "p_in")},
                  {"name": "to_m", "dev": af(1, "p_m")},
                  {"name": "to_s", "dev": af(2, "p_s")}],
        "chains": [{"name": "in", "services": [], "ingress_port": "src", "exit_port": "to_m"}],
        "remote": {"chains": [dict({"name": "web", "id": 7, "role": "predecessor",
                                    "primary_port": "to_m", "standby_port": "to_s",
                                    "log_packets": 1 << 20, "log_mb": 256},
                                   **(pred_extra or {}))]},
    }), netns=ns["p"])
    return sink, standby, primary, pred


def start(sink, standby, primary, pred):
    for node in (sink, standby, primary, pred):
        node.start(wait=False)
    for node in (sink, standby, primary, pred):
        node.wait_ready(120)


def serve(L, ns, data, name="server"):
    """The HTTP server of `data` as /blob, on SERVER:PORT; returns its Popen."""
    blob_dir = L.path(f"www-{name}")
    os.makedirs(blob_dir)
    with open(os.path.join(blob_dir, "blob"), "wb") as f:
        f.write(data)
    server = L.spawn(name, lab.in_netns(ns["srv"], [
        "/usr/bin/python3", "-u", "-m", "http.server", str(PORT), "--bind", SERVER,
        "--directory", blob_dir]))
    lab.wait_until(lambda: "Serving HTTP" in L.proc_log(server) or server.poll() is not None,
                   30, "the HTTP server")
    lab.check(server.poll() is None, f"server: {L.proc_log(server)}")
    return server


# The client: HTTP/1.0 GET on a plain socket, every recv() timestamped with
# CLOCK_MONOTONIC (the clock of the managers' telemetry) and logged as
# "<ns> <bytes of the body so far>" into argv[3] at the end.  Its last line on
# stdout: "bytes N sha256 H ok True|False seconds S".
CLIENT_SCRIPT = r"""
import hashlib, socket, sys, time
host, port, path, want, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
t0 = time.monotonic()
s = socket.create_connection((host, port), timeout=120)
s.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
h, head, n, stamps = hashlib.sha256(), b"", 0, []
mono = time.monotonic_ns
while True:
    b = s.recv(1 << 18)
    t = mono()
    if not b:
        break
    if head is not None:
        head += b
        i = head.find(b"\r\n\r\n")
        if i < 0:
            continue
        b, head = head[i + 4:], None
    h.update(b)
    n += len(b)
    stamps.append((t, n))
s.close()
with open(log, "w") as f:
    f.write("".join(f"{t} {k}\n" for t, k in stamps))
ok = h.hexdigest() == want
print(f"bytes {n} sha256 {h.hexdigest()} ok {ok} seconds {time.monotonic() - t0:.2f}",
      flush=True)
sys.exit(0 if ok else 1)
"""


def download(L, ns, want, log_path, name="client"):
    """Start the client's download of /blob (SHA-256 `want`); returns its Popen."""
    return L.spawn(name, lab.in_netns(ns["cli"], [
        "/usr/bin/python3", "-c", CLIENT_SCRIPT, SERVER, str(PORT), "/blob", want, log_path]))


def read_log(path):
    """The client's reads: [(monotonic ns, body bytes so far)]."""
    out = []
    with open(path) as f:
        for line in f:
            t, n = line.split()
            out.append((int(t), int(n)))
    return out


def gaps(times, lo, hi):
    """The longest gap between consecutive times (ns, sorted) among those in
    [lo, hi], counting the last one before lo: (gap ns, its start, its end);
    (0, None, None) with fewer than two."""
    best = (0, None, None)
    prev = None
    for t in times:
        if t > hi:
            break
        if prev is not None and t >= lo and t - prev > best[0]:
            best = (t - prev, prev, t)
        prev = t
    return best


def mono_to_real():
    """CLOCK_REALTIME - CLOCK_MONOTONIC in ns (captures are stamped with the
    former, the managers' telemetry with the latter)."""
    best = None
    for _ in range(5):
        a = time.monotonic_ns()
        r = time.time_ns()
        b = time.monotonic_ns()
        if best is None or b - a < best[0]:
            best = (b - a, r - (a + b) // 2)
    return best[1]


class Capture:
    """dumpcap on interface `ifname` of namespace `netns`, kernel timestamps,
    frames cut at SNAPLEN, into a classic pcap file; stop() ends it (by its
    pid) and segments() reads it back as TCP segments."""

    def __init__(self, L, netns, ifname, path, bpf=None):
        if not os.access(DUMPCAP, os.X_OK):
            raise lab.TestSkip(f"{DUMPCAP} missing (Debian package tshark or wireshark-common)")
        self.L, self.path, self.ifname = L, path, ifname
        argv = [DUMPCAP, "-i", ifname, "-P", "-s", str(SNAPLEN), "-B", "32", "-q", "-w", path]
        if bpf:
            argv += ["-f", bpf]
        self.proc = L.spawn(f"dumpcap-{os.path.basename(path)}", lab.in_netns(netns, argv))
        # dumpcap has the interface once it created the file
        lab.wait_until(lambda: os.path.exists(path) or self.proc.poll() is not None, 10,
                       f"dumpcap on {ifname}")
        lab.check(self.proc.poll() is None, f"dumpcap on {ifname}: {L.proc_log(self.proc)}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        m = re.search(r"Packets received/dropped on interface '[^']*': (\d+)/(\d+)",
                      self.L.proc_log(self.proc))
        self.dropped = int(m.group(2)) if m else None
        return self

    def segments(self, sport=None):
        """The capture's TCP segments (of source port `sport`, if given)."""
        return [s for s in tcp_segments(pcap.read_pcap_records(self.path))
                if sport is None or s.sport == sport]


class Segment:
    __slots__ = ("t", "sport", "dport", "seq", "ack", "flags", "len", "shim_ts", "replay")

    def __repr__(self):
        return (f"Segment(t={self.t}, {self.sport}->{self.dport}, seq={self.seq}, "
                f"len={self.len}, flags={self.flags:#x}, shim_ts={self.shim_ts})")


def tcp_segments(records):
    """TCP segments of IPv4 frames [(realtime ns, frame, wire length)], with
    or without the 0x88B5 shim (its timestamp and REPLAY flag kept)."""
    out = []
    for t, f, _ in records:
        if len(f) < 14:
            continue
        et, off, shim_ts, replay = struct.unpack_from(">H", f, 12)[0], 14, 0, False
        if et == 0x88B5 and len(f) >= 26:
            replay = bool(f[15] & 1)
            et = struct.unpack_from(">H", f, 16)[0]
            shim_ts = struct.unpack_from(">Q", f, 18)[0]
            off = 26
        if et != 0x0800 or len(f) < off + 20 or f[off + 9] != 6:
            continue
        ihl = (f[off] & 15) * 4
        tot = struct.unpack_from(">H", f, off + 2)[0]
        tcp = off + ihl
        if len(f) < tcp + 14:
            continue
        s = Segment()
        s.t, s.shim_ts, s.replay = t, shim_ts, replay
        s.sport, s.dport, s.seq, s.ack = struct.unpack_from(">HHII", f, tcp)
        doff = (f[tcp + 12] >> 4) * 4
        s.flags = f[tcp + 13]
        s.len = tot - ihl - doff
        out.append(s)
    return out


def seq_le(a, b):
    """a <= b in TCP's 32-bit sequence space."""
    return ((b - a) & 0xFFFFFFFF) < (1 << 31)


def retransmissions(segs):
    """Data segments whose end is at or below the highest end sent before
    them (data sent again), in capture order."""
    out, high = [], None
    for s in segs:
        if s.len <= 0:
            continue
        end = (s.seq + s.len) & 0xFFFFFFFF
        if high is not None and seq_le(end, high):
            out.append(s)
        else:
            high = end
    return out


def rcv_next(segs, until):
    """The receiver's next expected sequence number after the data segments
    `segs` (as captured at its interface, in order) that arrived at or
    before time `until`: the first byte missing there."""
    nxt, ooo = None, {}
    for x in segs:
        if x.t > until:
            break
        if x.len <= 0:
            continue
        end = (x.seq + x.len) & 0xFFFFFFFF
        if nxt is None:
            nxt = x.seq
        if seq_le(x.seq, nxt) and not seq_le(end, nxt):
            nxt = end
            while nxt in ooo:
                nxt = ooo.pop(nxt)
        elif not seq_le(x.seq, nxt):
            ooo[x.seq] = end
    return nxt


def socket_info(ns_name, dst=CLIENT):
    """The server's TCP socket to `dst` as `ss -tin` shows it: {"rto": ms,
    "rtt": ms, "cwnd": ..., "retrans": ...}, or {} without one."""
    r = subprocess.run(lab.in_netns(ns_name, ["ss", "-tinH", "dst", dst]),
                       capture_output=True, text=True)
    out = {}
    for key, pat in (("rto", r"\brto:([\d.]+)"), ("rtt", r"\brtt:([\d.]+)/"),
                     ("cwnd", r"\bcwnd:(\d+)"), ("retrans", r"\bretrans:\d+/(\d+)"),
                     ("backoff", r"\bbackoff:(\d+)")):
        m = re.search(pat, r.stdout)
        if m:
            out[key] = float(m.group(1))
    return out
