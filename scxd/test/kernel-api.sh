#!/bin/bash
# One policy against each kernel API (--kernel-api, as scxd would read it
# from the kernel's BTF): which objects scxd takes (SCHED_DIR or
# SCHED_DIR/cid), what it refuses at --check and at reload (children on a
# root-only kernel, a scheduler with no object for the API) naming the
# file, line and entry and the kernel's limit, that a refused reload keeps
# the running policy, and what status and describe say of the kernel.
# Glue for meson test, on a fake cgroup tree (scxd --dry-run --serve).
# Usage: kernel-api.sh SCXD SCXDCTL SCHED_DIR POLICY
set -u
scxd=$1 ctl=$2 test_objs=$3 policy_src=$4
. "$(dirname "$0")/lib.sh"

# SCHED_DIR: every test object (cpu-form); SCHED_DIR/cid: the cid-form set,
# here copies of the same objects, without vtime at first
objs=$tmp/lib/scxd
mkdir -p "$objs/cid" "$tmp/cg/scxd.slice/scxd-demo.slice/web.scope" "$tmp/cg/workload/a" \
	"$tmp/sys/root" "$tmp/pins" "$tmp/state"
cp "$test_objs"/*.bpf.o "$objs/"
for s in wparent fifo lat; do cp "$test_objs/$s.bpf.o" "$objs/cid/"; done
cp "$policy_src" "$tmp/policy.json"
policy=$tmp/policy.json
root_only=$tmp/root-only.json
printf '{ "version": 1, "entries": [ { "cgroup": "/", "scheduler": "fifo" } ] }\n' >"$root_only"

scxd_check() { "$scxd" --check "$1" --sched-dir "$objs" --no-strict-modes --kernel-api="$2" 2>&1; }

# --- scxd --check ------------------------------------------------------------------
out=$(scxd_check "$policy" root-only); rc=$?
echo "# --check, root-only kernel: $out"
[ $rc = 1 ] && [ "$(grep -c ': a sub-scheduler, but the kernel has sched_ext without sub-schedulers (root only)$' <<<"$out")" = 3 ]
check "check, root-only kernel: refused, each of the 3 child entries named (exit $rc)" [ $? = 0 ]
check "check, root-only kernel: file:line:column and entry" \
	grep -q "^$policy:23:17: entries\[3\] \"/workload/\*\" (lat): a sub-scheduler" <<<"$out"
out=$(scxd_check "$root_only" root-only); rc=$?
check "check, root-only kernel: a root-only policy is valid (exit $rc: $out)" \
	grep -q "valid, 1 entries (kernel: root only; schedulers from $objs)" <<<"$out"

out=$(scxd_check "$policy" cid); rc=$?
echo "# --check, cid kernel without cid/vtime: $out"
[ $rc = 1 ] && grep -q "^$policy:13:20: entries\[1\] unit \"\*.scope\": scheduler \"vtime\" has no cid-form object in $objs/cid ($objs/vtime.bpf.o is cpu-form)$" <<<"$out"
check "check, cid kernel: a scheduler with no cid-form object is refused at its entry (exit $rc)" [ $? = 0 ]
check "check, cid kernel: only that entry" [ "$(wc -l <<<"$out")" = 1 ]
cp "$test_objs/vtime.bpf.o" "$objs/cid/"
out=$(scxd_check "$policy" cid); rc=$?
check "check, cid kernel: valid with every object in cid/ (exit $rc: $out)" \
	grep -q "valid, 4 entries (kernel: sub-schedulers (cid-form, upstream); schedulers from $objs/cid)" <<<"$out"
out=$(scxd_check "$policy" cpu); rc=$?
check "check, cpu kernel: valid, objects from SCHED_DIR (exit $rc: $out)" \
	grep -q "valid, 4 entries (kernel: sub-schedulers (cpu-form, scxd series); schedulers from $objs)" <<<"$out"
out=$("$scxd" --check "$policy" --sched-dir "$objs" --no-strict-modes --btf "$tmp/no-such-btf" 2>&1); rc=$?
check "check, no kernel BTF: the policy alone is checked, and it says so (exit $rc: $out)" \
	grep -q "valid, 4 entries (schedulers from $objs; not checked against a kernel" <<<"$out"
out=$("$ctl" -s "$objs" --kernel-api=root-only --no-strict-modes check "$policy" 2>&1); rc=$?
check "scxdctl check, root-only kernel: refused as scxd --check does (exit $rc)" \
	[ $rc = 1 -a "$(grep -c '(root only)$' <<<"$out")" = 3 ]
out=$("$ctl" -s "$objs" --kernel-api=cid list)
check "scxdctl list, cid kernel: the objects in cid/" \
	grep -q "^vtime .*$objs/cid/vtime.bpf.o" <<<"$out"
check "scxdctl list, cid kernel: says so" \
	grep -q "^kernel: sub-schedulers (cid-form, upstream); objects from $objs/cid$" <<<"$out"
out=$("$scxd" --kernel-api=cid --describe vtime --sched-dir "$objs" --no-strict-modes 2>&1)
check "scxd --describe, cid kernel: the cid-form object and the kernel" \
	bash -c 'grep -q "^vtime ($2/cid/vtime.bpf.o)" <<<"$1" && grep -q "kernel: sub-schedulers (cid-form, upstream)" <<<"$1"' _ "$out" "$objs"

# --- the daemon: status, describe, reload --------------------------------------------
start_scxd() {	# API [extra args]; sets scxd_pid
	local api=$1
	shift
	serve_scxd "$scxd" "$ctl" -- --kernel-api="$api" --policy "$policy" --sched-dir "$objs" "$@"
}

start_scxd cid || exit 1
st=$("$ctl" -S "$sock" status)
check "status, cid kernel: the kernel line" grep -q "^kernel: sub-schedulers (cid-form, upstream)$" <<<"$st"
js=$("$ctl" -S "$sock" --json status)
check "status --json, cid kernel: kernel_api cid, kernel sub-schedulers" \
	bash -c 'grep -q "\"kernel_api\": \"cid\"" <<<"$1" && grep -q "\"kernel\": \"sub-schedulers\"" <<<"$1"' _ "$js"
check "the daemon logs the kernel and where its objects are" \
	grep -q "kernel: sub-schedulers (cid-form, upstream) (as --kernel-api says); scheduler objects from $objs/cid" "$tmp/scxd.err"
out=$("$ctl" -S "$sock" describe vtime)
check "describe, cid kernel: the cid-form object and the kernel" \
	bash -c 'grep -q "$2/cid/vtime.bpf.o" <<<"$1" && grep -q "^  kernel: sub-schedulers (cid-form, upstream)$" <<<"$1"' _ "$out" "$objs"
check "describe --json, cid kernel: kernel_api cid" \
	grep -q '"kernel_api": "cid"' <<<"$("$ctl" -S "$sock" --json describe vtime)"
# the cid-form fifo goes away: a reload is refused, the running policy stays
mv "$objs/cid/fifo.bpf.o" "$tmp/fifo.bpf.o"
out=$("$ctl" -S "$sock" reload 2>&1); rc=$?
echo "# reload without cid/fifo: exit $rc: $out"
[ $rc = 1 ] && grep -q "entries\[2\] unit \"batch.scope\": scheduler \"fifo\" has no cid-form object in $objs/cid" <<<"$out"
check "reload, cid kernel: a scheduler with no cid-form object is refused, naming the entry (exit $rc)" [ $? = 0 ]
check "refused reload: the running policy is kept, and the log says so" \
	grep -q "policy rejected, keeping the running policy" "$tmp/scxd.err"
st=$("$ctl" -S "$sock" status)
check "refused reload: status still has 4 entries and names the refusal" \
	bash -c 'grep -q "^policy: .* (4 entries)" <<<"$1" && grep -q "^last reload rejected: .*no cid-form object" <<<"$1"' _ "$st"
mv "$tmp/fifo.bpf.o" "$objs/cid/fifo.bpf.o"
stop_scxd

cp "$root_only" "$tmp/policy.json"
start_scxd root-only || exit 1
check "status, root-only kernel: the kernel line" \
	grep -q "^kernel: root only$" <<<"$("$ctl" -S "$sock" status)"
check "status --json, root-only kernel: kernel_api root-only" \
	grep -q '"kernel_api": "root-only"' <<<"$("$ctl" -S "$sock" --json status)"
cp "$policy_src" "$tmp/policy.json"
out=$("$ctl" -S "$sock" reload 2>&1); rc=$?
check "reload, root-only kernel: a policy with children is refused (exit $rc)" \
	[ $rc = 1 -a "$(grep -c 'without sub-schedulers (root only)$' <<<"$out")" = 3 ]
check "refused reload, root-only kernel: status keeps the 1-entry policy" \
	grep -q "^policy: .* (1 entries)" <<<"$("$ctl" -S "$sock" status)"
out=$("$ctl" -S "$sock" diff "$policy_src" 2>&1); rc=$?
check "diff, root-only kernel: the policy with children is not valid here (exit $rc)" \
	[ $rc = 1 -a "$(grep -c '(root only)$' <<<"$out")" = 3 ]
stop_scxd

start_scxd cpu --btf "$tmp/no-such-btf" >/dev/null 2>&1
check "cpu kernel (--kernel-api beats --btf): the kernel line" \
	grep -q "^kernel: sub-schedulers (cpu-form, scxd series)$" <<<"$("$ctl" -S "$sock" status)"
stop_scxd

echo "kernel-api: $passed passed, $failed failed"
[ "$failed" = 0 ]
