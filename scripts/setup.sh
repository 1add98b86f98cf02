#!/usr/bin/env bash
# REINFORCE-NFV set-up: install dependencies, reserve hugepages, build, then
# run the demo or the test suite.
#
#   scripts/setup.sh demo [--sanitize]
#   scripts/setup.sh test [--sanitize]
#
# Meant for root on a fresh (even minimal/minbase) Debian 12. Idempotent: a
# second run installs nothing, re-reserves nothing and only rebuilds what
# changed. --sanitize builds with -Db_sanitize=address,undefined into
# build-asan instead of build.
#
# In `test` mode the last line printed is "N passed, N failed" (", N skipped"
# is appended when some were skipped); the exit status is non-zero if any test
# failed or if no test ran.
#
# `test` also runs the libFuzzer smoke tests (tests/fuzz, `--suite fuzz`)
# after the main suite, from a separate clang build dir, build-fuzz (clang,
# the compiler-rt libFuzzer runtime and llvm-symbolizer are installed for
# it), and counts them in the same summary line.  This is done with and
# without --sanitize: the fuzz targets are always built with ASan + UBSan, so
# build-fuzz is the same in both modes and is shared.  The budget is short:
# FUZZ_SECONDS (default 10) seconds per target, 20 for fuzz_bfd;
# FUZZ_SECONDS_<target> sets one target's, FUZZ_SECONDS=0 only replays the
# seed corpora.  SETUP_FUZZ=0 skips the fuzz step (and installing clang).
#
# `test` then builds and unit-tests the tree against DPDK 24.11 in a Debian
# 13 chroot (scripts/check-dpdk24.sh; SETUP_DPDK24=0 skips it), also counted
# in the summary.
set -euo pipefail

PY=/usr/bin/python3   # Debian's python: another python3 on PATH may not see Debian packages

usage() {
	echo "usage: $0 {demo|test} [--sanitize]" >&2
	exit 2
}

MODE=""
SANITIZE=0
for arg in "$@"; do
	case "$arg" in
	demo | test)
		[ -z "$MODE" ] || usage
		MODE="$arg"
		;;
	--sanitize) SANITIZE=1 ;;
	-h | --help) usage ;;
	*)
		echo "setup.sh: unknown argument: $arg" >&2
		usage
		;;
	esac
done
[ -n "$MODE" ] || usage

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

if [ "$SANITIZE" -eq 1 ]; then
	BUILD_DIR=build-asan
	MESON_OPTS=('-Db_sanitize=address,undefined')
else
	BUILD_DIR=build
	MESON_OPTS=()
fi

# The fuzz step (test mode only): its own build dir, always clang.
FUZZ_DIR=build-fuzz
RUN_FUZZ=0
if [ "$MODE" = test ] && [ "${SETUP_FUZZ:-1}" != 0 ]; then
	RUN_FUZZ=1
fi

# Privileged commands: run directly as root, through sudo otherwise.
if [ "$(id -u)" -eq 0 ]; then
	SUDO=()
elif command -v sudo >/dev/null 2>&1; then
	SUDO=(sudo)
else
	echo "setup.sh: must be run as root (or with sudo available)" >&2
	exit 1
fi

T0=$SECONDS
step() { echo "==> [$((SECONDS - T0))s] $*"; }

# ---------------------------------------------------------------------------
# Container NF tests in a chroot.  containers/storage makes / a private mount
# before it applies an image layer; where / is no mount point (a chroot of a
# plain directory) that fails (EINVAL) and no NF image can be built.  Then
# the run goes on in a mount namespace of its own in which / is one: the
# chroot's root bound onto itself (its mounts too), private, gone with the
# namespace.
# ---------------------------------------------------------------------------
if [ "$MODE" = test ] && [ "$(id -u)" -eq 0 ] && [ -z "${SETUP_REROOTED:-}" ] &&
	command -v mountpoint >/dev/null 2>&1 && ! mountpoint -q /; then
	step "/ is not a mount point (a chroot?): on in a mount namespace where it is one"
	export SETUP_REROOTED=1 SETUP_REPO="$REPO_ROOT"
	# (chroot /etc/..: a path through the new mount, whose root the
	# process's root -- the directory under it -- is not.)
	exec unshare --mount --propagation unchanged -- /bin/sh -c \
		'mount --rbind / / && exec chroot /etc/.. /bin/sh -c "mount --make-rprivate / && cd \"\$SETUP_REPO\" && exec bash scripts/setup.sh \"\$@\"" sh "$@"' \
		sh "$@"
