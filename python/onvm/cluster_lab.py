# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.cluster_lab -- the remote lab (onvm.remote_lab) run by its control
plane: a three-member etcd on loopback (onvm.etcd_lab), an agent
(tools/onvm-agent) beside the predecessor and each chain node, the chain
declared with onvmctl.  For tests/integration/test_cluster_agent.py and
bench/cluster_reprotect.py.

Re-protection needs a node's service manager: when etcd names a node the
standby of a chain its manager does not run so, the node's agent runs its
--on-standby hook; here the hook writes the epoch into a request file, and
serve_hooks(), playing systemd, starts that node's standby configuration
at that epoch, under the node's file prefix (its agent finds it there).
"""
import json
import os
import signal
import subprocess
import time

from onvm import cluster, cluster_config, lab
from onvm import remote_lab as rc

AGENT = os.path.join(lab.SRC, "tools", "onvm-agent")
ONVMCTL = os.path.join(lab.SRC, "tools", "onvmctl")
# (the chain's "config", the chain's part of its nodes' configurations, is
# made from the lab's nodes: with_config())
SPEC = {"nfs": ["simple_forward"], "scheme": "remote", "predecessor": "pred", "standbys": 1}


def _remote_entry(cfg, name="web"):
    return next(c for c in cfg["remote"]["chains"] if c["name"] == name)


def split_config(cfg, name="web"):
    """A lab chain node's configuration as the control plane holds it:
    (the node's own part, with its "cluster" section -- its base for
    onvm.cluster_config -- and the chain's part of that role)."""
    rc = _remote_entry(cfg, name)
    chain = next(c for c in cfg["chains"] if c["name"] == rc["chain"])
    sync = rc.get("primary_port") or rc["standby_port"]
    base = {k: v for k, v in cfg.items() if k not in ("nfs", "remote")}
    base["chains"] = [c for c in cfg["chains"] if c is not chain]
    if not base["chains"]:
        del base["chains"]
    base["cluster"] = {"chains": {name: {"ingress_port": chain["ingress_port"],
                                         "exit_port": chain["exit_port"], "sync_port": sync}}}
    own = cluster_config.OWN_FIELDS
    part = {"id": rc["id"], "nfs": cfg["nfs"], "services": chain["services"],
            "chain": {k: v for k, v in chain.items()
                      if k not in ("services", "ingress_port", "exit_port")},
            rc["role"]: {k: v for k, v in rc.items() if k not in own}}
    return base, part


def with_config(primary, standby, name="web"):
    """SPEC with its "config": the chain's part of its nodes' configurations,
    from the lab's primary (as configured) and standby (its standby
    configuration: the same on every chain node)."""
    _, p = split_config(primary.config, name)
    _, s = split_config(standby.standby_config(1), name)
    return dict(SPEC, config=dict(s, primary=p["primary"]))


def agent(L, ec, name, node, tag, extra=()):
    """An agent beside `node` (registered as `name`); its status file is
    the process's status_path."""
    status = L.path(f"agent-{name}{tag}.json")
    p = L.spawn(f"agent-{name}{tag}", ["/usr/bin/python3", AGENT, "--node", name,
                                       "--prefix", node.prefix, "--endpoints",
                                       ",".join(ec.endpoints), "--ttl", "10", "--status",
                                       status] + list(extra))
    p.status_path = status
    return p


def agent_status(p):
    try:
        with open(p.status_path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def onvmctl(ec, *argv):
    """onvmctl --json ARGV: (exit status, its JSON output or None)."""
    r = subprocess.run(["/usr/bin/python3", ONVMCTL, "--json", "--endpoints",
                        ",".join(ec.endpoints)] + list(argv),
                       capture_output=True, text=True, timeout=60)
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        return r.returncode, None


class ReprotectLab:
    """The four nodes with BFD on both of the predecessor's links, both
    chain nodes able to be made primary ("reprotect"), the input fed at
    `rate` frames/s by a paced source (a replay goes at the links' speed),
    the chain nodes' agents with an --on-standby hook.  `spare`: a fifth
    node, "spare", on the primary's side (remote_lab.build(spare=True)),
    its manager not started until a hook asks; every chain node's agent
    says its segment (side "a": primary and spare; "b": standby)."""

    SEGMENTS = {"primary": "a", "spare": "a", "standby": "b"}

    def __init__(self, L, ec, frames, tag, rate, spare=False, pred_args=(), **build):
        self.L, self.ec, self.tag, self.rate = L, ec, tag, rate
        self.spare, self.pred_args = spare, list(pred_args)
        self.broken = set()  # nodes whose hook fails (exit 3): set before start()
        self.c = ec.client()
        self.sink, standby, primary, self.pred = rc.build(
            L, frames, tag, bfd=True, failover_by="agent", reprotect=True, source=rate,
            spare=spare, **build)
        self.nodes = {"primary": primary, "standby": standby}  # by etcd name, started
        self.idle = {"spare": self.pred.spare} if spare else {}  # (no manager yet)
        self.prev = dict(self.nodes, **self.idle)  # (the nodes as first built)
        self.want = {name: L.path(f"want-standby-{name}{tag}") for name in self.prev}
        # The chain declared once with its part of the nodes'
        # configurations; each chain node keeps its own part (its
        # --node-config), and its agent renders the two into the standby
        # configuration its hook starts.
        self.spec = with_config(primary, standby)
        self.node_files, self.rendered = {}, {}
        for name, node in self.prev.items():
            self.node_files[name] = L.path(f"node-{name}{tag}.json")
            with open(self.node_files[name], "w") as f:
                json.dump(split_config(node.standby_config(1))[0], f, indent=2)
            self.rendered[name] = L.path(f"rendered-{name}{tag}")
            os.makedirs(self.rendered[name], exist_ok=True)
        self.agents = {}
        self.started = []  # (node name, epoch) a hook asked for and served
        self.specs = {}    # node name: the chain's spec its hook was given (ONVM_SPEC)

    def start(self):
        """Nodes, agents, the chain declared and its standby synced; then
        the input."""
        L = self.L
        rc.NODES[:] = [self.pred, *self.nodes.values(), self.sink]
        for node in (self.sink, *self.nodes.values()):
            node.start(wait=False)
        for node in (self.sink, *self.nodes.values()):
            node.wait_ready(120)
        for name, node in self.nodes.items():
            self.start_agent(name, node)
        self.pred.start(wait=False)
        self.pred.wait_ready(120)
        self.agents["pred"] = agent(L, self.ec, "pred", self.pred, self.tag, self.pred_args)
        lab.wait_until(lambda: set(self.c.nodes()) == {"pred", *self.agents}, 30,
                       "the agents registered")
        code, out = onvmctl(self.ec, "declare", "web", json.dumps(self.spec))
        L.expect(code == 0 and out["chain"]["primary"] == "primary", f"declared: {out}")
        for name, node in self.idle.items():  # (joining once the chain is placed)
            self.start_agent(name, node)
        self.pred.wait_bfd("to_m", "Up", timeout=60)
        self.pred.wait_bfd("to_s", "Up", timeout=60)
        lab.wait_until(lambda: self.roles()["synced"] == ["standby"], 60,
                       "the standby's agent reporting it synced")
        rc.start_source(L, self.pred, self.tag)

    def start_agent(self, name, node):
        w = self.want[name]
        hook = ("exit 3" if name in self.broken else  # (a node that cannot start it)
                f"printf %s \"$ONVM_SPEC\" > {w}.spec && "
                f"printf %s \"$ONVM_CONFIG\" > {w}.config && "
                f"echo $ONVM_EPOCH > {w}.tmp && mv {w}.tmp {w}")
        self.agents[name] = agent(self.L, self.ec, name, node, self.tag, [
            "--on-standby", hook, "--node-config", self.node_files[name],
            "--config-dir", self.rendered[name]] + (
            ["--segment", self.SEGMENTS[name]] if self.spare else []))

    def restart_agent(self, name, sig=signal.SIGKILL):
        """Stop node `name`'s agent (SIGKILL by default: it dies with what
        it was doing half done, its lease left to lapse) and start a new
        one."""
        p = self.agents[name]
        p.send_signal(sig)
        p.wait(10)
        if name == "pred":
            self.agents[name] = agent(self.L, self.ec, "pred", self.pred, self.tag,
                                      self.pred_args)
        else:
            self.start_agent(name, self.nodes.get(name) or self.idle[name])

    def roles(self):
        """The chain's roles (an etcd election under way, e.g. a member
        just killed: read again, for up to 10 s)."""
        for _ in range(50):
            try:
                return self.c.chain("web")[1]
            except (cluster.Unavailable, cluster.Unknown):
                time.sleep(0.2)
        return self.c.chain("web")[1]

    def primary(self):
        """(etcd name, node) of the chain's primary."""
        name = self.roles()["primary"]
        return name, self.nodes[name]

    def serve_hooks(self):
        """The service manager: a standby a hook asked for, started (its
        manager ready).  Returns the name of the node started, or None."""
        for name, path in self.want.items():
            if not os.path.exists(path):
                continue
            with open(path) as f:
                epoch = int(f.read())
            os.unlink(path)
            with open(path + ".spec") as f:
                self.specs[name] = json.load(f)
            # the configuration the agent rendered from etcd (ONVM_CONFIG):
            # the node's standby configuration at that epoch, exactly
            with open(path + ".config") as f:
                config_path = f.read()
            with open(config_path) as f:
                cfg = json.load(f)
            prev = self.prev[name]
            want = prev.standby_config(epoch)
            self.L.expect(cfg == want, f"{name}'s configuration rendered at epoch {epoch} "
                          f"(ONVM_CONFIG {config_path}) is its standby configuration: "
                          f"{json.dumps(cfg, sort_keys=True)} != "
                          f"{json.dumps(want, sort_keys=True)}")
            node = self.L.node(prev.name, cfg, netns=prev.netns).take_prefix(prev)
            self.nodes[name] = node
            self.idle.pop(name, None)
            rc.NODES[:] = [self.pred, *self.nodes.values(), self.sink]
            node.start(wait=False)
            node.wait_ready(120)
            self.started.append((name, epoch))
            return name
        return None

    def stop(self):
        """The agents, then every node."""
        for p in self.agents.values():
            p.terminate()
            p.wait(10)
        for node in (self.pred, *self.nodes.values(), self.sink):
            node.stop()
        self.c.close()
