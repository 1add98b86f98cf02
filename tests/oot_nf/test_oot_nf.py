#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""An NF built out of tree, only against the installed libnf.pc, runs in a chain.

`meson install --destdir` puts libnf (headers, libnf.a, libnf.pc) in a
temporary root; the test relocates libnf.pc's prefix into that root (what an
install to a custom prefix gives) and compiles tests/oot_nf/oot_nf.c with
nothing but `cc oot_nf.c $(pkg-config --cflags --libs libnf)` -- no include
path into the source tree.  The binary then serves a chain: every packet of
smtp.pcap comes out unchanged and in order, and the NF's own counters (printed
on exit) say it saw them all as IPv4.
"""
import glob
import os
import re
import subprocess

from onvm import lab, pcap, traces


def build_oot_nf(L):
    root = L.path("root")
    subprocess.run(["meson", "install", "-C", lab.BUILD, "--destdir", root, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    pcs = glob.glob(os.path.join(root, "**", "libnf.pc"), recursive=True)
    lab.check(len(pcs) == 1, f"meson install put {len(pcs)} libnf.pc files under {root}")
    with open(pcs[0]) as f:
        pc = f.read()
    m = re.search(r"^prefix=(.*)$", pc, re.M)
    lab.check(m is not None, "libnf.pc has no prefix= line")
    pcdir = L.path("pkgconfig")
    os.makedirs(pcdir)
    with open(os.path.join(pcdir, "libnf.pc"), "w") as f:
        f.write(pc.replace(m.group(0), "prefix=" + root + m.group(1)))
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libnf"], env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    lab.check(not any(lab.SRC in f for f in flags),
              f"pkg-config flags point into the source tree: {flags}")
    binary = L.path("oot_nf")
    src = os.path.join(lab.SRC, "tests", "oot_nf", "oot_nf.c")
    sanitize = os.environ.get("ONVM_SANITIZE", "none")
    extra = [] if sanitize in ("", "none") else [f"-fsanitize={sanitize}"]
    cc = subprocess.run(["cc", src, *flags, *extra, "-o", binary], capture_output=True, text=True)
    lab.check(cc.returncode == 0, f"out-of-tree build failed:\n{cc.stderr}")
    return binary


def test(L):
    binary = build_oot_nf(L)
    path = traces.trace("smtp.pcap")
    frames = pcap.read_pcap(path)
    out = L.path("out.pcap")
    node = L.node("oot", {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={out}"}],
        "nfs": [{"binary": binary, "service": 1}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }).start()
    node.wait_port("in", "tx", len(frames))
    nfs = node.nf_by(service=1)
    L.expect(len(nfs) == 1 and nfs[0]["name"] == "oot_nf" and nfs[0]["launched"] == 1,
             f"NF in /onvm/nfs: {nfs}")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    pcap.compare_frames(pcap.read_capture_out(out), frames, "output capture")
    m = re.search(r"OOT_NF ipv4=(\d+) other=(\d+)", node.log())
    lab.check(m is not None, "the out-of-tree NF did not print its counters")
    L.expect(int(m.group(1)) == len(frames) and int(m.group(2)) == 0,
             f"out-of-tree NF counted ipv4={m.group(1)} other={m.group(2)}, "
             f"want {len(frames)} and 0")


if __name__ == "__main__":
    lab.Lab("oot_nf").run(test)
