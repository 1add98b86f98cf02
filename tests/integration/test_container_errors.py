#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Container NFs that cannot start: each gives its reason in the log and is
counted (/onvm/info nf_container_failures), and the node starts anyway and
serves its other chains.

Node 1 (podman as the runtime): a process NF on the chain gen -> sink, and two
container NFs of chains of their own -- one naming an image that is not there
(the runtime refuses: no pull, exit 125), one naming a binary the image does
not hold (exit 127).  Node 2: a runtime command that does not exist.  Each
node must come up, forward on its process chain (the sink's TX counter
moves), count exactly its failures with the reason for each in its log, stop
with status 0 and leave no container.
"""
from onvm import containers, lab


def process_chain():
    return {
        "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                  {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
        "nfs": [{"binary": "simple_forward", "service": 1}],
        "chains": [{"name": "served", "services": [1], "ingress_port": "gen",
                    "exit_port": "sink"}],
    }


def check_node(L, node, want_failures, reasons):
    info = node.info()
    L.expect(info["nf_container_failures"] == want_failures,
             f"{node.name}: nf_container_failures {info['nf_container_failures']}, want "
             f"{want_failures}")
    L.expect(info["nf_start_failures"] == 0,
             f"{node.name}: nf_start_failures {info['nf_start_failures']} (a container's "
             f"failure is not the node's)")
    log = node.log()
    for r in reasons:
        L.expect(r in log, f"{node.name}: no '{r}' in the log")
    tx0 = node.port("sink")["tx"]
    lab.wait_until(lambda: node.port("sink")["tx"] > tx0 + 1000, 30,
                   f"{node.name}: the process chain forwarding")
    live = [nf["name"] for nf in node.nfs().values()]
    L.expect(live == ["simple_forward"], f"{node.name}: NF slots in use {live}, want only "
                                         f"the process NF")
    rc = node.stop()
    L.expect(rc == 0, f"{node.name}: manager exit status {rc}")
    left = containers.node_containers(node.prefix)
    L.expect(not left, f"{node.name}: containers left: {left}")


def test(L):
    image = containers.nf_image()
    cfg = process_chain()
    cfg["nfs"] += [
        {"binary": "simple_forward", "name": "no_image", "service": 2,
         "container": {"image": "localhost/reinforce-nfv-no-such-image:0"}},
        {"binary": "simple_forward", "name": "no_binary", "service": 3,
         "container": {"image": image, "path": "/nf/bin/no_such_nf"}},
    ]
    cfg["chains"] += [{"name": "imageless", "services": [2]},
                      {"name": "binaryless", "services": [3]}]
    cfg["containers"] = containers.containers_section()
    node = L.node("errors-image", cfg).start()
    check_node(L, node, 2, [
        "NF 'no_image': container onvm-",
        "image not present locally",
        "NF 'no_binary': container onvm-",
        "no such binary in the image (container.path)",
    ])

    cfg = process_chain()
    cfg["nfs"].append({"binary": "simple_forward", "name": "no_runtime", "service": 2,
                       "container": {"image": image}})
    cfg["chains"].append({"name": "runtimeless", "services": [2]})
    cfg["containers"] = dict(containers.containers_section(), command="/nonexistent/podman")
    node = L.node("errors-runtime", cfg).start()
    check_node(L, node, 1, ["NF 'no_runtime': container runtime '/nonexistent/podman' not "
                            "found"])
    print("missing image, missing binary, missing runtime: each counted with its reason; "
          "the process chains kept forwarding")


if __name__ == "__main__":
    lab.Lab("container_errors").run(test)
