# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.cluster_config -- a node's onvm_mgr configuration for a chain, made
from what the cluster holds (docs/design/cluster.md, "Configurations
from etcd").

A chain is declared once; its spec's "config" is the chain's part of every
node's configuration, the same on all of them:

  "config": {
    "id": 7,                       the chain's id on the wire (required)
    "nfs": [{...}, ...],           onvm_mgr "nfs" entries (required)
    "services": [1, ...],          the chain's services, in order (required)
    "chain": {...},                more fields of its "chains" entry
                                   (e.g. "name": the manager's name for it;
                                   default: the chain's)
    "remote": {...},               its "remote.chains" entry's fields, any role
    "primary": {...},              ... and a primary's ("stages", ...)
    "standby": {...},              ... and a standby's ("window", "reprotect")
    "manager": {...}               manager-wide sections the chain needs
                                   ("state", "pool" only), where the node's
                                   own configuration has none
  }

(check_config() says what is wrong with one: `onvmctl declare` refuses a
spec whose config is not whole.)

A node's own part (its base: ports, CPUs, BFD sessions, everything not
the chain's) is a configuration file the node keeps, with one more
section the manager never sees, which ports carry each chain here:

  "cluster": {"chains": {"web": {"ingress_port": "from_p",
                                 "exit_port": "out", "sync_port": "to_m"}}}

render() joins the two for a role (primary or standby) and an epoch: what
`onvmctl config` prints and what an agent hands its --on-standby hook
(ONVM_CONFIG).  A node that cannot render a chain (no ports for it, a
spec without these parts, names or ids onvm_mgr would refuse, a remote
chain of that name or id of its own) cannot host it: RenderError says why.
What onvm_mgr alone knows (its other sections' fields) the agent has
`onvm_mgr --check` say before the hook runs.
"""
import copy

ROLES = ("primary", "standby")
# the remote entry's fields render() sets itself
OWN_FIELDS = {"name", "id", "role", "chain", "predecessor_port", "epoch", "primary_port",
              "standby_port"}
# ... and the chain entry's
OWN_CHAIN_FIELDS = {"services", "ingress_port", "exit_port"}
MANAGER_SECTIONS = ("state", "pool")  # what "manager" may fill in
MAX_DEPTH = 16       # nesting of the chain's config: deeper is refused, not recursed into
NAME_MAX = 31        # onvm_mgr's names (MGR_CFG_NAME_LEN - 1)
EPOCH_MAX = (1 << 31) - 1


class RenderError(ValueError):
    pass


def _object(where, v):
    if not isinstance(v, dict):
        raise RenderError(f"{where} is an object")
    return v


def _list(where, v):
    if not isinstance(v, list):
        raise RenderError(f"{where} is a list")
    return v


def _depth(v, where, d=0):
    """Refuse nesting deeper than MAX_DEPTH (a spec is outside input:
    copying a deep one would exhaust the stack)."""
    if d > MAX_DEPTH:
        raise RenderError(f"{where} nests deeper than {MAX_DEPTH} levels")
    if isinstance(v, dict):
        for x in v.values():
            _depth(x, where, d + 1)
    elif isinstance(v, list):
        for x in v:
            _depth(x, where, d + 1)


def _mgr_name(where, v):
    """A name onvm_mgr takes for a remote chain or a chain: letters,
    digits and '_', at most NAME_MAX bytes."""
    if not isinstance(v, str) or not v or len(v.encode()) > NAME_MAX or \
            not all(c.isascii() and (c.isalnum() or c == "_") for c in v):
        raise RenderError(f"{where} {v!r}: onvm_mgr takes 1-{NAME_MAX} letters, digits "
                          "or '_'")
    return v


def _chain_ports(base, name):
    """The node's ports carrying chain `name` (its "cluster" section)."""
    ports = _object("the node's 'cluster.chains'",
                    _object("the node's 'cluster'", base.get("cluster", {})).get("chains", {}))
    if name not in ports:
        raise RenderError(f"this node has no ports for chain {name!r} "
                          "(its configuration's cluster.chains)")
    p = _object(f"cluster.chains.{name}", ports[name])
    keys = ("ingress_port", "exit_port", "sync_port")
    for k in keys:
        if not isinstance(p.get(k), str) or not p[k]:
            raise RenderError(f"cluster.chains.{name} needs '{k}' (a port's name)")
    known = {x.get("name") for x in _list("the node's 'ports'", base.get("ports", []))
             if isinstance(x, dict)}
    for k in keys:
        if p[k] not in known:
            raise RenderError(f"cluster.chains.{name}.{k}: no port {p[k]!r} on this node")
    if len({p[k] for k in keys}) < len(keys):
        raise RenderError(f"cluster.chains.{name}: its ingress, exit and sync ports are "
                          "three ports (each peer has a link of its own)")
    return p


def check_config(name, spec):
    """The chain's part of its nodes' configurations, spec["config"]:
    returned if whole, RenderError naming what is wrong."""
    _mgr_name("the chain's name", name)
    cfg = _object(f"chain {name}'s spec 'config'", spec.get("config"))
    _depth(cfg, f"chain {name}'s config")
    cid = cfg.get("id")
    if not isinstance(cid, int) or isinstance(cid, bool) or not 1 <= cid <= 65535:
        raise RenderError(f"chain {name}'s config needs 'id' (its id on the wire, 1-65535)")
    for k in ("nfs", "services"):
        if not isinstance(cfg.get(k), list) or not cfg[k]:
            raise RenderError(f"chain {name}'s config needs '{k}' (a non-empty list)")
    extra = set(cfg) - {"id", "nfs", "services", "chain", "remote", "primary", "standby",
                        "manager"}
    if extra:
        raise RenderError(f"chain {name}'s config: unknown key(s) {', '.join(sorted(extra))}")
    for k in ("chain", "remote", "primary", "standby", "manager"):
        _object(f"chain {name}'s config '{k}'", cfg.get(k, {}))
    for k, own in (("remote", OWN_FIELDS), ("primary", OWN_FIELDS), ("standby", OWN_FIELDS),
                   ("chain", OWN_CHAIN_FIELDS)):
        clash = own & set(cfg.get(k, {}))
        if clash:
            raise RenderError(f"chain {name}'s config '{k}' sets {', '.join(sorted(clash))}: "
                              "rendered from the roles and the node's ports")
    if "name" in cfg.get("chain", {}):
        _mgr_name(f"chain {name}'s config 'chain.name'", cfg["chain"]["name"])
    extra = set(cfg.get("manager", {})) - set(MANAGER_SECTIONS)
    if extra:
        raise RenderError(f"chain {name}'s config 'manager' may set {', '.join(MANAGER_SECTIONS)}"
                          f", not {', '.join(sorted(extra))}")
    return cfg


def render(base, name, spec, role, epoch):
    """Node `base`'s onvm_mgr configuration running chain `name` (declared
    as `spec`) as `role` at `epoch`; RenderError if it cannot."""
    if role not in ROLES:
        raise RenderError(f"role {role!r}: one of {', '.join(ROLES)}")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or not 1 <= epoch <= EPOCH_MAX:
        raise RenderError(f"the epoch is an integer 1-{EPOCH_MAX}")
    part = check_config(name, _object("the chain's spec", spec))
    base = _object("the node's configuration", base)
    _depth(base, "the node's configuration")
    ports = _chain_ports(base, name)
    out = copy.deepcopy({k: v for k, v in base.items() if k != "cluster"})
    local = part.get("chain", {}).get("name", name)
    chains = _list("the node's 'chains'", out.get("chains", []))
    if any(isinstance(c, dict) and c.get("name") == local for c in chains):
        raise RenderError(f"the node's configuration has a chain {local!r} of its own")
    remote = _object("the node's 'remote'", out.setdefault("remote", {}))
    entries = _list("the node's 'remote.chains'", remote.get("chains", []))
    for e in entries:
        if isinstance(e, dict) and (e.get("name") == name or e.get("id") == part["id"]):
            raise RenderError(f"the node's configuration has a remote chain named {name!r} "
                              f"or with id {part['id']} of its own")
    out["nfs"] = _list("the node's 'nfs'", out.get("nfs", [])) + copy.deepcopy(part["nfs"])
    out["chains"] = chains + [dict(
        copy.deepcopy(part.get("chain", {})), name=local, services=list(part["services"]),
        ingress_port=ports["ingress_port"], exit_port=ports["exit_port"])]
    entry = dict(copy.deepcopy(part.get("remote", {})), **copy.deepcopy(part.get(role, {})))
    entry.update(name=name, id=part["id"], role=role, chain=local,
                 predecessor_port=ports["ingress_port"], epoch=epoch)
    entry["standby_port" if role == "primary" else "primary_port"] = ports["sync_port"]
    remote["chains"] = entries + [entry]
    for k, v in part.get("manager", {}).items():
        out.setdefault(k, copy.deepcopy(v))
    return out
