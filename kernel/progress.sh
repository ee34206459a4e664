# SPDX-License-Identifier: GPL-2.0
#
# Sourced by kernel/build.sh and kernel/build-upstream.sh: run a long make
# with its whole output in a log file and print a line a person can read
# every ~10 s instead:
#
#   kernel/build: guest kernel: [3120/5344] 58%, 4m12s (log: .../build.log)
#
# n counts kbuild's step lines ("  CC      kernel/sched/core.o", LD, AR,
# ...) in the log so far; N is the count the last complete build of the
# same variant made (kept in COUNT_FILE), or DEFAULT before there was one
# (then printed as ~N). With ccache a rebuild prints the same steps, only
# faster, so N holds across warm and cold builds of one configuration.
# On failure the error lines and the log's path are printed.
#
#   scxd_logged_make LABEL LOG COUNT_FILE DEFAULT MAKE_COMMAND...
#
# Uses the caller's log(). SCXD_PROGRESS_SECONDS sets the interval.

scxd_kbuild_steps() { grep -c '^  [A-Z][A-Z0-9_]* ' "$1" 2>/dev/null || true; }

scxd_elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

scxd_logged_make() {
	local label=$1 logfile=$2 count_file=$3 default=$4
	shift 4
	local total approx='' start pid rc n pct waited
	total=$(cat "$count_file" 2>/dev/null || true)
	[ -n "$total" ] && [ "$total" -gt 0 ] 2>/dev/null || { total=$default; approx='~'; }
	start=$(date +%s)
	log "$label: building, full output in $logfile"
	"$@" >"$logfile" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		waited=0
		while [ $waited -lt "${SCXD_PROGRESS_SECONDS:-10}" ] && kill -0 "$pid" 2>/dev/null; do
			sleep 1; waited=$((waited + 1))
		done
		kill -0 "$pid" 2>/dev/null || break
		n=$(scxd_kbuild_steps "$logfile")
		pct=$((n * 100 / total))
		[ $pct -gt 99 ] && pct=99
		log "$label: [$n/$approx$total] $pct%, $(scxd_elapsed $(($(date +%s) - start)))"
	done
	rc=0
	wait "$pid" || rc=$?
	n=$(scxd_kbuild_steps "$logfile")
	if [ $rc != 0 ]; then
		grep -E -B2 -A3 '(error|Error|ERROR)[: ]' "$logfile" | tail -40 >&2 || tail -30 "$logfile" >&2
		log "$label: make failed (exit $rc) after $(scxd_elapsed $(($(date +%s) - start))), $n steps; full output: $logfile"
		return $rc
	fi
	# a build that did next to nothing (up to date) says nothing about N
	[ "$n" -gt $((total / 4)) ] && echo "$n" > "$count_file"
	log "$label: done, $n steps in $(scxd_elapsed $(($(date +%s) - start)))"
}