fi
# In that namespace: a chroot whose /sys was bound without its sub-mounts has
# no cgroup file system, which the OCI runtime needs.  Mount the kernel's
# hierarchies as a host has them: v1 controllers grouped by hierarchy (and
# the unified tree beside them), or the v2 tree alone.
if [ -n "${SETUP_REROOTED:-}" ] && [ -d /sys/fs/cgroup ] && ! mountpoint -q /sys/fs/cgroup; then
	step "no cgroup file system in this chroot: mounting the kernel's hierarchies"
	if awk 'NR > 1 && $2 != 0 {v1 = 1} END {exit !v1}' /proc/cgroups; then
		mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
		awk 'NR > 1 && $2 != 0 && $4 == 1 {k = $2; if (k in h) h[k] = h[k] "," $1; else h[k] = $1}
			END {for (k in h) print h[k]}' /proc/cgroups |
			while read -r ctl; do
				mkdir -p "/sys/fs/cgroup/$ctl"
				mount -t cgroup -o "$ctl" cgroup "/sys/fs/cgroup/$ctl" ||
					echo "setup.sh: cannot mount cgroup $ctl" >&2
			done
		mkdir -p /sys/fs/cgroup/unified
		mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified || true
	else
		mount -t cgroup2 cgroup2 /sys/fs/cgroup
	fi
fi

# ---------------------------------------------------------------------------
# a. Debian packages
# ---------------------------------------------------------------------------
PACKAGES=(
	build-essential pkg-config meson ninja-build
	libdpdk-dev dpdk dpdk-dev
	libjansson-dev libpcap-dev libbsd-dev libcmocka-dev
	python3 python3-scapy python3-matplotlib
	tshark iproute2 procps
	frr ethtool  # the BFD interop tests: FRR's bfdd as the peer, veth offloads
	libndpi-dev  # the dpi NF
	libssl-dev   # RSync: HMAC-SHA256 (libcrypto)
	lua5.1 lua-check  # examples/moongen: luac5.1 -p and luacheck on the MoonGen scripts
	podman runc  # container NFs (tests/integration/test_container_*.py); runc: crun
	             # refuses some hosts' cgroup layouts
	python3-prometheus-client  # tools/onvm-exporter
	libhiredis-dev redis-server  # stateless chains: libnf's store client, and the
	                             # Redis the tests, benchmarks and demo start
	etcd-server etcd-client python3-etcd3  # the cluster's state (tools/onvmctl);
	                                       # the tests start their own members
)

# For the test suite only (test_exporter.py runs a Prometheus of its own):
# without Recommends (node-exporter), and the service the package enables is
# stopped again -- an NFV node runs no Prometheus of ours.
# git: the commit-message check (scripts/check-commits.sh) reads the history.
TEST_PACKAGES=(prometheus git spin)

# For the fuzz step.  clang alone does not bring the libFuzzer/ASan/UBSan
# runtimes: they are in libclang-rt-dev (-> libclang-rt-14-dev), only a
# Recommends of clang's libclang-common-14-dev.  llvm gives llvm-symbolizer,
# for readable sanitizer reports.  Installed without Recommends, which would
# add llvm-14-dev (~270 MB) that nothing here needs.
FUZZ_PACKAGES=(clang libclang-rt-dev llvm)

# Prints those of its arguments that are not installed, one a line.
missing_of() {
	local p status
	for p in "$@"; do
		status="$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)"
		if [ "$status" != "installed" ]; then
			echo "$p"
		fi
	done
}

step "checking Debian packages"
mapfile -t MISSING < <(missing_of "${PACKAGES[@]}")
MISSING_TEST=()
if [ "$MODE" = test ]; then
	mapfile -t MISSING_TEST < <(missing_of "${TEST_PACKAGES[@]}")
fi
MISSING_FUZZ=()
if [ "$RUN_FUZZ" -eq 1 ]; then
	mapfile -t MISSING_FUZZ < <(missing_of "${FUZZ_PACKAGES[@]}")
fi

