#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""tools/reinforce.lua decodes both EtherTypes of remote resiliency: a
capture written by make_wire_pcap (RSync frames from the real encoder, shim
frames built by hand from the documented layout) is read by tshark with the
dissector, and the decoded fields are compared with what was written.
Skipped (exit 77) without tshark.

As root, tshark 4.0 (Debian 12) warns "Running as user root" but still runs
Lua: -X lua_script loads the script, and Debian's init.lua sets
run_user_scripts_when_superuser = true.  Should a build disable Lua, the
dissector's fields come out empty and the test fails saying so."""
import os
import subprocess
import sys
import tempfile

TSHARK = "/usr/bin/tshark"
HMAC_HEX = object()  # 32 bytes of hex: an HMAC is shown

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
                  "reinforce_shim.flags.replay", "ip.src", "ip.dst", "udp.dstport", "vlan.id",
                  "reinforce_rsync.key_id", "reinforce_rsync.hmac", "reinforce_rsync.meta.txts_entries",
                  "reinforce_rsync.meta.state_bytes", "reinforce_rsync.txts.sport", "reinforce_rsync.offset",
                  "reinforce_rsync.replay.newest_ts", "reinforce_rsync.replay.last_ts",
                  "reinforce_rsync.heartbeat.cut_ts", "reinforce_rsync.len", "reinforce_shim.version",
                  "reinforce_shim.inner_type", "reinforce_rsync.rec.region",
                  "reinforce_rsync.rec.offset", "reinforce_rsync.rec.len", "reinforce_rsync.role",
                  "reinforce_rsync.sender_run", "reinforce_rsync.receiver_run",
                  "reinforce_rsync.replay_ack.next_ts", "reinforce_rsync.replay_ack.gap_ts",
                  "reinforce_rsync.meta.pkts", "reinforce_rsync.meta.clock"]
        cmd = [TSHARK, "-X", "lua_script:" + lua, "-r", cap, "-T", "fields", "-E",
               "separator=|"]
        for f in fields:
            cmd += ["-e", f]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            # unknown -e fields (the Lua script did not load) end up here
            print(f"FAIL: tshark exited {res.returncode}")
            print(res.stderr)
            return 1
    rows = [dict(zip(fields, line.split("|"))) for line in res.stdout.splitlines()]
    if not any(r.get("reinforce_rsync.type") for r in rows):
        print("FAIL: no reinforce_rsync field decoded -- did tshark load the Lua script?")
        print(res.stderr)
        return 1
    want = [
        {"reinforce_rsync.type": "1", "reinforce_rsync.chain": "7", "reinforce_rsync.epoch": "3", "reinforce_rsync.txid": "42",
         "reinforce_rsync.frag_seq": "0", "reinforce_rsync.frag_count": "3", "reinforce_rsync.region": "65535",
         "reinforce_rsync.meta.prev_txid": "41", "reinforce_rsync.meta.cut_ts": "1000",
         "reinforce_rsync.meta.txts_entries": "1", "reinforce_rsync.meta.state_bytes": "100",
         "reinforce_rsync.meta.pkts": "3", "reinforce_rsync.meta.clock": "5000000000",
         "reinforce_rsync.len": "64", "reinforce_rsync.flags.hmac": "False", "reinforce_rsync.hmac": "",
         "reinforce_rsync.role": "2", "reinforce_rsync.sender_run": "0x1111111111111111",
         "reinforce_rsync.receiver_run": "0x2222222222222222"},
        {"reinforce_rsync.type": "1", "reinforce_rsync.frag_seq": "1", "reinforce_rsync.region": "65534",
         "reinforce_rsync.txts.dst": "198.19.0.2", "reinforce_rsync.txts.ts": "1234",
         "reinforce_rsync.txts.sport": "40000", "reinforce_rsync.len": "24"},
        {"reinforce_rsync.type": "6", "reinforce_rsync.frag_seq": "2", "reinforce_rsync.region": "0",
         "reinforce_rsync.offset": "0", "reinforce_rsync.len": "100",
         "reinforce_rsync.rec.region": "4", "reinforce_rsync.rec.offset": "8192",
         "reinforce_rsync.rec.len": "88"},
        {"reinforce_rsync.type": "2", "reinforce_rsync.txid": "42", "reinforce_rsync.role": "3"},
        {"reinforce_rsync.type": "3", "reinforce_rsync.txid": "42"},
        {"reinforce_rsync.type": "4", "reinforce_rsync.txid": "42"},
        {"reinforce_rsync.type": "5", "reinforce_rsync.txid": "43", "reinforce_rsync.abort.through": "45"},
        {"reinforce_rsync.type": "7", "reinforce_rsync.trim.watermark": "1000"},
        {"reinforce_rsync.type": "8", "reinforce_rsync.replay.after_ts": "1000",
         "reinforce_rsync.replay.newest_ts": "1500", "reinforce_rsync.flags.hmac": "True",
         "reinforce_rsync.key_id": "9", "reinforce_rsync.hmac": HMAC_HEX},
        {"reinforce_rsync.type": "9", "reinforce_rsync.replay.count": "500",
         "reinforce_rsync.replay.last_ts": "1500", "reinforce_rsync.flags.hmac": "True",
         "reinforce_rsync.hmac": HMAC_HEX},
        {"reinforce_rsync.type": "10", "reinforce_rsync.heartbeat.txid": "42",
         "reinforce_rsync.heartbeat.cut_ts": "1000", "reinforce_rsync.hmac": HMAC_HEX},
        {"reinforce_rsync.type": "11", "reinforce_rsync.role": "3",
         "reinforce_rsync.replay_ack.next_ts": "1200", "reinforce_rsync.replay_ack.gap_ts": "1300"},
        {"reinforce_shim.ts": "1001", "reinforce_shim.flags.replay": "False",
         "reinforce_shim.version": "1", "reinforce_shim.inner_type": "0x0800",
         "ip.src": "198.18.0.1", "ip.dst": "198.19.0.2", "udp.dstport": "53",
         "reinforce_rsync.type": ""},
        {"reinforce_shim.ts": "1002", "reinforce_shim.flags.replay": "True", "vlan.id": "42",
         "reinforce_shim.inner_type": "0x8100", "ip.src": "198.18.0.1", "udp.dstport": "53"},
    ]
    fails = 0
    if len(rows) != len(want):
        print(f"FAIL: {len(rows)} frames decoded, want {len(want)}")
        return 1
    for i, (got, exp) in enumerate(zip(rows, want)):
        for k, v in exp.items():
            # tshark prints booleans as True/False or 1/0 depending on the version
            g = {"1": "True", "0": "False"}.get(got[k], got[k]) if v in ("True", "False") else got[k]
            if v is HMAC_HEX:
                ok = len(g.replace(":", "")) == 64 and all(c in "0123456789abcdef:" for c in g)
            else:
                ok = g == v
            if not ok:
                print(f"FAIL frame {i + 1}: {k} = {got[k]!r}, want "
                      + ("32 bytes" if v is HMAC_HEX else repr(v)))
                fails += 1
    print(f"{len(rows)} frames, {sum(len(w) for w in want)} fields checked, {fails} wrong")
    if fails:
        print(res.stderr)
    return 1 if fails else 0

if __name__ == "__main__":
    sys.exit(main())
