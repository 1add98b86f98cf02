#!/usr/bin/env bash
# check-commits.sh -- check commit messages the way DPDK's check-git-log.sh
# and the kernel's checkpatch do, for every commit since the history was
# cleaned up (commits before BASE are left as they are).
#
#   scripts/check-commits.sh [RANGE]        default: BASE..HEAD
#   scripts/check-commits.sh --msg FILE     one message (the commit-msg hook)
#
# A message is refused, with the reason, when
#   - the subject is longer than 72 characters, or not "area: summary"
#     (area: lower-case letters, digits, "_-./+", optionally a comma list),
#     or ends with a period;
#   - the second line is not empty;
#   - a body line is longer than 72 characters, unless it is a single word
#     (a URL, a path) or a tag line ("Fixes: <hash> (\"subject\")", ...);
#   - it names a path of a development machine (/work/, /root/, /home/).
# Exit status 0 when every message passes, 1 otherwise.  Without git or a
# .git directory (a tarball) the range check says so and passes.
set -euo pipefail

# The last commit before this check existed: history up to it is not checked.
BASE=746ece34b1044e87084ca1493114606fa9b7cfa4
BASE_DATE=2026-11-27T09:54:57Z

check_msg() { # $1: label, stdin: the message; prints problems, returns 1 if any
	local label=$1 n=0 bad=0 line subject=""
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in "#"*) continue ;; esac # comments of an editor's template
		n=$((n + 1))
		if [ $n -eq 1 ]; then
			subject=$line
			if [ ${#line} -gt 72 ]; then
				echo "$label: subject is ${#line} characters (at most 72): $line"
				bad=1
			fi
			if ! [[ $line =~ ^[a-z0-9_./+-]+(,\ ?[a-z0-9_./+-]+)*:\ [^\ ] ]]; then
				echo "$label: subject is not 'area: summary': $line"
				bad=1
			fi
			case "$line" in *.) echo "$label: subject ends with a period: $line"; bad=1 ;; esac
		elif [ $n -eq 2 ]; then
			if [ -n "$line" ]; then
				echo "$label: no blank line between the subject and the body"
				bad=1
			fi
		elif [ ${#line} -gt 72 ] && [[ $line == *" "* ]] &&
			! [[ $line =~ ^[A-Z][A-Za-z-]*:\  ]]; then
			echo "$label: body line of ${#line} characters (wrap at 72): ${line:0:60}..."
			bad=1
		fi
		case "$line" in *"/work/"* | *"/root/"* | *"/home/"*)
			echo "$label: names a local path: $line"
			bad=1
			;;
		esac
	done
	[ -n "$subject" ] || { echo "$label: empty message"; bad=1; }
	return $bad
}

if [ "${1:-}" = --msg ]; then
	[ -n "${2:-}" ] || { echo "usage: $0 --msg FILE" >&2; exit 2; }
	# git commit -v appends the diff below a scissors line: not part of the message.
	sed '/^# -\{24\} >8 -\{24\}$/,$d' "$2" | check_msg "commit message"
	exit $?
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# A clone made by another user (a CI checkout bound into a chroot) is still ours to read.
git() { command git -c safe.directory='*' "$@"; }
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --git-dir >/dev/null 2>&1; then
	echo "check-commits: no git repository here: nothing to check"
	exit 0
fi
if [ -n "${1:-}" ]; then
	range=("$1")
elif git cat-file -e "$BASE^{commit}" 2>/dev/null; then
	range=("$BASE..HEAD")
else
	# A shallow clone without BASE: the commits made after it.
	range=(--since="$BASE_DATE" HEAD)
fi
total=0 failed=0
while read -r hash; do
	total=$((total + 1))
	git log -1 --format=%B "$hash" | check_msg "$(git log -1 --format='%h' "$hash")" ||
		failed=$((failed + 1))
done < <(git rev-list --no-merges "${range[@]}")
echo "check-commits: $total commit(s) checked, $failed refused"
[ "$failed" -eq 0 ]