if [ "${#MISSING[@]}" -gt 0 ] || [ "${#MISSING_FUZZ[@]}" -gt 0 ] ||
	[ "${#MISSING_TEST[@]}" -gt 0 ]; then
	step "installing: ${MISSING[*]} ${MISSING_FUZZ[*]} ${MISSING_TEST[*]}"
	export DEBIAN_FRONTEND=noninteractive
	APT_OPTS=(-y -q -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
	# tshark asks whether non-root users may capture; answer it up front.
	echo 'wireshark-common wireshark-common/install-setuid boolean false' |
		"${SUDO[@]}" debconf-set-selections
	# Finish any install an earlier, interrupted run left half done.
	"${SUDO[@]}" dpkg --configure -a
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o Acquire::Retries=3 update
	# Recommends are wanted: dpdk recommends its run-time PMD/mempool drivers.
	if [ "${#MISSING[@]}" -gt 0 ]; then
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${APT_OPTS[@]}" "${MISSING[@]}"
		# The package starts a system Redis on 127.0.0.1:6379; the tests
		# and benchmarks start their own, on Unix sockets.
		# So does etcd-server, an etcd on 127.0.0.1:2379 (PACKAGE:SERVICE).
		for ps in redis-server:redis-server etcd-server:etcd; do
			svc="${ps#*:}"
			if printf '%s\n' "${MISSING[@]}" | grep -qx "${ps%%:*}"; then
				if [ -d /run/systemd/system ]; then
					"${SUDO[@]}" systemctl disable --now "$svc" >/dev/null 2>&1 || true
				elif [ -x "/etc/init.d/$svc" ]; then
					"${SUDO[@]}" "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
				fi
			fi
		done
	fi
	if [ "${#MISSING_FUZZ[@]}" -gt 0 ]; then
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${APT_OPTS[@]}" \
			--no-install-recommends "${MISSING_FUZZ[@]}"
	fi
	if [ "${#MISSING_TEST[@]}" -gt 0 ]; then
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${APT_OPTS[@]}" \
			--no-install-recommends "${MISSING_TEST[@]}"
		if [ -d /run/systemd/system ]; then
			"${SUDO[@]}" systemctl disable --now prometheus >/dev/null 2>&1 || true
		fi
	fi
else
	step "all $((${#PACKAGES[@]} + RUN_FUZZ * ${#FUZZ_PACKAGES[@]})) packages already installed"
fi

# ---------------------------------------------------------------------------
# b. 2 MB hugepages
# ---------------------------------------------------------------------------
HP_WANT=1024
HP_SYS=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
HP_MNT=/dev/hugepages

step "hugepages"
if [ ! -e "$HP_SYS" ]; then
	echo "setup.sh: $HP_SYS does not exist: this kernel has no 2 MB hugepage support (or /sys is not mounted)" >&2
	exit 1
fi
hp_now="$(cat "$HP_SYS")"
if [ "$hp_now" -lt "$HP_WANT" ]; then
	echo "reserving $HP_WANT x 2 MB hugepages (currently $hp_now)"
	echo "$HP_WANT" | "${SUDO[@]}" tee "$HP_SYS" >/dev/null 2>&1 || true
	hp_now="$(cat "$HP_SYS")"
	if [ "$hp_now" -lt "$HP_WANT" ]; then
		# Memory may be too fragmented: compact and try once more.
		echo 1 | "${SUDO[@]}" tee /proc/sys/vm/compact_memory >/dev/null 2>&1 || true
		echo "$HP_WANT" | "${SUDO[@]}" tee "$HP_SYS" >/dev/null 2>&1 || true
		hp_now="$(cat "$HP_SYS")"
	fi
	if [ "$hp_now" -lt "$HP_WANT" ]; then
		echo "setup.sh: ERROR: could not reserve $HP_WANT 2 MB hugepages: only $hp_now reserved." >&2
		echo "  Writing $HP_SYS failed or the kernel lacks contiguous free memory." >&2
		echo "  Free memory or raise it by hand: echo $HP_WANT > $HP_SYS" >&2
		exit 1
	fi
fi
if ! grep -qs "^[^ ]* $HP_MNT hugetlbfs " /proc/mounts; then
	echo "mounting hugetlbfs on $HP_MNT"
	"${SUDO[@]}" mkdir -p "$HP_MNT"
	"${SUDO[@]}" mount -t hugetlbfs nodev "$HP_MNT"
fi
echo "hugepages: $hp_now x 2 MB reserved, $(awk '/HugePages_Free/ {print $2}' /proc/meminfo) free, hugetlbfs on $HP_MNT"

# ---------------------------------------------------------------------------
# c. configure and build
# ---------------------------------------------------------------------------
# configure_dir DIR [VAR=VALUE...] -- [MESON OPTIONS...]: meson setup DIR, with
# those variables in its environment, unless DIR is already configured for
# this source tree.
configure_dir() {
	local dir=$1 configured_src
	local -a envs=()
	shift
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ "$#" -eq 0 ] || shift
	# A build dir configured from another source tree (e.g. a copied repo) is stale.
	if [ -f "$dir/meson-info/meson-info.json" ]; then
		configured_src="$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
			"$dir/meson-info/meson-info.json" 2>/dev/null || true)"
		if [ -n "$configured_src" ] && [ "$configured_src" != "$REPO_ROOT" ]; then
			echo "$dir was configured for $configured_src, not $REPO_ROOT: wiping it"
			rm -rf "$dir"
		fi
	fi

	if [ -f "$dir/build.ninja" ] && [ -f "$dir/meson-private/coredata.dat" ]; then
		step "meson: $dir already configured (ninja re-runs meson if meson.build changed)"
	else
		if [ -e "$dir" ]; then
			echo "$dir exists but is not a configured meson build dir (an earlier configure failed?): removing it"
			rm -rf "$dir"
		fi
		step "meson setup $dir ${envs[*]} $*"
		env "${envs[@]}" meson setup "$dir" "$@"
	fi
}

