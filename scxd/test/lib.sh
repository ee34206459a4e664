# SPDX-License-Identifier: GPL-2.0
# Sourced by the host tests' scripts (control.sh, kernel-api.sh, scoped.sh,
# watch-race.sh): a scratch directory $tmp removed at exit with the
# processes in pids[], the ok/nok/check counters, and scxd --dry-run
# --serve on the fake tree below $tmp (cg, sys, pins, state).
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0 failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
nok() { echo "FAILED: $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
sock=$tmp/state/control

# serve_scxd SCXD [CTL] -- ARGS: start it in the background on the fake tree
# (stdout to $tmp/scxd.out, appended; stderr to $tmp/scxd.err), set
# scxd_pid, and wait until its socket is there (and, given CTL, answers
# status). 1 if it did not come up.
serve_scxd() {
	local bin=$1 ctl=
	shift
	[ "$1" != -- ] && { ctl=$1; shift; }
	shift
	"$bin" --dry-run --serve --no-strict-modes --cgroup-root "$tmp/cg" --sysfs "$tmp/sys" \
		--pin-dir "$tmp/pins" --state-dir "$tmp/state" "$@" >>"$tmp/scxd.out" 2>"$tmp/scxd.err" &
	scxd_pid=$!
	pids+=("$scxd_pid")
	for _ in $(seq 100); do
		[ -S "$sock" ] && { [ -z "$ctl" ] || "$ctl" -S "$sock" status >/dev/null 2>&1; } && return 0
		sleep 0.05
	done
	echo "scxd did not come up:"; cat "$tmp/scxd.err"
	return 1
}
stop_scxd() {
	kill "$scxd_pid" 2>/dev/null
	wait "$scxd_pid" 2>/dev/null
}
