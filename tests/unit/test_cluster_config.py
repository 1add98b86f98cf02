#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.cluster_config.render: a node's configuration for a chain's role,
from the node's own part and the chain's declared config."""
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
from onvm.cluster_config import RenderError, render  # noqa: E402

BASE = {
    "node": {"name": "n1", "lcores": "0@1"},
    "ports": [{"name": "from_p", "dev": "net_af_packet0,iface=a"},
              {"name": "to_m", "dev": "net_af_packet1,iface=b"},
              {"name": "out", "dev": "net_af_packet2,iface=c"}],
    "bfd": {"sessions": [{"name": "to_p", "port": "from_p", "local": "198.18.3.2",
                          "peer": "198.18.3.1"}]},
    "state": {"pool_mb": 32},
    "cluster": {"chains": {"web": {"ingress_port": "from_p", "exit_port": "out",
                                   "sync_port": "to_m"}}},
}
SPEC = {"nfs": ["simple_forward"], "scheme": "remote", "predecessor": "pred", "standbys": 1,
        "config": {"id": 7, "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
                   "services": [1], "chain": {"name": "c"},
                   "remote": {"stage_close_us": 200},
                   "primary": {"stages": 4, "retrans_us": 5000},
                   "standby": {"window": 32, "reprotect": True},
                   "manager": {"state": {"pool_mb": 128}, "pool": {"mbufs": 65535}}}}


class Render(unittest.TestCase):
    def test_standby(self):
        cfg = render(BASE, "web", SPEC, "standby", 3)
        self.assertNotIn("cluster", cfg)
        self.assertEqual(cfg["ports"], BASE["ports"])
        self.assertEqual(cfg["bfd"], BASE["bfd"])
        self.assertEqual(cfg["nfs"], SPEC["config"]["nfs"])
        self.assertEqual(cfg["chains"], [{"name": "c", "services": [1],
                                          "ingress_port": "from_p", "exit_port": "out"}])
        self.assertEqual(cfg["remote"]["chains"], [{
            "name": "web", "id": 7, "role": "standby", "chain": "c",
            "predecessor_port": "from_p", "primary_port": "to_m", "epoch": 3,
            "stage_close_us": 200, "window": 32, "reprotect": True}])
        # the node's own sections win; the chain's fill what it lacks
        self.assertEqual(cfg["state"], {"pool_mb": 32})
        self.assertEqual(cfg["pool"], {"mbufs": 65535})

    def test_primary(self):
        entry = render(BASE, "web", SPEC, "primary", 1)["remote"]["chains"][0]
        self.assertEqual(entry["role"], "primary")
        self.assertEqual(entry["standby_port"], "to_m")
        self.assertNotIn("primary_port", entry)
        self.assertEqual((entry["stages"], entry["retrans_us"]), (4, 5000))
        self.assertNotIn("window", entry)

    def test_inputs_untouched(self):
        base, spec = copy.deepcopy(BASE), copy.deepcopy(SPEC)
        cfg = render(base, "web", spec, "standby", 2)
        cfg["nfs"][0]["name"] = "changed"
        cfg["ports"].append({})
        self.assertEqual((base, spec), (BASE, SPEC))

    def test_other_chains_kept(self):
        base = dict(copy.deepcopy(BASE), nfs=[{"name": "mon", "service": 9}],
                    chains=[{"name": "local", "services": [9]}],
                    remote={"chains": [{"name": "other", "id": 8}]})
        cfg = render(base, "web", SPEC, "standby", 2)
        self.assertEqual([n["name"] for n in cfg["nfs"]], ["mon", "fwd"])
        self.assertEqual([c["name"] for c in cfg["chains"]], ["local", "c"])
        self.assertEqual([c["name"] for c in cfg["remote"]["chains"]], ["other", "web"])

    def refused(self, why, base=BASE, spec=SPEC, role="standby", epoch=2, name="web"):
        with self.assertRaises(RenderError) as e:
            render(base, name, spec, role, epoch)
        self.assertIn(why, str(e.exception))

    def test_refusals(self):
        self.refused("no ports for chain 'db'", name="db")
        self.refused("role 'predecessor'", role="predecessor")
        self.refused("integer 1-2147483647", epoch=0)
        self.refused("integer 1-2147483647", epoch=True)
        self.refused("integer 1-2147483647", epoch=1 << 31)
        no_sync = copy.deepcopy(BASE)
        del no_sync["cluster"]["chains"]["web"]["sync_port"]
        self.refused("needs 'sync_port'", base=no_sync)
        bad_port = copy.deepcopy(BASE)
        bad_port["cluster"]["chains"]["web"]["exit_port"] = "nowhere"
        self.refused("no port 'nowhere'", base=bad_port)
        self.refused("'config' is an object", spec=dict(SPEC, config=None))
        for k in ("id", "nfs", "services"):
            spec = copy.deepcopy(SPEC)
            del spec["config"][k]
            self.refused(f"needs '{k}'", spec=spec)
        own = copy.deepcopy(SPEC)
        own["config"]["standby"]["epoch"] = 9
        self.refused("sets epoch", spec=own)
        clash = dict(copy.deepcopy(BASE), chains=[{"name": "c", "services": [1]}])
        self.refused("a chain 'c' of its own", base=clash)

    def test_what_onvm_mgr_would_refuse(self):
        # (names and ids onvm_mgr's parser refuses: config_remote.c)
        self.refused("letters, digits or '_'", name="web-1")
        self.refused("letters, digits or '_'", name="w" * 32)
        for cid in (0, -1, 70000, True, "7"):
            spec = copy.deepcopy(SPEC)
            spec["config"]["id"] = cid
            self.refused("'id' (its id on the wire, 1-65535)", spec=spec)
        for local in (5, [1], "", "c.d"):
            spec = copy.deepcopy(SPEC)
            spec["config"]["chain"]["name"] = local
            self.refused("'chain.name'", spec=spec)
        same = copy.deepcopy(BASE)
        same["cluster"]["chains"]["web"]["exit_port"] = "from_p"
        self.refused("three ports", base=same)
        for other in ({"name": "web", "id": 8}, {"name": "db", "id": 7}):
            self.refused("a remote chain named 'web' or with id 7",
                         base=dict(copy.deepcopy(BASE), remote={"chains": [other]}))
        for k in ("services", "ingress_port", "exit_port"):
            spec = copy.deepcopy(SPEC)
            spec["config"]["chain"][k] = "x"
            self.refused(f"'chain' sets {k}", spec=spec)
        spec = copy.deepcopy(SPEC)
        spec["config"]["manager"]["containers"] = {}
        self.refused("may set state, pool, not containers", spec=spec)
        spec = copy.deepcopy(SPEC)
        spec["config"]["extra"] = 1
        self.refused("unknown key(s) extra", spec=spec)

    def test_malformed_outside_input(self):
        # a spec from etcd and a node's file are outside input: refused
        # with a reason, never an AttributeError, TypeError or a recursion
        deep = []
        for _ in range(600):
            deep = [deep]
        spec = copy.deepcopy(SPEC)
        spec["config"]["nfs"] = [deep]
        self.refused("nests deeper than 16", spec=spec)
        self.refused("the chain's spec is an object", spec=[])
        for k, v, why in (("remote", [], "'remote' is an object"),
                          ("remote", "x", "'remote' is an object"),
                          ("remote", {"chains": {}}, "'remote.chains' is a list"),
                          ("ports", 5, "'ports' is a list"),
                          ("nfs", {}, "'nfs' is a list"),
                          ("chains", "x", "'chains' is a list"),
                          ("cluster", [], "'cluster' is an object")):
            self.refused(why, base=dict(copy.deepcopy(BASE), **{k: v}))
        self.refused("configuration is an object", base=[])


if __name__ == "__main__":
    unittest.main()
