#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Inside the upstream guest, run by tests/compat-upstream/interop (see its
# header for what this proves): upstream's scx_qmap and our schedulers in
# one scheduler tree, each side as root and as child, each side unloaded
# and killed under the other.
#
#   sh interop.sh SERIES [qmap-root|ours-root]...
#
# Runs the sections named (default: both; 7 and 6 checks). Payloads:
# /payload/bin/{sched-run,ticker,scx_qmap,skip-busy-fentry.so} and
# /payload/schedulers/{fifo,vtime,wparent,cells}.bpf.o. Tasks: a spinning
# and a sleeping ticker in the root cgroup and in each of two cgroups a and
# b, left running from start to end, whichever scheduler (or the fair
# class) runs them. Prints "ok/not ok - compat-upstream/SERIES/interop/NAME
# (figures)", "# at N s" (guest time) after each, and "# differs: ..." for
# each thing seen that is not what was expected; the exit status is the
# number of failed checks.
series=${1:-7.3}
t=compat-upstream/$series/interop
bin=/payload/bin
objs=/payload/schedulers
scx=/sys/kernel/sched_ext
cg=/sys/fs/cgroup
run=/tmp/interop
fails=0
n_checks=0

ok() { echo "ok - $t/$1${2:+ ($2)}"; n_checks=$((n_checks + 1)); at; }
nok() {
	starved
	echo "not ok - $t/$1${2:+ ($2)}"
	n_checks=$((n_checks + 1))
	fails=$((fails + 1))
	at
}
# A scheduler's watchdog fired because its own check-in work did not run:
# the guest's vCPUs were held off by the host (other guests on the same
# cores), not a scheduling bug. Said once per such kernel line.
n_starved=0
starved() {
	lines=$(dmesg | grep 'watchdog failed to check in')
	n=$(printf '%s' "$lines" | grep -c .)
	[ "$n" -gt "$n_starved" ] || return 0
	printf '%s\n' "$lines" | tail -n $((n - n_starved)) | sed 's/^\[[^]]*\] *//' | while read -r l; do
		differs "the guest was starved by its host: '$l' (sched_ext's watchdog work itself did not run; the scheduler was ejected as stalled)"
	done
	n_starved=$n
}
# guest time since the workload started, after each check
at() { echo "# at $(( ($(now_ms) - t0_ms) / 1000 )) s"; }
differs() { echo "# differs: $*"; }
# the last lines of a loader's log, as comments
show_log() { [ -f "$1" ] && tail -n "${2:-5}" "$1" | sed "s|^|# $(basename "$1"): |"; }

now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
# wait up to $2 s until the command $1 succeeds; $1 is evaluated on each
# try, so callers quote it with single quotes
# shellcheck disable=SC2016
wait_until() {
	end=$(($(now_ms) + $2 * 1000))
	until eval "$1"; do
		[ "$(now_ms)" -ge $end ] && return 1
		sleep 0.1
	done
}

state() { cat $scx/state 2>/dev/null; }
root_ops() { cat $scx/root/ops 2>/dev/null; }
cgid() { stat -c %i "$cg/$1"; }
# the sysfs directory of the child scheduler on cgroup $1, under the root
subdir() { echo "$scx/root/sub/sub-$(cgid "$1")"; }
sub_ops() { cat "$(subdir "$1")/ops" 2>/dev/null; }
# "enq_immed=0-1 enq=1 ..." from a child's caps
caps() { awk -F': ' '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $1, $2 }' "$(subdir "$1")/caps" 2>/dev/null; }
# a process that has exited (or is a zombie not yet reaped)
gone() { s=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null); [ -z "$s" ] || [ "$s" = Z ]; }
# the exit kind in sched-run's exit line in log $1, empty if there is none
kind_of() { sed -n 's/.*exit kind=\([0-9]*\) .*/\1/p' "$1" | tail -1; }
# that line for a figure: 'N (SCX_EXIT_..., "reason")'
exit_kind() {
	k=$(kind_of "$1")
	[ -n "$k" ] || { echo "no exit line"; return; }
	echo "$k ($(kind_name "$k"), \"$(sed -n 's/.* reason="\([^"]*\)".*/\1/p' "$1" | tail -1)\")"
}
# the kernel's names (enum scx_exit_kind in kernel/sched/ext/internal.h)
kind_name() {
	case $1 in
	64) echo SCX_EXIT_UNREG ;;
	65) echo SCX_EXIT_UNREG_BPF ;;
	66) echo SCX_EXIT_UNREG_KERN ;;
	67) echo SCX_EXIT_SYSRQ ;;
	68) echo SCX_EXIT_PARENT ;;
	69) echo SCX_EXIT_PARENT_KILL ;;
	1024) echo SCX_EXIT_ERROR ;;
	1025) echo SCX_EXIT_ERROR_BPF ;;
	1026) echo SCX_EXIT_ERROR_STALL ;;
	1027) echo SCX_EXIT_ERROR_REENQ ;;
	1028) echo SCX_EXIT_ERROR_RESCUE ;;
	*) echo unknown ;;
	esac
}

