#!/bin/bash
# scxd's metrics in the Prometheus text format, against scxd --dry-run
# --serve on a fake tree (lib.sh): `scxdctl metrics` and the file scxd
# writes for node-exporter's textfile collector (--metrics-dir), written
# atomically, again on a change and at the steady period; promtool (Debian's
# prometheus package; PATH, or $SCXD_CACHE/tools/prometheus/usr/bin as
# `apt-get download prometheus && dpkg-deb -x` leaves it) accepts both and
# rejects a broken line. And the status that goes with it: one line per
# cgroup, the counters behind -v.
# Usage: metrics.sh SCXD SCXDCTL SCHED_DIR POLICY
set -u
scxd=$1 ctl=$2 sched_dir=$3 policy_src=$4
. "$(dirname "$0")/lib.sh"

promtool=$(command -v promtool || true)
cached=${SCXD_CACHE:-$HOME/.cache/scxd}/tools/prometheus/usr/bin/promtool
[ -z "$promtool" ] && [ -x "$cached" ] && promtool=$cached

web=/scxd.slice/scxd-demo.slice/web.scope
mkdir -p "$tmp/cg$web" "$tmp/cg/scxd.slice/scxd-demo.slice/batch.scope" \
	"$tmp/cg/workload/a" "$tmp/sys/root" "$tmp/pins" "$tmp/state/nodes" "$tmp/metrics"
# a cgroup name with a quote, a backslash and a newline: label escaping
odd=$'q"b\\n\nl'
mkdir "$tmp/cg/workload/$odd"
cp "$policy_src" "$tmp/policy.json"
# the root and web.scope attached by an earlier scxd, with the kernel's
# counters and caps for web.scope
echo wparent >"$tmp/sys/root/ops"
echo enabled >"$tmp/sys/state"
web_id=$(stat -c %i "$tmp/cg$web")
pin_name() { printf %s "$1" | sha256sum | cut -c1-32; }
root_pin=$(pin_name /) web_pin=$(pin_name $web)
mkdir -p "$tmp/sys/root/sub/sub-$web_id" "$tmp/pins/$root_pin" "$tmp/pins/$web_pin"
echo vtime >"$tmp/sys/root/sub/sub-$web_id/ops"
touch "$tmp/pins/$root_pin/link" "$tmp/pins/$web_pin/link"
printf '{"version": 1, "cgroup": "/", "scheduler": "wparent", "ops": "wparent", "cgid": 1}\n' \
	>"$tmp/state/nodes/$root_pin.json"
printf '{"version": 1, "cgroup": "%s", "scheduler": "vtime", "ops": "vtime", "cgid": %s}\n' \
	"$web" "$web_id" >"$tmp/state/nodes/$web_pin.json"
printf 'SCX_EV_SELECT_CPU_FALLBACK 7\nSCX_EV_SUB_RESCUE 3\nSCX_EV_SUB_ENQ_DENIED 12\nSCX_EV_SUB_KICK_DENIED 0\n' \
	>"$tmp/sys/root/sub/sub-$web_id/events"
printf 'enq_immed 0-3\nenq 0-1\n' >"$tmp/sys/root/sub/sub-$web_id/caps"

serve_scxd "$scxd" "$ctl" -- --sub-sched=yes --policy "$tmp/policy.json" --sched-dir "$sched_dir" \
	--metrics-dir "$tmp/metrics" --metrics-interval 2 || exit 1
prom=$tmp/metrics/scxd.prom

# --- scxdctl metrics ------------------------------------------------------------------
m=$("$ctl" -S "$sock" metrics)
rc=$?
echo "$m" | grep -v '^#' | head -12 | sed 's/^/# metrics: /'
check "scxdctl metrics: exit 0, $(echo "$m" | grep -vc '^#') samples" [ $rc = 0 ]
check "the daemon's counters as _total counters" \
	bash -c 'grep -q "^# TYPE scxd_attaches_total counter$" <<<"$1" && grep -q "^scxd_reconciles_total [1-9]" <<<"$1"' _ "$m"
check "where attaching spends its time: load, enable and reconcile as _seconds_total counters" \
	bash -c 'for f in attach_load attach_enable reconcile; do
			grep -q "^# TYPE scxd_${f}_seconds_total counter$" <<<"$1" &&
			grep -Eq "^scxd_${f}_seconds_total [0-9]+\.[0-9]{6}$" <<<"$1" || exit 1
		 done' _ "$m"
check "and in scxdctl status --json's counters, in microseconds" \
	bash -c 'js=$("$1" -S "$2" --json status) &&
		 for k in load_usec enable_usec reconcile_usec; do grep -Eq "\"$k\": ?[0-9]+" <<<"$js" || exit 1; done' _ "$ctl" "$sock"
check "web.scope: state attached, cgroup and scheduler as labels" \
	grep -qx "scxd_scheduler_state{cgroup=\"$web\",scheduler=\"vtime\",state=\"attached\"} 1" <<<"$m"
