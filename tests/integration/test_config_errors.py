#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Configuration errors name the file, line, column and field, and the manager
exits non-zero without touching anything; the command line behaves.

Each broken config below marks the offending token with «...».  For errors
found after parsing (unknown field, bad value, missing field, bad reference)
the manager must report "FILE:LINE:COL: PATH: ..." with LINE:COL exactly where
the token starts; for syntax errors (Jansson's position) LINE must be the
token's line and COL inside the token.  Also asserted:
  - with --check a broken config exits 1 and creates no runtime directory; a
    good one exits 0 and says OK;
  - without --check a broken config exits 1 before the EAL starts (no runtime
    directory for its file prefix);
  - --help and --version exit 0, --help lists every long option; an unknown
    option or a missing --config exits 2;
  - a node whose NF binary does not exist, or whose NF exits before it
    registers, exits non-zero, stops the NFs it did launch, and leaves no
    runtime files.
"""
import os
import re
import subprocess

from onvm import lab

GOOD = """{
  "node": {"name": "good", "lcores": "0"},
  "pool": {"mbufs": 4095},
  "ports": [{"name": "in", "dev": "net_null0"}, {"name": "out", "dev": "net_null1"}],
  "nfs": [{"binary": "simple_forward", "service": 1, "args": []}],
  "chains": [{"name": "main", "services": [1], "ingress_port": "in", "exit_port": "out"}],
  "flow_rules": [{"chain": "main", "src": "198.18.0.0/15", "proto": "udp", "dport": [1000, 2000]}],
  "default_chain": "main"
}
"""

# (name, text with «token», expected path, message regex, kind)
CASES = [
    ("unknown_field", """{
  "ports": [{"name": "in", "dev": "net_null0"}],
  "nfs": [{"binary": "simple_forward", "service": 1}],
  "chains": [
    {"name": "main", "services": [1], "ingress_port": "in",
     "exit_prot": «"in"»}
  ]
}
""", "chains[0].exit_prot", r"unknown field", "semantic"),
    ("service_range", """{
  "nfs": [
    {"binary": "simple_forward", "service": 1},
    {"binary": "bridge",
       "service":   «99»,
       "args": ["-n"]}
  ]
}
""", "nfs[1].service", r"99 is out of range 1\.\.63", "semantic"),
    ("wrong_type", """{
  "stats": {
    "interval_ms": «"1000"»
  }
}
""", "stats.interval_ms", r"expected an integer", "semantic"),
    ("missing_binary", """{
  "nfs": [
         «{"service": 1, "args": ["-x"]}»
  ]
}
""", "nfs[0]", r'missing required field "binary"', "semantic"),
    ("unknown_port", """{
  "ports": [{"name": "in", "dev": "net_null0"}],
  "chains": [{"name": "main", "services": [1],
              "ingress_port": "in", "exit_port": «"nope"»}]
}
""", "chains[0].exit_port", r'no port named "nope"', "semantic"),
    ("unset_variable", """{
  "ports": [
    {"name": "in",
     "dev": «"net_pcap0,rx_pcap=${ONVM_IT_UNSET_VARIABLE}/x.pcap"»}
  ]
}
""", "ports[0].dev", r"variable \$\{ONVM_IT_UNSET_VARIABLE\} is not set", "semantic"),
    ("ring_not_pow2", """{
  "rings": {"nf_size": «1000», "port_size": 1024}
}
""", "rings.nf_size", r"power of two", "semantic"),
    ("duplicate_chain", """{
  "nfs": [{"binary": "simple_forward", "service": 1}],
  "chains": [
    {"name": "a", "services": [1]},
    «{"name": "a", "services": [1]}»
  ]
}
""", "chains[1]", r'duplicate chain name "a"', "semantic"),
    ("tab_indent", "{\n\t\"ports\": [\n\t\t{\"name\": \"p\", \"dev\": \"net_null0\"},\n"
                   "\t\t«{\"name\": \"p\", \"dev\": \"net_null1\"}»\n\t]\n}\n",
     "ports[1]", r'duplicate port name "p"', "semantic"),
    ("chain_service_zero", """{
  "chains": [{"name": "c", "services": [1, 2, «0»]}]
}
""", "chains[0].services[2]", r"0 is out of range 1\.\.63", "semantic"),
    ("bad_prefix", """{
  "nfs": [{"binary": "simple_forward", "service": 1}],
  "chains": [{"name": "main", "services": [1]}],
  "flow_rules": [
    {"chain": "main", "proto": "udp"},
    {"chain": "main", "src": «"198.18.0.0/33"»}
  ]
}
""", "flow_rules[1].src", r"the length 33 is over 32", "semantic"),
    ("default_chain", """{
  "nfs": [{"binary": "simple_forward", "service": 1}],
  "chains": [{"name": "main", "services": [1]}],
  "default_chain": «"other"»
}
""", "default_chain", r'no chain named "other"', "semantic"),
    ("top_level_unknown", """{
  "node": {"name": "n"},
  "nodes": «{"name": "m"}»
}
""", "nodes", r"unknown field", "semantic"),
    ("bad_node_name", """{
  "node": {"name": «"no spaces"»}
}
""", "node.name", r"use letters, digits", "semantic"),
    ("trailing_comma", """{
  "ports": [
    {"name": "a", "dev": "net_null0"},
  «]»
}
""", "syntax", r"", "syntax"),
    ("duplicate_key", """{
  "node": {"name": "x",
           «"name"»: "y"}
}
""", "syntax", r"duplicate object key", "syntax"),
    ("missing_comma", """{
  "ports": [
    {"name": "a" «"dev"»: "net_null0"}
  ]
}
""", "syntax", r"", "syntax"),
]


def locate(marked):
    """Strip the «» markers; return (text, line, first col, last col) of the token."""
    i = marked.index("«")
    text = marked.replace("«", "", 1)
    j = text.index("»")
    text = text.replace("»", "", 1)
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return text, line, col, col + (j - i) - 1


def mgr(*args, timeout=30, env=None):
    p = subprocess.run([lab.MGR, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check_error(L, name, path, text, line, c0, c1, field, msg, kind):
    with open(path, "w") as f:
        f.write(text)
    rc, out, err = mgr("--check", "--config", path)
    where = f"{name}: line {line} col {c0}" + (f"..{c1}" if kind == "syntax" else "")
    m = re.search(re.escape(path) + r":(\d+):(\d+): (\S+): (.*)", err)
    if not L.expect(rc == 1 and m is not None,
                    f"{name}: --check exit {rc}, stderr {err.strip()!r} (want exit 1, {where})"):
        return
    got_line, got_col, got_field, got_msg = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
    col_ok = got_col == c0 if kind == "semantic" else c0 <= got_col <= c1
    L.expect(got_line == line and col_ok and got_field == field and re.search(msg, got_msg),
             f"{name}: got {got_line}:{got_col}: {got_field} {got_msg!r}; want {where}: "
             f"{field}: /{msg}/")
    print(f"{name}: {err.strip()}")


def main(L):
    for name, marked, field, msg, kind in CASES:
        text, line, c0, c1 = locate(marked)
        check_error(L, name, L.path(f"{name}.json"), text, line, c0, c1, field, msg, kind)

    empty = L.path("empty.json")
    open(empty, "w").close()
    rc, _, err = mgr("--check", "--config", empty)
    L.expect(rc == 1 and f"{empty}:1:1: syntax:" in err, f"empty file: exit {rc}, {err!r}")

    # A broken config never gets as far as the EAL: no runtime directory.
    prefix = L.new_prefix()
    bad = L.path("bad-run.json")
    with open(bad, "w") as f:
        f.write('{"node": {"file_prefix": "%s"}, "nfs": [{"binary": "x", "service": 64}]}' % prefix)
    for args in (["--check", "--config", bad], ["--config", bad]):
        rc, _, err = mgr(*args)
        L.expect(rc == 1 and "nfs[0].service" in err, f"{args}: exit {rc}, {err!r}")
        L.expect(not os.path.exists(os.path.join(lab.RUNTIME_ROOT, prefix)),
                 f"{args}: created {lab.RUNTIME_ROOT}/{prefix}")

    good = L.path("good.json")
    with open(good, "w") as f:
        f.write(GOOD)
    rc, out, err = mgr("--check", "--config", good)
    L.expect(rc == 0 and "OK" in out, f"good config: --check exit {rc}, {out!r} {err!r}")
    L.expect("1 NFs" in out and "2 ports" in out and "1 flow rules" in out,
             f"good config: --check summary {out.strip()!r}")

    rc, out, _ = mgr("--help")
    L.expect(rc == 0, f"--help exit {rc}")
    for opt in ("--config", "--check", "--nf-path", "--stats-ms", "--quiet", "--help",
                "--version"):
        L.expect(opt in out, f"--help does not list {opt}")
    rc, out, _ = mgr("--version")
    L.expect(rc == 0 and re.match(r"onvm_mgr \d+\.\d+", out), f"--version: exit {rc}, {out!r}")
    rc, _, err = mgr("--no-such-option")
    L.expect(rc == 2 and "--help" in err, f"unknown option: exit {rc}, {err!r}")
    rc, _, err = mgr()
    L.expect(rc == 2 and "--config" in err, f"no --config: exit {rc}, {err!r}")

    # NF start failures: the node gives up, stops what it launched, removes its files.
    for name, nfs, want in [
        ("run_missing_binary", [{"binary": "simple_forward", "service": 1},
                            {"binary": "no_such_nf", "service": 2}],
         r"binary 'no_such_nf' not found"),
        ("run_nf_exits_early", [{"binary": "simple_forward", "service": 1},
                            {"binary": "/bin/false", "service": 2}],
         r"exited with status 1 before it registered"),
    ]:
        node = L.node(name, {"ports": [{"name": "p", "dev": "net_null0"}], "nfs": nfs,
                             "chains": [{"name": "c", "services": [1, 2], "ingress_port": "p",
                                         "exit_port": "p"}]}).start(wait=False)
        rc = node.wait_exit(60)
        log = node.log()
        L.expect(rc not in (0, None), f"{name}: manager exit status {rc}, want non-zero")
        L.expect(re.search(want, log), f"{name}: log does not say /{want}/")
        L.expect("ONVM_MGR_READY" not in log, f"{name}: the node said READY")
        L.expect(not node.leftover_nfs, f"{name}: NFs left running: {node.leftover_nfs}")
        L.expect(not node.runtime_leftovers(),
                 f"{name}: runtime files left: {node.runtime_leftovers()}")
        if name == "run_nf_exits_early":  # launched three times (start_retries 2)
            tries = len(re.findall(r"'false' \(pid \d+\) exited with status 1 before", log))
            L.expect(tries == 3 and "launching it again (2 of nf_defaults.start_retries 2)"
                     in log, f"{name}: {tries} launches of the failing NF, want 3")
        print(f"{name}: exit {rc}, launched NF pids {sorted(node.nf_pids)} all gone")

    # An NF whose first start fails (as DPDK's secondary EAL init does now
    # and then) is launched again: the node starts, the relaunch counted.
    marker = L.path("failed-once")
    once = L.path("fails_once.sh")
    with open(once, "w") as f:
        f.write(f"#!/bin/sh\n[ -e {marker} ] || {{ : > {marker}; exit 1; }}\n"
                f"exec {lab.nf_binary('simple_forward')} \"$@\"\n")
    os.chmod(once, 0o755)
    node = L.node("run_nf_fails_once", {
        "ports": [{"name": "p", "dev": "net_null0"}],
        "nfs": [{"binary": "simple_forward", "service": 1}, {"binary": once, "service": 2}],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "p",
                    "exit_port": "p"}]}).start()
    info = node.query("/onvm/info")
    L.expect(info.get("nf_start_relaunches") == 1 and info.get("nf_start_failures") == 0,
             f"run_nf_fails_once: /onvm/info {info}")
    L.expect(len(node.nfs()) == 2, f"run_nf_fails_once: NFs {node.nfs()}")
    node.stop()
    print(f"run_nf_fails_once: started after one relaunch")


if __name__ == "__main__":
    lab.run("config_errors", main)
