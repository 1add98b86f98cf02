#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""tools/reinforce.lua decodes FTC's piggyback (0x88B5 version 2): a capture
of frames from the real encoder (make_ftc_pcap) is read by tshark with the
dissector, and the decoded fields are compared with what was written --
and the packet behind the header is handed on (IPv4, 802.1Q).  Skipped
(exit 77) without tshark."""
import os
import subprocess
import sys
import tempfile

TSHARK = "/usr/bin/tshark"
FIELDS = ["reinforce_ftc.flags.propagate", "reinforce_ftc.logs", "reinforce_ftc.commits",
          "reinforce_ftc.log.instance", "reinforce_ftc.log.seq", "reinforce_ftc.log.part",
          "reinforce_ftc.log.parts", "reinforce_ftc.record.region",
          "reinforce_ftc.record.offset", "reinforce_ftc.record.len",
          "reinforce_ftc.commit.instance", "reinforce_ftc.commit.kind", "reinforce_ftc.commit.seq",
          "ip.src", "vlan.id", "reinforce_ftc_xfer.op", "reinforce_ftc_xfer.chain",
          "reinforce_ftc_xfer.from", "reinforce_ftc_xfer.instance", "reinforce_ftc_xfer.seq",
          "reinforce_ftc_xfer.index", "reinforce_ftc_xfer.offset", "reinforce_ftc_xfer.len"]
WANT = [
    {"reinforce_ftc.flags.propagate": "0", "reinforce_ftc.logs": "2",
     "reinforce_ftc.commits": "2", "reinforce_ftc.log.instance": "3,5",
     "reinforce_ftc.log.seq": "41,1099511627776", "reinforce_ftc.log.part": "0,1",
     "reinforce_ftc.log.parts": "1,2", "reinforce_ftc.record.region": "0,2,2",
     "reinforce_ftc.record.offset": "4096,7,7", "reinforce_ftc.record.len": "8,3,3",
     "reinforce_ftc.commit.instance": "3,9", "reinforce_ftc.commit.kind": "0,1",
     "reinforce_ftc.commit.seq": "40,7", "ip.src": "198.18.0.1", "vlan.id": ""},
    {"reinforce_ftc.flags.propagate": "1", "reinforce_ftc.logs": "0",
     "reinforce_ftc.commits": "2", "reinforce_ftc.commit.instance": "3,9",
     "reinforce_ftc.commit.kind": "0,1", "reinforce_ftc.commit.seq": "40,7", "ip.src": ""},
    {"reinforce_ftc.logs": "1", "reinforce_ftc.log.instance": "3", "vlan.id": "42",
     "ip.src": "198.18.0.1"},
    {"reinforce_ftc_xfer.op": "2", "reinforce_ftc_xfer.chain": "29", "reinforce_ftc_xfer.from": "2",
     "reinforce_ftc_xfer.instance": "1", "reinforce_ftc_xfer.seq": "40",
     "reinforce_ftc_xfer.index": "3", "reinforce_ftc_xfer.offset": "4096",
     "reinforce_ftc_xfer.len": "8", "reinforce_ftc.logs": ""},
    {"reinforce_ftc_xfer.op": "1", "reinforce_ftc_xfer.from": "1", "reinforce_ftc_xfer.seq": "0"},
]


def main():
    if not os.access(TSHARK, os.X_OK):
        print("SKIP: no tshark")
        return 77
    maker, lua = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="onvm-ftc-dissector-") as tmp:
        cap = os.path.join(tmp, "ftc.pcap")
        subprocess.run([maker, cap], check=True)
        cmd = [TSHARK, "-X", "lua_script:" + lua, "-r", cap, "-T", "fields", "-E",
               "separator=|", "-E", "aggregator=,"]
        for f in FIELDS:
            cmd += ["-e", f]
        res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        print(f"FAIL: tshark exited {res.returncode}\n{res.stderr}")
        return 1
    rows = [dict(zip(FIELDS, line.split("|"))) for line in res.stdout.splitlines()]
    bad = 0
    if len(rows) != len(WANT):
        print(f"FAIL: {len(rows)} frames decoded, want {len(WANT)}\n{res.stdout}{res.stderr}")
        return 1
    for k, (row, want) in enumerate(zip(rows, WANT)):
        for field, value in want.items():
            if row.get(field) != value:
                print(f"FAIL: frame {k + 1}: {field} = {row.get(field)!r}, want {value!r}")
                bad += 1
    if bad:
        return 1
    print(f"PASS: {len(rows)} frames decoded as written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