configure_dir "$BUILD_DIR" -- "${MESON_OPTS[@]}"

step "ninja -C $BUILD_DIR"
ninja -C "$BUILD_DIR"

# ---------------------------------------------------------------------------
# d. demo / test
# ---------------------------------------------------------------------------
if [ "$MODE" = demo ]; then
	if [ ! -f examples/run_demo.sh ]; then
		echo "setup.sh: examples/run_demo.sh not found" >&2
		exit 1
	fi
	step "examples/run_demo.sh $BUILD_DIR"
	bash examples/run_demo.sh "$BUILD_DIR"
	step "demo done"
	exit 0
fi

TESTLOG="$BUILD_DIR/meson-logs/testlog.json"
rm -f "$TESTLOG"
step "meson test -C $BUILD_DIR"
test_rc=0
meson test -C "$BUILD_DIR" --print-errorlogs --num-processes 1 --timeout-multiplier 3 \
	--no-suite model-extra || test_rc=$?
step "meson test exited with $test_rc"
SUITES=("main:$TESTLOG:$test_rc")

# The fuzz suite: a short libFuzzer run of each target (tests/fuzz/README.md).
# Only the fuzz targets are built with clang (each compiles in the sources it
# tests), not the whole tree a second time.  Their results join the summary;
# failing to configure or build them counts as one failed test.
if [ "$RUN_FUZZ" -eq 1 ]; then
	FUZZ_LOG="$FUZZ_DIR/meson-logs/testlog.json"
	if [ -z "${FUZZ_SECONDS:-}" ]; then
		export FUZZ_SECONDS=8
		export FUZZ_SECONDS_fuzz_bfd="${FUZZ_SECONDS_fuzz_bfd:-15}"
	fi
	fuzz_rc=0
	fuzz_targets=()
	configure_dir "$FUZZ_DIR" CC=clang -- -Dfuzz=true || fuzz_rc=$?
	if [ "$fuzz_rc" -eq 0 ]; then
		# Regenerate first if a meson.build changed, so a new target is listed.
		ninja -C "$FUZZ_DIR" build.ninja >/dev/null || fuzz_rc=$?
	fi
	if [ "$fuzz_rc" -eq 0 ]; then
		# The executables defined in tests/fuzz/meson.build, as ninja targets.
		mapfile -t fuzz_targets < <(meson introspect "$FUZZ_DIR" --targets | "$PY" -c '
import json, os, sys
build = os.path.abspath(sys.argv[1])
for t in json.load(sys.stdin):
    if t["defined_in"].endswith(os.path.join("tests", "fuzz", "meson.build")):
        for f in t["filename"]:
            print(os.path.relpath(f, build))
' "$FUZZ_DIR") || fuzz_rc=$?
	fi
	if [ "$fuzz_rc" -eq 0 ] && [ "${#fuzz_targets[@]}" -eq 0 ]; then
		echo "setup.sh: no fuzz target in $FUZZ_DIR" >&2
		fuzz_rc=1
	fi
	if [ "$fuzz_rc" -eq 0 ]; then
		step "ninja -C $FUZZ_DIR ${fuzz_targets[*]}"
		ninja -C "$FUZZ_DIR" "${fuzz_targets[@]}" || fuzz_rc=$?
	fi
	rm -f "$FUZZ_LOG"
	if [ "$fuzz_rc" -eq 0 ]; then
		step "meson test -C $FUZZ_DIR --suite fuzz (FUZZ_SECONDS=$FUZZ_SECONDS${FUZZ_SECONDS_fuzz_bfd:+, fuzz_bfd: $FUZZ_SECONDS_fuzz_bfd})"
		meson test -C "$FUZZ_DIR" --no-rebuild --suite fuzz --print-errorlogs || fuzz_rc=$?
		step "meson test --suite fuzz exited with $fuzz_rc"
		SUITES+=("fuzz:$FUZZ_LOG:$fuzz_rc")
	else
		echo "setup.sh: could not configure or build $FUZZ_DIR (status $fuzz_rc): one failed test" >&2
		SUITES+=("fuzz build:-:$fuzz_rc")
	fi
fi

# The next DPDK LTS: scripts/check-dpdk24.sh builds the tree warning-free
# against Debian 13's DPDK 24.11 in a trixie chroot and runs the unit tests
# there; they join the summary (a build that fails is one failed test).
# SETUP_DPDK24=0 skips it.
if [ "$MODE" = test ] && [ "${SETUP_DPDK24:-1}" != 0 ]; then
	DPDK24_LOG=build-dpdk24/meson-logs/testlog.json
	rm -f "$DPDK24_LOG"
	step "scripts/check-dpdk24.sh (DPDK 24.11, Debian 13 chroot)"
	dpdk24_rc=0
	bash scripts/check-dpdk24.sh </dev/null || dpdk24_rc=$?
	if [ -f "$DPDK24_LOG" ]; then
		SUITES+=("dpdk24 unit:$DPDK24_LOG:$dpdk24_rc")
	else
		SUITES+=("dpdk24 build:-:$dpdk24_rc")
	fi
fi

# Prints the summary line and exits 1 on failures or when nothing ran.
# One argument a suite, NAME:TESTLOG:STATUS (STATUS: meson test's; TESTLOG
# "-": the suite could not be built, which counts as one failure).
"$PY" - "${SUITES[@]}" <<'EOF'
import json, os, sys

passed = failed = skipped = 0
bad = False
for arg in sys.argv[1:]:
    name, path, rc = arg.rsplit(":", 2)
    rc = int(rc)
    p = f = s = 0
    names = []  # of the tests that failed, said last: the end of a long log is what is read
    if path == "-":
        f = 1
    elif os.path.exists(path):
        with open(path) as log:
            for line in log:
                line = line.strip()
                if not line:
                    continue
                try:
                    t = json.loads(line)
                    result = t.get("result")
                except ValueError:
                    f += 1
                    continue
                if result in ("OK", "EXPECTEDFAIL"):
                    p += 1
                elif result == "SKIP":
                    s += 1
                else:
                    f += 1
                    # why it failed, where CI shows only the end: its FAIL
                    # lines first (a test's dumped logs come after them), then
                    # the last lines of its output and of its error output
                    so = (t.get("stdout") or "").rstrip().splitlines()
                    se = (t.get("stderr") or "").rstrip().splitlines()
                    why = []
                    for i, x in enumerate(se):
                        if x.startswith(("FAIL", "Traceback")):
                            for y in se[i:i + 8]:
                                if y.startswith("-----") and why:
                                    break  # the logs dumped after it
                                why.append(y)
                            break
                    out = why + so[-4:] + [x for x in se[-6:] if x not in why]
                    names.append("%s (%s, %.0f s)%s" % (t.get("name"), result,
                                                        t.get("duration") or 0,
                                                        "".join("\n    | " + x for x in out)))
    else:
        print("setup.sh: %s not found: no %s test ran" % (path, name), file=sys.stderr)
    if p + f == 0:
        print("setup.sh: no %s test ran" % name, file=sys.stderr)
        bad = True
    elif rc != 0 and not f:
        print("setup.sh: meson test (%s) exited with %d although no test failed" % (name, rc),
              file=sys.stderr)
        bad = True
    print("setup.sh: %s: %d passed, %d failed, %d skipped%s" %
          (name, p, f, s, "".join("\n  failed: " + x for x in names)), file=sys.stderr)
    passed, failed, skipped = passed + p, failed + f, skipped + s

summary = "%d passed, %d failed" % (passed, failed)
if skipped:
    summary += ", %d skipped" % skipped
bad = bad or failed > 0
sys.stderr.flush()
print(summary)
sys.stdout.flush()
sys.exit(1 if bad else 0)
EOF
