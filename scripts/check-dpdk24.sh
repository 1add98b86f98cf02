#!/usr/bin/env bash
# check-dpdk24.sh -- build the tree against DPDK 24.11 (Debian 13 "trixie"'s
# libdpdk-dev) with every warning an error, and run the unit tests there.
#
#   bash scripts/check-dpdk24.sh
#
# For root on Debian 12 (a CI machine or a developer's), no standard input.
# The project itself builds against Debian 12's DPDK 22.11 (scripts/setup.sh);
# this script keeps it building on the next LTS too, without touching the
# host: everything happens in a trixie minbase chroot, cached between runs.
#
#  1. The chroot (DPDK24_CHROOT, default /var/tmp/onvm-trixie) is made by
#     debootstrap the first time (into a .partial directory, renamed when
#     complete, so an interrupted run leaves nothing that looks usable), and
#     reused after that.  Only the packages below are installed, without
#     Recommends; a warm run installs nothing and needs no network.
#  2. /proc, /sys and /dev are bound into it (rslave: unmounting them there
#     never reaches the host's), and the repository (traces included) at
#     /onvm/repo.  All of them are unmounted on exit, failed runs included.
#  3. build-dpdk24/ (in the repository, next to build/) is configured with
#     --werror (meson.build sets warning_level=2: -Wall -Wextra), the whole
#     tree is built, and `meson test --suite unit` runs.
#
# The last line printed is "dpdk24: N passed, N failed" (N: meson tests; a
# build that fails counts as one failed test).  The exit status is non-zero if
# the build failed, any test failed, or none ran.
#
# Env: DPDK24_CHROOT (chroot directory), DPDK24_MIRROR (Debian mirror, default
# http://deb.debian.org/debian).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHROOT="${DPDK24_CHROOT:-/var/tmp/onvm-trixie}"
MIRROR="${DPDK24_MIRROR:-http://deb.debian.org/debian}"
SUITE=trixie
BUILD_DIR=build-dpdk24 # relative to the repository
IN_REPO=/onvm/repo

# What building the tree and running its unit tests needs, and nothing more
# (the integration tests' tshark, scapy, FRR... are not installed).
PACKAGES=(
	gcc libc6-dev pkgconf meson ninja-build
	libdpdk-dev libjansson-dev libpcap-dev libbsd-dev libcmocka-dev
	libndpi-dev # the dpi NF and its unit test; brings libgcrypt20-dev
	libhiredis-dev # libnf's store client (stateless chains)
)

