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
                                   ("state", "pool"), where the node's own
                                   configuration has none
  }

A node's own part (its base: ports, CPUs, BFD sessions, everything not
the chain's) is a configuration file the node keeps, with one more
section the manager never sees, which ports carry each chain here:

  "cluster": {"chains": {"web": {"ingress_port": "from_p",
                                 "exit_port": "out", "sync_port": "to_m"}}}

render() joins the two for a role (primary or standby) and an epoch: what
`onvmctl config` prints and what an agent hands its --on-standby hook
(ONVM_CONFIG).  A node that cannot render a chain (no ports for it, a
spec without these parts) cannot host it: RenderError says why.
"""
import copy

ROLES = ("primary", "standby")
# the remote entry's fields render() sets itself
OWN_FIELDS = {"name", "id", "role", "chain", "predecessor_port", "epoch", "primary_port",
              "standby_port"}


class RenderError(ValueError):
    pass


def _object(where, v):
    if not isinstance(v, dict):
        raise RenderError(f"{where} is an object")
    return v


def _chain_ports(base, name):
    ports = _object("the node's 'cluster.chains'",
                    _object("the node's 'cluster'", base.get("cluster", {})).get("chains", {}))
    if name not in ports:
        raise RenderError(f"this node has no ports for chain {name!r} "
                          "(its configuration's cluster.chains)")
    p = _object(f"cluster.chains.{name}", ports[name])
    for k in ("ingress_port", "exit_port", "sync_port"):
        if not isinstance(p.get(k), str) or not p[k]:
            raise RenderError(f"cluster.chains.{name} needs '{k}' (a port's name)")
    known = {x.get("name") for x in base.get("ports", []) if isinstance(x, dict)}
    for k in ("ingress_port", "exit_port", "sync_port"):
        if p[k] not in known:
            raise RenderError(f"cluster.chains.{name}.{k}: no port {p[k]!r} on this node")
    return p


def _chain_part(spec, name):
    cfg = _object(f"chain {name}'s spec 'config'", spec.get("config"))
    if not isinstance(cfg.get("id"), int) or isinstance(cfg.get("id"), bool):
        raise RenderError(f"chain {name}'s config needs 'id' (its id on the wire)")
    for k in ("nfs", "services"):
        if not isinstance(cfg.get(k), list) or not cfg[k]:
            raise RenderError(f"chain {name}'s config needs '{k}' (a non-empty list)")
    for k in ("chain", "remote", "primary", "standby", "manager"):
        _object(f"chain {name}'s config '{k}'", cfg.get(k, {}))
        own = OWN_FIELDS & set(cfg.get(k, {})) if k in ("remote", "primary", "standby") else ()
        if own:
            raise RenderError(f"chain {name}'s config '{k}' sets {', '.join(sorted(own))}: "
                              "rendered from the roles and the node's ports")
    return cfg


def render(base, name, spec, role, epoch):
    """Node `base`'s onvm_mgr configuration running chain `name` (declared
    as `spec`) as `role` at `epoch`; RenderError if it cannot."""
    if role not in ROLES:
        raise RenderError(f"role {role!r}: one of {', '.join(ROLES)}")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise RenderError("the epoch is a positive integer")
    base = _object("the node's configuration", base)
    ports = _chain_ports(base, name)
    part = _chain_part(spec, name)
    out = copy.deepcopy({k: v for k, v in base.items() if k != "cluster"})
    local = part.get("chain", {}).get("name", name)
    if any(c.get("name") == local for c in out.get("chains", []) if isinstance(c, dict)):
        raise RenderError(f"the node's configuration has a chain {local!r} of its own")
    out["nfs"] = out.get("nfs", []) + copy.deepcopy(part["nfs"])
    out["chains"] = out.get("chains", []) + [dict(
        copy.deepcopy(part.get("chain", {})), name=local, services=list(part["services"]),
        ingress_port=ports["ingress_port"], exit_port=ports["exit_port"])]
    entry = dict(copy.deepcopy(part.get("remote", {})), **copy.deepcopy(part.get(role, {})))
    entry.update(name=name, id=part["id"], role=role, chain=local,
                 predecessor_port=ports["ingress_port"], epoch=epoch)
    entry["standby_port" if role == "primary" else "primary_port"] = ports["sync_port"]
    remote = out.setdefault("remote", {})
    remote["chains"] = remote.get("chains", []) + [entry]
    for k, v in part.get("manager", {}).items():
        out.setdefault(k, copy.deepcopy(v))
    return out