# --- the workload -------------------------------------------------------------

t0_ms=$(now_ms)
mkdir -p $run
mkdir -p $cg/a $cg/b
names=
pids=
for g in root a b; do
	dir=$cg/$g
	[ $g = root ] && dir=$cg
	for k in spin sleep; do
		case $k in
		spin*) args="-i 0 -w 5000" ;;	# always runnable, a tick per 5 ms of CPU
		sleep) args="-i 20 -w 500" ;;	# 0.5 ms of CPU, then 20 ms asleep
		esac
		# shellcheck disable=SC2086
		$bin/ticker -g "$dir" $args "$run/$g.$k" &
		names="$names $g.$k"
		pids="$pids $!"
	done
done

counts() { for n in $names; do echo "$n $(cat "$run/$n" 2>/dev/null || echo 0)"; done; }
# progress SECS: every ticker's counter grew over SECS s. $fig: each one's
# ticks/s; $stuck: those whose counter did not move.
progress() {
	counts > $run/before
	t0=$(now_ms)
	sleep "$1"
	counts > $run/after
	t1=$(now_ms)
	out=$(awk -v ms=$((t1 - t0)) '
		NR == FNR { b[$1] = $2; next }
		{
			d = $2 - b[$1]
			split($1, p, ".")
			if (!(p[1] in f)) { order[++n] = p[1]; f[p[1]] = "" }
			f[p[1]] = f[p[1]] (f[p[1]] == "" ? "" : "/") sprintf("%.0f", d * 1000 / ms)
			if (d <= 0)
				stuck = stuck " " $1
		}
		END {
			for (i = 1; i <= n; i++)
				printf "%s%s %s", (i > 1 ? ", " : ""), order[i], f[order[i]]
			printf " ticks/s (spin/sleep) over %.1f s\n%s\n", ms / 1000, stuck
		}' $run/before $run/after)
	fig=$(echo "$out" | head -1)
	stuck=$(echo "$out" | sed -n 2p)
	[ -z "$stuck" ]
}
# how many of the tickers sched_ext runs (/proc/PID/sched ext.enabled)
n_on_scx() {
	n=0
	for q in $pids; do
		[ "$(awk '$1 == "ext.enabled" { print $3 }' "/proc/$q/sched" 2>/dev/null)" = 1 ] && n=$((n + 1))
	done
	echo $n
}
n_tasks=$(echo $pids | wc -w)

# --- loaders ------------------------------------------------------------------

# launch LABEL CMD...: a loader in the background, its pid in $pid_LABEL
# and $p, its output in $run/LABEL.log
launch() {
	label=$1
	shift
	"$@" > "$run/$label.log" 2>&1 &
	p=$!
	eval "pid_$label=$p"
}
is_root() { [ "$(state)" = enabled ] && [ "$(root_ops)" = "$1" ]; }
# start_root LABEL OPS CMD...: 0 once the kernel says a scheduler is
# enabled and root/ops names OPS
start_root() {
	l=$1 want=$2
	shift 2
	launch "$l" "$@"
	wait_until 'is_root "$want" || gone $p' 120
	is_root "$want"
}
# wait_child LABEL CGROUP OPS: 0 once root/sub/sub-<id of cgroup
# /sys/fs/cgroup/CGROUP>/ops names OPS, or 1 as soon as loader LABEL is gone
wait_child() {
	eval "p=\$pid_$1"
	w_cg=$2 w_ops=$3
	wait_until '[ "$(sub_ops "$w_cg")" = "$w_ops" ] || gone $p' 90
	[ "$(sub_ops "$w_cg")" = "$w_ops" ]
}
# start_child LABEL CGROUP OPS CMD...: launch, then wait_child
start_child() {
	l=$1 c=$2 o=$3
	shift 3
	launch "$l" "$@"
	wait_child "$l" "$c" "$o"
}
# stop LABEL SIGNAL: signal a loader and reap it; $rc is its exit status
# (128+N when the signal killed it), 124 if it was still there after 30 s
stop() {
	eval "p=\$pid_$1"
	kill -"$2" "$p" 2>/dev/null
	reap "$1"
}
# reap LABEL: wait up to 30 s for a loader that is ending and reap it
reap() {
	eval "p=\$pid_$1"
	if ! wait_until 'gone $p' 30; then
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rc=124
		return
	fi
	wait "$p"
	rc=$?
}
# the scheduler tree now, for the figures: "enabled:qmap{a:scxd_fifo,b:scxd_vtime}"
tree() {
	kids=
	for g in a b; do
		o=$(sub_ops $g)
		[ -n "$o" ] && kids="$kids${kids:+,}$g:$o"
	done
	echo "$(state):$(root_ops)${kids:+{$kids\}}"
}
# wait_fair: no scheduler left, every ticker back on the fair class
wait_fair() {
	wait_until '[ "$(state)" = disabled ] && [ "$(n_on_scx)" = 0 ]' 30
}
# "exit N (...) msg=..." of sched-run's log $1, for differs lines
exit_of() { echo "exit $(exit_kind "$1")$(grep -o ' msg=.*' "$1" | tail -1)"; }

# commands, not shell functions: $! must be the loader itself (env execs
# it). skip-busy-fentry.so: see skip-busy-fentry.c; what it skipped is
# printed as a difference. -i 1: qmap's stats every second, for its split.
qmap="env LD_PRELOAD=$bin/skip-busy-fentry.so $bin/scx_qmap -i 1"
srun=$bin/sched-run
# after the first start of scx_qmap: say once what the preload did
qmap_started() {
	[ -n "${fentry_said:-}" ] && return
	grep -q '^skip-busy-fentry:' "$1" || return
	fentry_said=1
	differs "scx_qmap's scx_lib_init_probe (fentry on bpf_scx_reg, from 7.3's common.bpf.h) cannot attach on this kernel (EBUSY: no CONFIG_FUNCTION_TRACER); skip-busy-fentry.so leaves it unattached in every scx_qmap start; common.bpf.h uses its result only on kernels older than 6.18"
}
# qmap's latest account of its split with $1 children, from its stats
qmap_split() {
	grep "^hier   : nsub=$1 " $run/qmap.log | tail -1 | sed 's/^hier *: //; s/ reenq.*//'
}
# sections to run: all, or those named after SERIES
parts=${2:+" $* "}
want_part() { [ -z "$parts" ] || [ -z "${parts##* $1 *}" ]; }
begin=$(now_ms)

# --- 1. scx_qmap as root, our fifo and vtime as its children ------------------
#
# qmap splits its CPUs among itself (weight 100) and its children by
# cpu.weight, whole CPUs each (floor), and time-shares the CPUs left over
# between them, granting the holder of a share SCX_CAP_ENQ_IMMED alone
# (the kernel then admits only SCX_ENQ_IMMED inserts there; any other is
# rejected and reenqueued, and a task reenqueued 256 times in a row ejects
# its scheduler: SCX_EXIT_ERROR_REENQ). First a weighs 200 and b 100, and
# b's child comes first and goes first, so no split on the way leaves a CPU
# over: 2:2 (qmap, b), 1:2:1 (qmap, a, b), 2:2, 4. Then at equal weights,
# 1:1:1 and one CPU time-shared, before qmap is killed under both.

want_part qmap-root && {
echo 200 > $cg/a/cpu.weight
echo 100 > $cg/b/cpu.weight
name=qmap_root_hosts_fifo_and_vtime_children_sysfs_tree
if start_root qmap qmap $qmap; then
	qmap_started $run/qmap.log
	start_child vtime b scxd_vtime $srun -c $cg/b $objs/vtime.bpf.o
	rb=$?
	start_child fifo a scxd_fifo $srun -c $cg/a $objs/fifo.bpf.o
	ra=$?
	sleep 1
	if [ $ra = 0 ] && [ $rb = 0 ] && is_root qmap &&
		[ "$(sub_ops a)" = scxd_fifo ] && [ "$(sub_ops b)" = scxd_vtime ]; then
		ok $name "root/ops $(root_ops); root/sub/sub-$(cgid a)/ops $(sub_ops a) [$(caps a)]; root/sub/sub-$(cgid b)/ops $(sub_ops b) [$(caps b)]; qmap: $(qmap_split 2); $(n_on_scx)/$n_tasks tickers on sched_ext"
	else
		differs "$name: expected qmap{a:scxd_fifo,b:scxd_vtime}, sysfs shows $(tree) ($(ls $scx/root/sub 2>/dev/null | tr '\n' ' ')); fifo $(exit_of $run/fifo.log); vtime $(exit_of $run/vtime.log)"
		show_log $run/fifo.log 3
		show_log $run/vtime.log 3
		nok $name "tree $(tree)"
	fi

	name=qmap_root_fifo_vtime_children_all_tasks_progress
	if progress 3; then
		ok $name "$fig; tree $(tree)"
	else
		differs "$name: tickers made no progress:$stuck (tree $(tree))"
		nok $name "$fig"
	fi

	name=fifo_child_unloaded_qmap_keeps_running_its_tasks
	if [ "$(sub_ops a)" != scxd_fifo ]; then
		differs "$name: fifo was no longer attached on a before the unload: $(exit_of $run/fifo.log)"
		nok $name "fifo gone before SIGTERM"
	else
		stop fifo TERM
		if [ $rc = 0 ] && [ "$(kind_of $run/fifo.log)" = 64 ] && [ ! -d "$(subdir a)" ] &&
			is_root qmap && [ "$(sub_ops b)" = scxd_vtime ] && progress 3; then
			ok $name "fifo exit kind $(exit_kind $run/fifo.log), sched-run status $rc; a's tasks on qmap: $fig; tree $(tree)"
		else
			progress 3
			differs "$name: expected fifo exit 64 (unregistered) with status 0 and qmap{b:scxd_vtime} running every task; got $(exit_of $run/fifo.log), status $rc, tree $(tree), stuck:${stuck:- none}"
			nok $name "$fig"
		fi
	fi

	name=vtime_loader_killed_qmap_keeps_running_its_tasks
	if [ "$(sub_ops b)" != scxd_vtime ]; then
		differs "$name: vtime was no longer attached on b before the kill: $(exit_of $run/vtime.log)"
		nok $name "vtime gone before SIGKILL"
	else
		stop vtime KILL
		if wait_until '[ ! -d "$(subdir b)" ]' 30 && is_root qmap &&
			[ "$(n_on_scx)" = "$n_tasks" ] && progress 3; then
			ok $name "sched-run status $rc (SIGKILL), sub-$(cgid b) gone; b's tasks on qmap: $fig; $(n_on_scx)/$n_tasks tickers on sched_ext; tree $(tree)"
		else
			progress 3
			differs "$name: expected sub-$(cgid b) gone and qmap running every task; got tree $(tree), $(n_on_scx)/$n_tasks tickers on sched_ext, stuck:${stuck:- none}"
			nok $name "$fig"
		fi
	fi

	# equal weights: qmap time-shares a CPU between itself, a and b
	reap fifo
	reap vtime
	echo 100 > $cg/a/cpu.weight
	name=qmap_time_shared_cpu_fifo_vtime_children_keep_running
	start_child vtime b scxd_vtime $srun -c $cg/b $objs/vtime.bpf.o
	rb=$?
	start_child fifo a scxd_fifo $srun -c $cg/a $objs/fifo.bpf.o
	ra=$?
	progress 6
	p_ok=$?
	split=$(qmap_split 2)
	if [ $ra = 0 ] && [ $rb = 0 ] && [ "$(sub_ops a)" = scxd_fifo ] && [ "$(sub_ops b)" = scxd_vtime ] &&
		[ $p_ok = 0 ] && [ -n "$split" ] && [ -z "${split##* shared=[0-9]*}" ]; then
		ok $name "qmap: $split; caps a [$(caps a)], b [$(caps b)]; $fig; tree $(tree)"
	else
		differs "$name: expected a time-shared CPU and fifo and vtime attached with every task progressing for 6 s; got qmap '${split:-no split with 2 children}', tree $(tree), stuck:${stuck:- none}; fifo $(exit_of $run/fifo.log); vtime $(exit_of $run/vtime.log)"
		nok $name "qmap: ${split:-no split with 2 children}; $fig"
	fi

	name=qmap_killed_children_exit_parent
	if [ "$(sub_ops a)" != scxd_fifo ] || [ "$(sub_ops b)" != scxd_vtime ]; then
		differs "$name: fifo and vtime were not both attached under qmap before the kill: tree $(tree)"
	fi
	t_kill=$(now_ms)
	stop qmap KILL
	qrc=$rc
	reap fifo
	frc=$rc
	reap vtime
	vrc=$rc
	t_end=$(now_ms)
	if [ "$(kind_of $run/fifo.log)" = 68 ] && [ "$(kind_of $run/vtime.log)" = 68 ] &&
		[ $frc = 0 ] && [ $vrc = 0 ]; then
		ok $name "fifo exit kind $(exit_kind $run/fifo.log), vtime exit kind $(exit_kind $run/vtime.log), both loaders done $((t_end - t_kill)) ms after SIGKILL to scx_qmap"
	else
		differs "$name: expected both children to report exit kind 68 (parent) and status 0; fifo $(exit_of $run/fifo.log), status $frc; vtime $(exit_of $run/vtime.log), status $vrc"
		nok $name "fifo $(exit_kind $run/fifo.log), vtime $(exit_kind $run/vtime.log)"
	fi

	name=qmap_killed_all_tasks_back_on_fair_and_progress
	if wait_fair && [ ! -e $scx/root ] && progress 3; then
		ok $name "scx_qmap status $qrc (SIGKILL); state $(state), $(n_on_scx)/$n_tasks tickers on sched_ext; $fig"
	else
		progress 3
		differs "$name: expected state disabled, no tickers on sched_ext, every one progressing; got state $(state), root/ops '$(root_ops)', $(n_on_scx)/$n_tasks on sched_ext, stuck:${stuck:- none}"
		nok $name "$fig"
	fi
else
	differs "scx_qmap did not become root: state $(state), root/ops '$(root_ops)'"
	show_log $run/qmap.log 10
	for name in $name qmap_root_fifo_vtime_children_all_tasks_progress \
		fifo_child_unloaded_qmap_keeps_running_its_tasks vtime_loader_killed_qmap_keeps_running_its_tasks \
		qmap_time_shared_cpu_fifo_vtime_children_keep_running qmap_killed_children_exit_parent \
		qmap_killed_all_tasks_back_on_fair_and_progress; do
		nok $name "scx_qmap not enabled as root"
	done
	stop qmap KILL
fi
}

# --- 2. our wparent and our cells as root, scx_qmap -c on a and on b -----------
#
# qmap's child mode: "scx_qmap -c CGROUP" under our root, one on a and one
# on b, started together. The one on a is killed, the one on b is ended by
# our root's unload.

want_part ours-root && {
echo 100 > $cg/a/cpu.weight
echo 100 > $cg/b/cpu.weight
for root in wparent cells; do
	n1=${root}_root_hosts_qmap_children_on_a_and_b_all_tasks_progress
	n2=qmap_child_killed_${root}_and_other_qmap_keep_running
	n3=${root}_unloaded_qmap_child_exits_parent
	if ! wait_fair; then
		differs "$root: the previous scheduler is still there: state $(state), root/ops '$(root_ops)'"
	fi
	if ! start_root $root scxd_$root $srun $objs/$root.bpf.o; then
		differs "$root did not become root: state $(state), root/ops '$(root_ops)'"
		show_log $run/$root.log
		for name in $n1 $n2 $n3; do
			nok $name "scxd_$root not enabled as root"
		done
		stop $root KILL
		continue
	fi

	launch qmapa $qmap -c $cg/a
	launch qmapb $qmap -c $cg/b
	wait_child qmapa a qmap
	ra=$?
	wait_child qmapb b qmap
	rb=$?
	qmap_started $run/qmapa.log
	fig=
	if [ $ra = 0 ] && [ $rb = 0 ] && progress 3 && is_root scxd_$root &&
		[ "$(sub_ops a)" = qmap ] && [ "$(sub_ops b)" = qmap ] && [ "$(n_on_scx)" = "$n_tasks" ]; then
		ok $n1 "root/ops $(root_ops); root/sub/sub-$(cgid a)/ops $(sub_ops a) [$(caps a)]; root/sub/sub-$(cgid b)/ops $(sub_ops b) [$(caps b)]; $fig; $(n_on_scx)/$n_tasks tickers on sched_ext"
	else
		differs "$n1: expected scxd_$root{a:qmap,b:qmap} running every task; got tree $(tree), $(n_on_scx)/$n_tasks on sched_ext, stuck:${stuck:- none}; scx_qmap on a: '$(grep -m1 '^EXIT:' $run/qmapa.log)', on b: '$(grep -m1 '^EXIT:' $run/qmapb.log)'"
		nok $n1 "tree $(tree)${fig:+; $fig}"
	fi

	if [ "$(sub_ops a)" != qmap ]; then
		differs "$n2: scx_qmap was not attached on a before the kill"
		nok $n2 "scx_qmap -c a not attached"
	else
		stop qmapa KILL
		if wait_until '[ ! -d "$(subdir a)" ]' 30 && is_root scxd_$root &&
			[ "$(sub_ops b)" = qmap ] && progress 3; then
			ok $n2 "scx_qmap on a status $rc (SIGKILL), sub-$(cgid a) gone; a's tasks on $root: $fig; tree $(tree)"
		else
			progress 3
			differs "$n2: expected sub-$(cgid a) gone, scxd_$root{b:qmap} running every task; got tree $(tree), stuck:${stuck:- none}"
			nok $n2 "$fig"
		fi
	fi

	had_b=$(sub_ops b)
	mark=$(dmesg | wc -l)
	stop $root TERM
	rrc=$rc
	reap qmapb
	qrc=$rc
	qexit=$(grep -m1 '^EXIT:' $run/qmapb.log)
	klog=$(dmesg | tail -n +$((mark + 1)) | grep -m1 'sub-scheduler "qmap" disabled' | sed 's/^\[[^]]*\] *//')
	if [ "$had_b" != qmap ]; then
		differs "$n3: scx_qmap was not attached on b before $root's unload"
		nok $n3 "scx_qmap -c b not attached; $root $(exit_kind $run/$root.log)"
	elif [ "$(kind_of $run/$root.log)" = 64 ] && [ $rrc = 0 ] && [ $qrc = 0 ] &&
		[ "$qexit" = "EXIT: parent exiting" ] && [ -n "$klog" ] && [ -z "${klog##*(parent exiting)*}" ] &&
		wait_fair && progress 3; then
		# "parent exiting" is the kernel's reason for SCX_EXIT_PARENT
		ok $n3 "$root exit kind $(exit_kind $run/$root.log); scx_qmap on b: '$qexit' (kind 68, SCX_EXIT_PARENT), status $qrc; kernel: '$klog'; back on fair: $fig"
	else
		progress 3
		differs "$n3: expected $root exit 64, scx_qmap 'EXIT: parent exiting' (kind 68) and status 0, every ticker on fair and progressing; got $root $(exit_of $run/$root.log), status $rrc; scx_qmap '$qexit' status $qrc; kernel '$klog'; state $(state), $(n_on_scx)/$n_tasks on sched_ext, stuck:${stuck:- none}"
		nok $n3 "$fig"
	fi
	stop qmapa KILL
	stop qmapb KILL
done
}

for p in $pids; do kill "$p" 2>/dev/null; done
echo "# interop: $n_checks checks, $fails failed, $(($(now_ms) - begin)) ms of guest time"
exit $fails