T0=$SECONDS
step() { echo "==> check-dpdk24 [$((SECONDS - T0))s] $*"; }
die() {
	echo "check-dpdk24: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and mount need it)"
case "$CHROOT" in
/*/*) ;;
*) die "DPDK24_CHROOT must be an absolute path below /: $CHROOT" ;;
esac
case "$CHROOT/" in
"$REPO_ROOT"/*) die "the chroot ($CHROOT) must be outside the repository" ;;
esac

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q -o Acquire::Retries=3 -o DPkg::Lock::Timeout=600 --no-install-recommends)

# One run at a time per chroot: a second waits for the first.
exec 9>"$CHROOT.lock"
flock -w 3600 9 || die "$CHROOT.lock is held by another run"

# ---------------------------------------------------------------------------
# Mounts.  Everything mounted is recorded and unmounted in reverse order on
# exit, whatever the exit.
# ---------------------------------------------------------------------------
MOUNTED=()

mounts_under() { # prints the mount points at or below $1
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts
}

unmount_all() {
	local i
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		umount -R "${MOUNTED[$i]}" 2>/dev/null || umount -R -l "${MOUNTED[$i]}" ||
			echo "check-dpdk24: warning: cannot unmount ${MOUNTED[$i]}" >&2
	done
	MOUNTED=()
}
trap unmount_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# bind SRC DST [ro]: recursive bind, slave so that nothing unmounted below
# DST propagates back to SRC.
bind() {
	local src=$1 dst=$2
	mkdir -p "$dst"
	mount --rbind --make-rslave "$src" "$dst"
	MOUNTED+=("$dst")
	if [ "${3:-}" = ro ]; then
		mount -o remount,bind,ro "$dst"
	fi
}

# A run killed before its trap ran leaves mounts behind: clear them first.
unmount_stale() {
	local dir=$1 m
	while read -r m; do
		[ -n "$m" ] || continue
		echo "check-dpdk24: unmounting $m, left over by an earlier run" >&2
		umount -R "$m" 2>/dev/null || umount -R -l "$m"
	done < <(mounts_under "$dir" | sort -r)
}

mount_system() { # the kernel's file systems, into the chroot at $1
	local root=$1
	bind /proc "$root/proc"
	bind /sys "$root/sys"
	bind /dev "$root/dev"
	[ ! -f /etc/resolv.conf ] || cp -L /etc/resolv.conf "$root/etc/resolv.conf"
}

# Prints those packages of PACKAGES that the chroot at $1 lacks.
missing_in() {
	local root=$1 p
	for p in "${PACKAGES[@]}"; do
		# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
		if [ "$(chroot "$root" dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
			echo "$p"
		fi
	done
}

install_missing() {
	local root=$1 missing
	mapfile -t missing < <(missing_in "$root")
	if [ "${#missing[@]}" -eq 0 ]; then
		step "chroot has all ${#PACKAGES[@]} packages"
		return 0
	fi
	step "installing in the chroot: ${missing[*]}"
	chroot "$root" apt-get -q -o Acquire::Retries=3 update </dev/null
	chroot "$root" apt-get install "${APT_OPTS[@]}" "${missing[@]}" </dev/null
	chroot "$root" apt-get clean
}

# ---------------------------------------------------------------------------
# 1. The chroot
# ---------------------------------------------------------------------------
unmount_stale "$CHROOT"
unmount_stale "$CHROOT.partial"

if [ -x "$CHROOT/usr/bin/meson" ] && [ -f "$CHROOT/.onvm-dpdk24" ]; then
	step "reusing the $SUITE chroot $CHROOT"
	mount_system "$CHROOT"
	install_missing "$CHROOT"
else
	if [ -e "$CHROOT" ]; then
		die "$CHROOT exists but is not a complete chroot made by this script: remove it"
	fi
	if ! command -v debootstrap >/dev/null 2>&1; then
		step "installing debootstrap on the host"
		apt-get -q -o Acquire::Retries=3 update </dev/null
		apt-get install "${APT_OPTS[@]}" debootstrap debian-archive-keyring </dev/null
	fi
	PARTIAL="$CHROOT.partial"
	if [ -e "$PARTIAL" ]; then
		[ -z "$(mounts_under "$PARTIAL")" ] || die "$PARTIAL still has mounts: not removing it"
		step "removing $PARTIAL, left by an interrupted run"
		rm -rf --one-file-system "$PARTIAL"
	fi
	step "debootstrap --variant=minbase $SUITE $PARTIAL $MIRROR"
	debootstrap --variant=minbase \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$SUITE" "$PARTIAL" "$MIRROR" >"$CHROOT.debootstrap.log" 2>&1 ||
		{
			tail -n 30 "$CHROOT.debootstrap.log" >&2
			die "debootstrap failed (log: $CHROOT.debootstrap.log)"
		}
	# Nothing installed here may start a service.
	printf '#!/bin/sh\nexit 101\n' >"$PARTIAL/usr/sbin/policy-rc.d"
	chmod 755 "$PARTIAL/usr/sbin/policy-rc.d"
	mount_system "$PARTIAL"
	install_missing "$PARTIAL"
	unmount_all
	echo "made by scripts/check-dpdk24.sh: $SUITE minbase + ${PACKAGES[*]}" >"$PARTIAL/.onvm-dpdk24"
	mv "$PARTIAL" "$CHROOT"
	mount_system "$CHROOT"
fi
step "DPDK in the chroot: $(chroot "$CHROOT" pkg-config --modversion libdpdk), gcc $(chroot "$CHROOT" gcc -dumpfullversion)"

# ---------------------------------------------------------------------------
# 2. The source tree
# ---------------------------------------------------------------------------
bind "$REPO_ROOT" "$CHROOT$IN_REPO"

# A clean environment inside: nothing of the host's (sanitizer options,
# another PATH) leaks into the build or the tests.
in_chroot() {
	local -a envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}")
	# shellcheck disable=SC2016 # expanded by the chroot's sh
	chroot "$CHROOT" env -i "${envs[@]}" sh -c 'cd "$0" && exec "$@"' "$IN_REPO" "$@" </dev/null
}

# ---------------------------------------------------------------------------
# 3. Configure, build, test
# ---------------------------------------------------------------------------
build_rc=0
if [ -f "$REPO_ROOT/$BUILD_DIR/meson-private/coredata.dat" ]; then
	step "meson setup --reconfigure --werror $BUILD_DIR"
	in_chroot meson setup --reconfigure --werror "$BUILD_DIR" >/dev/null || build_rc=$?
else
	rm -rf "${REPO_ROOT:?}/$BUILD_DIR"
	step "meson setup --werror $BUILD_DIR"
	in_chroot meson setup --werror "$BUILD_DIR" || build_rc=$?
fi
if [ "$build_rc" -eq 0 ]; then
	step "ninja -C $BUILD_DIR"
	in_chroot ninja -C "$BUILD_DIR" || build_rc=$?
fi

passed=0 failed=0 skipped=""
if [ "$build_rc" -ne 0 ]; then
	echo "check-dpdk24: configuring or building against DPDK 24.11 failed (status $build_rc)" >&2
	failed=1
else
	step "meson test -C $BUILD_DIR --suite unit"
	rm -f "$REPO_ROOT/$BUILD_DIR/meson-logs/testlog.json"
	test_rc=0
	in_chroot meson test -C "$BUILD_DIR" --no-rebuild --suite unit --print-errorlogs \
		--timeout-multiplier 3 || test_rc=$?
	# Count meson tests from the JSON log (the chroot's python, a meson dependency).
	read -r passed failed skipped < <(in_chroot python3 -c '
import json, re, sys
p = f = s = 0
try:
    log = open(sys.argv[1])
except OSError:
    log = []
for line in log:
    if line.strip():
        try:
            t = json.loads(line)
        except ValueError:
            f += 1
            continue
        r = t.get("result")
        if r in ("OK", "EXPECTEDFAIL"):
            p += 1
        elif r == "SKIP":
            s += 1
        else:
            f += 1
        # cmocka tests that skipped themselves inside a passing executable
        m = re.search(r"\[  SKIPPED \] \S+: (\d+) test\(s\), listed below",
                      t.get("stdout", "") + t.get("stderr", ""))
        if m:
            print("check-dpdk24: %s: %s of its cmocka tests skipped"
                  % (t.get("name"), m.group(1)), file=sys.stderr)
print(p, f, s)
' "$BUILD_DIR/meson-logs/testlog.json") || true
	passed=${passed:-0} failed=${failed:-1}
	if [ "$test_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		echo "check-dpdk24: meson test exited with $test_rc although no test failed" >&2
		failed=1
	fi
	if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then
		echo "check-dpdk24: no unit test ran" >&2
		failed=1
	fi
	if [ "${skipped:-0}" -gt 0 ]; then
		echo "check-dpdk24: $skipped meson test(s) skipped" >&2
	fi
fi

unmount_all
step "done in $((SECONDS - T0))s"
echo "dpdk24: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