check "web.scope: rescues, denials by cap, the kernel's events by name, CPUs per cap" \
	bash -c 'grep -qx "scxd_scheduler_rescues_total{cgroup=\"$2\",scheduler=\"vtime\"} 3" <<<"$1" &&
		 grep -qx "scxd_scheduler_denied_total{cgroup=\"$2\",scheduler=\"vtime\",cap=\"enq\"} 12" <<<"$1" &&
		 grep -qx "scxd_scheduler_events_total{cgroup=\"$2\",scheduler=\"vtime\",event=\"select_cpu_fallback\"} 7" <<<"$1" &&
		 grep -qx "scxd_scheduler_caps_cpus{cgroup=\"$2\",scheduler=\"vtime\",cap=\"enq_immed\"} 4" <<<"$1"' _ "$m" "$web"
check "a pending cgroup is there too" grep -q 'cgroup="/workload/a",scheduler="lat",state="pending"' <<<"$m"
check 'the odd cgroup name escaped for a label: \" \\ and \n, one line' \
	grep -qF 'cgroup="/workload/q\"b\\\\n\\x0al"' <<<"$m"

# --- the textfile -----------------------------------------------------------------------
i=0
while [ ! -s "$prom" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "--metrics-dir: scxd.prom written within $((i * 100)) ms of the start" [ -s "$prom" ]
check "its mode is 0644 (node-exporter runs as another user)" [ "$(stat -c %a "$prom" 2>/dev/null)" = 644 ]
check "the file and scxdctl metrics agree (but for the counters that moved)" \
	bash -c 'diff <(grep -v "_total " "$1") <(grep -v "_total " <<<"$2") >/dev/null' _ "$prom" "$m"
m0=$(stat -c %Y.%N "$prom")
mkdir "$tmp/cg/workload/b"
i=0
while ! grep -q 'cgroup="/workload/b"' "$prom" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "a change (mkdir /workload/b) is in the file $((i * 100)) ms later" grep -q 'cgroup="/workload/b"' "$prom"
t0=$(stat -c %Y "$prom")
sleep 3.5
t1=$(stat -c %Y "$prom")
check "nothing changed: written again at the steady period (mtime $t0 -> $t1, --metrics-interval 2)" [ "$t1" -gt "$t0" ]
check "no temporary files left in the directory" [ "$(ls -A "$tmp/metrics")" = scxd.prom ]

# --- promtool ---------------------------------------------------------------------------------
if [ -z "$promtool" ]; then
	echo "SKIP: promtool: not installed (Debian's prometheus package: apt-get install prometheus, or apt-get download prometheus and dpkg-deb -x it into ${SCXD_CACHE:-$HOME/.cache/scxd}/tools/prometheus)"
else
	out=$("$promtool" check metrics <"$prom" 2>&1)
	check "promtool check metrics accepts scxd.prom ($("$promtool" --version 2>&1 | head -1 | cut -d' ' -f1-3)${out:+: $out})" \
		bash -c '"$1" check metrics <"$2" >/dev/null 2>&1' _ "$promtool" "$prom"
	out=$("$promtool" check metrics <<<"$m" 2>&1)
	check "promtool check metrics accepts scxdctl metrics${out:+: $out}" \
		bash -c '"$1" check metrics >/dev/null 2>&1 <<<"$2"' _ "$promtool" "$m"
	# the check can fail: a label value with a bare quote is refused
	bad=$(sed 's/cgroup="\/workload\/a"/cgroup="\/work"load\/a"/' "$prom")
	check "promtool refuses the same text with one label's quote unescaped" \
		bash -c '! "$1" check metrics >/dev/null 2>&1 <<<"$2"' _ "$promtool" "$bad"
fi

# --- status: one line per cgroup, the rest behind -v --------------------------------------------
st=$("$ctl" -S "$sock" status)
echo "$st" | sed 's/^/# status: /'
check "status: one line per cgroup, web.scope's with its caps summary" \
	grep -Eq "^ +$web +vtime +attached +enq_immed 0-3 +-$" <<<"$st"
check "status: no counters, events or caps lines" bash -c '! grep -Eq "counters:|events:|caps:" <<<"$1"' _ "$st"
check "status: as many cgroup lines as status --json has nodes" \
	[ "$(grep -c '^ */' <<<"$st")" = "$("$ctl" -S "$sock" --json status | grep -c '"state"')" ]
st=$("$ctl" -S "$sock" -v status)
check "status -v: counters, events, caps and rescues" \
	bash -c 'grep -q "^counters: " <<<"$1" && grep -q "events: " <<<"$1" &&
		 grep -Eq "^ +caps: enq_immed 0-3, enq 0-1$" <<<"$1" && grep -Eq "^ +rescues 3, denied: enq 12, kick 0$" <<<"$1"' _ "$st"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
