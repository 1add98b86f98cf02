#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""tools/reinforce.lua decodes both EtherTypes of remote resiliency: a
capture written by the real encoders (make_wire_pcap) is read by tshark with
the dissector, and every decoded field is compared with what was encoded.
Skipped (exit 77) without tshark."""
import os
import subprocess
import sys
import tempfile

TSHARK = "/usr/bin/tshark"

def main():
    if not os.access(TSHARK, os.X_OK):
        print("SKIP: no tshark")
        return 77
    maker, lua = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="onvm-dissector-") as tmp:
        cap = os.path.join(tmp, "wire.pcap")
        subprocess.run([maker, cap], check=True)
        fields = ["reinforce_rsync.type", "reinforce_rsync.chain", "reinforce_rsync.epoch", "reinforce_rsync.txid", "reinforce_rsync.frag_seq",
                  "reinforce_rsync.frag_count", "reinforce_rsync.region", "reinforce_rsync.meta.prev_txid",
                  "reinforce_rsync.meta.cut_ts", "reinforce_rsync.txts.dst", "reinforce_rsync.txts.ts", "reinforce_rsync.abort.through",
                  "reinforce_rsync.trim.watermark", "reinforce_rsync.replay.after_ts", "reinforce_rsync.replay.count",
                  "reinforce_rsync.heartbeat.txid", "reinforce_rsync.flags.hmac", "reinforce_shim.ts",
                  "reinforce_shim.flags.replay", "ip.src", "ip.dst", "udp.dstport", "vlan.id"]
        cmd = [TSHARK, "-X", "lua_script:" + lua, "-r", cap, "-T", "fields", "-E",
               "separator=|"]
        for f in fields:
            cmd += ["-e", f]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [dict(zip(fields, line.split("|"))) for line in out.splitlines()]
    want = [
        {"reinforce_rsync.type": "1", "reinforce_rsync.chain": "7", "reinforce_rsync.epoch": "3", "reinforce_rsync.txid": "42",
         "reinforce_rsync.frag_seq": "0", "reinforce_rsync.frag_count": "3", "reinforce_rsync.region": "65535",
         "reinforce_rsync.meta.prev_txid": "41", "reinforce_rsync.meta.cut_ts": "1000"},
        {"reinforce_rsync.type": "1", "reinforce_rsync.frag_seq": "1", "reinforce_rsync.region": "65534",
         "reinforce_rsync.txts.dst": "198.19.0.2", "reinforce_rsync.txts.ts": "1234"},
        {"reinforce_rsync.type": "6", "reinforce_rsync.frag_seq": "2", "reinforce_rsync.region": "4"},
        {"reinforce_rsync.type": "2", "reinforce_rsync.txid": "42"},
        {"reinforce_rsync.type": "3", "reinforce_rsync.txid": "42"},
        {"reinforce_rsync.type": "4", "reinforce_rsync.txid": "42"},
        {"reinforce_rsync.type": "5", "reinforce_rsync.txid": "43", "reinforce_rsync.abort.through": "45"},
        {"reinforce_rsync.type": "7", "reinforce_rsync.trim.watermark": "1000"},
        {"reinforce_rsync.type": "8", "reinforce_rsync.replay.after_ts": "1000", "reinforce_rsync.flags.hmac": "True"},
        {"reinforce_rsync.type": "9", "reinforce_rsync.replay.count": "500", "reinforce_rsync.flags.hmac": "True"},
        {"reinforce_rsync.type": "10", "reinforce_rsync.heartbeat.txid": "42"},
        {"reinforce_shim.ts": "1001", "reinforce_shim.flags.replay": "False",
         "ip.src": "198.18.0.1", "ip.dst": "198.19.0.2", "udp.dstport": "53"},
        {"reinforce_shim.ts": "1002", "reinforce_shim.flags.replay": "True", "vlan.id": "42",
         "ip.src": "198.18.0.1", "udp.dstport": "53"},
    ]
    fails = 0
    if len(rows) != len(want):
        print(f"FAIL: {len(rows)} frames decoded, want {len(want)}")
        return 1
    for i, (got, exp) in enumerate(zip(rows, want)):
        for k, v in exp.items():
            # tshark prints booleans as True/False or 1/0 depending on the version
            g = {"1": "True", "0": "False"}.get(got[k], got[k]) if v in ("True", "False") else got[k]
            if g != v:
                print(f"FAIL frame {i + 1}: {k} = {got[k]!r}, want {v!r}")
                fails += 1
    print(f"{len(rows)} frames, {sum(len(w) for w in want)} fields checked, {fails} wrong")
    return 1 if fails else 0

if __name__ == "__main__":
    sys.exit(main())
