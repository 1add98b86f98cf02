# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.containers -- NFs in podman containers, for the tests and benchmarks
that run them: the NF image of the build under test, a node config with its
NFs in containers, and the node's containers found and removed by the label
the manager puts on them (docs/operator-guide.md, "NFs in containers").

The image is built by scripts/nf-image.sh, tagged :test so that a test never
replaces the operators' :latest.  The lab removes what a node of a failed
test left (onvm.lab.Lab.cleanup), by that node's label only.
"""
import json
import os
import subprocess

from onvm.lab import BUILD, SRC, TEST_NF, check

NF_IMAGE = "localhost/reinforce-nfv-nfs:test"  # not the operators' :latest
CTR_LABEL = "org.reinforce-nfv.node"
CTR_RUNTIME = os.environ.get("ONVM_CTR_RUNTIME", "podman")


def nf_image():
    """The NF image built from the build tree under test (production NFs and
    test_nf), by scripts/nf-image.sh: a no-op when it is up to date.  A test
    that needs containers fails without podman: CI installs it."""
    argv = [os.path.join(SRC, "scripts", "nf-image.sh"), "-b", BUILD, "-t", NF_IMAGE,
            "-r", CTR_RUNTIME]
    if os.path.exists(TEST_NF):
        argv += ["--extra", TEST_NF]
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    check(r.returncode == 0, f"nf-image.sh failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return NF_IMAGE


def containers_section():
    """The node's "containers" section for this host: runc (crun refuses a
    hybrid cgroup layout), and --ulimit values below our hard limits (podman's
    default raise needs CAP_SYS_RESOURCE, which a sandbox may lack; even the
    hard limit itself was refused for nproc here)."""
    import resource
    ulimits = []
    for name, res, want in (("nofile", resource.RLIMIT_NOFILE, 65536),
                            ("nproc", resource.RLIMIT_NPROC, 4096)):
        hard = resource.getrlimit(res)[1]
        v = want if hard == resource.RLIM_INFINITY else min(hard, want)
        ulimits.append(f"{name}={v}:{v}")
    return {"command": CTR_RUNTIME, "runtime": "runc", "ulimits": ulimits}


def containerize(config, image, volumes=None, only=None):
    """`config` with its NFs (those whose index is in `only`, default all) in
    containers of `image`; volumes: {nf index: ["HOST:CTR[:OPTS]", ...]}."""
    cfg = json.loads(json.dumps(config))
    for i, nf in enumerate(cfg.get("nfs", [])):
        if only is None or i in only:
            nf["container"] = {"image": image, "volumes": (volumes or {}).get(i, [])}
    cfg["containers"] = containers_section()
    return cfg


def node_containers(prefix):
    """Names of the containers (any state) labelled as node `prefix`'s."""
    r = subprocess.run([CTR_RUNTIME, "ps", "-a", "--filter", f"label={CTR_LABEL}={prefix}",
                        "--format", "{{.Names}}"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True)
    return sorted(r.stdout.split()) if r.returncode == 0 else []


def remove_node_containers(prefix):
    """Remove what node `prefix` left (a failed test): only its own label."""
    subprocess.run([CTR_RUNTIME, "rm", "--force", "--time=0", "--filter",
                    f"label={CTR_LABEL}={prefix}"], stdin=subprocess.DEVNULL,
                   capture_output=True)
