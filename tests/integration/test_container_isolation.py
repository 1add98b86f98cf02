#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""What an NF in a container can see of the node, checked through the NF's
own view of the system: /proc/PID/root is the NF's mount namespace (its root
as it sees it, with its own /proc), /proc/PID/ns its namespaces.

Two container NFs of one chain, each exporting to a directory of its own that
is its container's only volume: basic_monitor (A) and load_balancer (B, its
config file in its directory).  Asserted for each:
  - processes: its /proc lists exactly two, its init (pid 1) and itself at the
    pid the manager gave it (NSpid), none of the other NF's, nor the manager;
  - files: its own directory is there (the control: the view is real), the
    other NF's directory, config and export are not, nor the node's config
    file; of the test's working directory only the path to its own;
  - network: a network namespace that is not the host's, with only `lo`;
  - pid, mount, ipc, uts namespaces of its own (not the host's, not the other
    NF's);
  - every thread on its role's CPUs (nf_defaults.cpus), though its container's
    cpuset also holds the standbys' (a standby promotes onto its active's);
  - the runtime directory and the hugepage directory are there (a DPDK
    secondary needs them: what that exposes is said in docs/operator-guide.md),
    but not the manager's telemetry socket in it (masked: its commands
    control the node).
The chain still forwards the trace (a positive check that the NFs work).
"""
import os
import stat

from onvm import balancer, containers, lab, pcap, traces


def ns_pid(host_pid):
    """The pid `host_pid` has in its own pid namespace (NSpid's last field)."""
    with open(f"/proc/{host_pid}/status") as f:
        for line in f:
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    raise lab.TestFailure(f"no NSpid for pid {host_pid}")


def view(host_pid, path):
    """`path` as the process sees it (its root)."""
    return f"/proc/{host_pid}/root{path}"


def ns(pid, kind):
    return os.readlink(f"/proc/{pid}/ns/{kind}")


def check_view(L, who, pid, own_dir, other_paths, node):
    procs = sorted(int(d) for d in os.listdir(view(pid, "/proc")) if d.isdigit())
    L.expect(procs == [1, ns_pid(pid)], f"{who}: its /proc lists pids {procs}, want its init "
                                        f"and itself [1, {ns_pid(pid)}]")
    L.expect(os.path.isdir(view(pid, own_dir)), f"{who}: its own directory {own_dir} is not "
                                                f"visible to it (the check is void)")
    for p in other_paths + [node.config_path]:
        L.expect(not os.path.exists(view(pid, p)), f"{who}: sees {p}")
    # The test's directory exists there only as the path to its volume.
    seen = sorted(os.listdir(view(pid, L.tmp)))
    L.expect(seen == [os.path.basename(own_dir)],
             f"{who}: sees {seen} in {L.tmp}, want only its own {os.path.basename(own_dir)}")
    with open(f"/proc/{pid}/net/dev") as f:
        ifaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
    L.expect(ifaces == ["lo"], f"{who}: network interfaces {ifaces}, want only lo")
    for kind in ("net", "pid", "mnt", "ipc", "uts"):
        L.expect(ns(pid, kind) != ns(os.getpid(), kind), f"{who}: shares the host's {kind} "
                                                         f"namespace")
    L.expect(os.path.exists(view(pid, f"{lab.RUNTIME_ROOT}/{node.prefix}/config")),
             f"{who}: the node's runtime directory is not visible (a secondary needs it)")
    tel = f"{lab.RUNTIME_ROOT}/{node.prefix}/dpdk_telemetry.v2"
    L.expect(stat.S_ISSOCK(os.stat(tel).st_mode) and
             not stat.S_ISSOCK(os.stat(view(pid, tel)).st_mode),
             f"{who}: reaches the manager's telemetry socket (its commands control the node)")


def test(L):
    image = containers.nf_image()
    frames = pcap.read_pcap(traces.trace("smtp.pcap"))
    trace = L.path("in.pcap")
    pcap.write_pcap(trace, frames)
    out = L.path("out.pcap")
    a_dir, b_dir = L.path("a-monitor"), L.path("b-balancer")
    for d in (a_dir, b_dir):
        os.makedirs(d)
    a_exp, b_conf, b_exp = f"{a_dir}/monitor.json", f"{b_dir}/lb.conf.json", f"{b_dir}/lb.json"
    balancer.write_config(b_conf)
    for f in (a_exp, b_exp):  # there from the start: what must not be seen exists
        open(f, "w").close()
    cfg = containers.containerize({
        "nf_defaults": {"cpus": "1", "standby_cpus": "0"},
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={trace},tx_pcap={out}"}],
        "nfs": [{"binary": "basic_monitor", "service": 1, "args": ["-e", a_exp, "-p", "0"]},
                {"binary": "load_balancer", "service": 2,
                 "args": ["-c", b_conf, "-e", b_exp, "-p", "0"]}],
        "chains": [{"name": "c", "services": [1, 2], "ingress_port": "in", "exit_port": "in"}],
    }, image, volumes={0: [f"{a_dir}:{a_dir}"], 1: [f"{b_dir}:{b_dir}"]})
    node = L.node("isolation", cfg).start()
    node.wait_port("in", "tx", len(frames))
    a_pid = node.nf_by(service=1)[0]["pid"]
    b_pid = node.nf_by(service=2)[0]["pid"]
    print(f"basic_monitor: pid {a_pid} here, {ns_pid(a_pid)} in its namespace; "
          f"load_balancer: pid {b_pid} here, {ns_pid(b_pid)} in its namespace")
    check_view(L, "basic_monitor", a_pid, a_dir, [b_dir, b_conf, b_exp], node)
    check_view(L, "load_balancer", b_pid, b_dir, [a_dir, a_exp], node)
    for kind in ("pid", "mnt", "net", "ipc", "uts"):
        L.expect(ns(a_pid, kind) != ns(b_pid, kind), f"the two NFs share a {kind} namespace")
    # Their container may use the standbys' CPUs too (a standby promotes onto
    # its active's); each NF runs, every thread, on its role's: nf_defaults.cpus.
    # (runc 1.1 and kernels from 6.2 keep the affinity the runtime is started
    # with, the role's; runtimes that reset it to the cpuset are what libnf's
    # ONVM_NF_CPUS is for -- on such a host this catches its absence.)
    for who, pid in (("basic_monitor", a_pid), ("load_balancer", b_pid)):
        cpus = {}
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/status") as f:
                cpus[t] = [ln.split()[1] for ln in f if ln.startswith("Cpus_allowed_list")][0]
        L.expect(set(cpus.values()) == {"1"}, f"{who}: threads on CPUs {cpus}, want all on 1")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not containers.node_containers(node.prefix), "containers left after the node stopped")
    # Each wrote its export at exit, through its volume.
    L.expect(lab.read_json(a_exp)["packets"] == len(frames), "monitor export: packets")
    L.expect(lab.read_json(b_exp)["packets"] == len(frames), "balancer export: packets")
    print(f"basic_monitor (pid {a_pid}) and load_balancer (pid {b_pid}) each see only "
          f"themselves")


if __name__ == "__main__":
    lab.Lab("container_isolation").run(test)
