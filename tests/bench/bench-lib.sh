# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host side of tests/bench/{workloads,hierarchy,fanout}, sourced by them:
# build what the guest needs (cached), boot one initramfs guest that runs
# one driver (bench-*.c), then turn its BENCH-ROW lines into a plain-text
# table and a gnuplot PNG in $SCXD_CACHE/bench/ and print both paths.
#
#   bench_main NAME DRIVER [--variant V] [--cpus N] [--mem MB] [-- DRIVER-ARGS]
#
# SCXD_BENCH_EXTRA_OBJS="a.bpf.o ..." adds scheduler objects built
# elsewhere (a branch not merged yet) to the guest's /payload/schedulers,
# where they replace the build's objects of the same name.
# SCXD_MESON_BUILD names a meson build to use instead of building one;
# SCXD_BENCH_OUT the directory for the table, plot, output and console
# (default $SCXD_CACHE/bench), so that checkouts can run side by side.
# SCXD_ICOUNT: the guest's clock (qemu/run --icount): by default 3, every
# instruction 8 ns of guest time, so that what the guest measures doesn't
# move with the host's load; another shift, or "off" for the plain
# multi-threaded TCG guest whose figures do.
#
# The guest's workloads are Debian's own binaries (perf from linux-perf,
# stress-ng), copied in with the libraries they need: qemu/run's
# initramfs guest boots in seconds, where the systemd image would need a
# rebuild whenever its package list changed. qemu/need-packages bench
# installs them.

bench_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench_cache=${SCXD_CACHE:-$HOME/.cache/scxd}

bench_die() { printf '%s: error: %s\n' "$bench_name" "$*" >&2; exit 1; }
bench_log() { printf '%s: %s\n' "$bench_name" "$*" >&2; }

# The real perf binary: Debian's versioned perf_X.Y when there is one (the
# unversioned name may be linux-base's wrapper, which looks for a perf
# matching the running kernel and so fails in a 6.12 guest); bookworm's
# linux-perf 6.1 installs the binary itself as /usr/bin/perf and diverts
# the wrapper to perf.wrapper.
bench_perf_binary() {
	local p
	p=$(ls /usr/bin/perf_[0-9]* 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$p" ] && [ "$(head -c4 /usr/bin/perf 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; then
		p=/usr/bin/perf
	fi
	printf '%s\n' "$p"
}

# scx_simple and scx_flatcg from the variant's kernel tree, built once
bench_peers() {
	local peers=$bench_cache/scx-tools/$bench_variant
	if [ ! -x "$peers/build/bin/scx_flatcg" ] || [ ! -x "$peers/build/bin/scx_simple" ]; then
		bench_log "building scx_simple and scx_flatcg from $KDIR/tools/sched_ext"
		mkdir -p "$peers"
		nice -n 10 make -C "$KDIR/tools/sched_ext" -j2 O="$peers" VMLINUX_BTF="$VMLINUX" CC=gcc \
			CLANG=clang-19 LLVM_STRIP=llvm-strip-19 scx_simple scx_flatcg \
			>"$peers/build.log" 2>&1 ||
			bench_log "peers failed to build ($peers/build.log); their rows will say n/a"
	fi
	printf '%s\n' "$peers/build/bin"
}

# bench_table OUT TXT DAT GP PNG: the table and the plot from the driver's lines
bench_table() {
	local out=$1 txt=$2 dat=$3 gp=$4 png=$5
	{
		printf '%s  (%s, %s kernel, %s vCPUs, %s; %s)\n' "$bench_name" \
			"$(date -u '+%Y-%m-%d %H:%M UTC')" "$bench_variant" "$bench_cpus" "$bench_clock" \
			"median [bootstrap 95% interval] over n rounds"
		# grouped by table, tables in the order the driver first named them
		awk -F'\t' '
		BEGIN { nt = 0 }
		$1 == "BENCH-ROW" {
			if (!($2 in seen)) { seen[$2] = 1; table[nt++] = $2 }
			if ($5 == 0) line = sprintf("%-52s %-42s %s", $3, $4, $9)
			else line = sprintf("%-52s %-42s %.4g [%.4g, %.4g] %s (n=%d)", $3, $4, $6, $7, $8, $9, $5)
			body[$2] = body[$2] line "\n"
		}
		END {
			# the main tables first, their absolute figures (-abs) after
			for (pass = 0; pass < 2; pass++)
				for (t = 0; t < nt; t++)
					if ((table[t] ~ /-abs$/) == pass)
						printf "\n== %s\n%-52s %-42s %s\n%s", table[t], "row", "column", "median [95% interval] (n)", body[table[t]]
		}' "$out"
		echo
		awk -F'\t' '$1 == "BENCH-NOTE" { print "note: " $2 }' "$out"
	} >"$txt"

	# one gnuplot data block per column of the main table (the first
	# table the driver printed that is not an -abs one): x = row index,
	# median, lo, hi
	awk -F'\t' -v dat="$dat" -v gp="$gp" -v png="$png" -v title="$bench_name" '
	BEGIN { nr = 0; nc = 0 }
	$1 == "BENCH-ROW" && main == "" && $2 !~ /-abs$/ { main = $2 }
	$1 == "BENCH-ROW" && $2 == main {
		if (!($3 in ri)) { ri[$3] = nr; rname[nr++] = $3 }
		if (!($4 in ci)) { ci[$4] = nc; cname[nc++] = $4 }
		if ($5 > 0) { v[ri[$3], ci[$4]] = $6 " " $7 " " $8; unit[ci[$4]] = $9 }
	}
	END {
		if (!nr) exit 1
		for (c = 0; c < nc; c++) {
			printf "# %s\n", cname[c] > dat
			for (r = 0; r < nr; r++)
				if ((r, c) in v) printf "%d %s\n", r, v[r, c] > dat
			printf "\n\n" > dat
		}
		w = 0.8 / nc
		print "set terminal pngcairo size 1400,800 noenhanced font \",10\"" > gp
		printf "set output \"%s\"\n", png > gp
		printf "set title \"%s: median and bootstrap 95%% interval (rows with n/a are absent)\"\n", title > gp
		print "set grid ytics; set key outside right top; set xtics rotate by -30 left" > gp
		printf "set xrange [-0.6:%f]\n", nr - 0.4 > gp
		printf "set xtics (" > gp
		for (r = 0; r < nr; r++) printf "%s\"%s\" %d", (r ? ", " : ""), rname[r], r > gp
		print ")" > gp
		if (main == "workloads" || main == "fanout") print "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2" > gp
		# ratios spanning tens of times read better on a log scale
		if (main == "workloads") print "set logscale y; set ylabel \"ratio (log scale)\"" > gp
		# percentages (share errors) on the right-hand axis, ratios on the left
		for (c = 0; c < nc; c++) if (unit[c] == "%") y2 = 1
		if (y2) print "set y2tics; set ytics nomirror; set y2label \"%\"; set ylabel \"ratio\"" > gp
		printf "plot " > gp
		for (c = 0; c < nc; c++)
			printf "%s\"%s\" index %d using ($1 + %f):2:3:4 axes x1%s with yerrorbars pt 7 ps 1 lw 2 title \"%s (%s)\"", (c ? ", " : ""), dat, c, (c - (nc - 1) / 2) * w, (unit[c] == "%" ? "y2" : "y1"), cname[c], unit[c] > gp
		print "" > gp
	}' "$out" || return 1
	gnuplot "$gp" 2>"$gp.log" || { bench_log "gnuplot failed: $(tail -3 "$gp.log")"; return 1; }
}

# bench_keep_results OUT TXT COMMAND LOAD_BEFORE: the guest's raw output
# and what it ran on into tests/bench/results/<date>-<kernel>-<clock>/, to
# be committed: every figure a README quotes comes from such a directory
# (tests/bench/results-table); NAME.load has the host's load every 20 s.
# SCXD_BENCH_RESULTS=no skips it.
bench_keep_results() {
	local out=$1 txt=$2 cmd=$3 load0=$4
	[ "${SCXD_BENCH_RESULTS:-yes}" != no ] || return 0
	local clock kernel dir series_n tree_n tree_head
	clock=$(printf '%s' "$bench_clock" | tr -c '[:alnum:]\n' - | tr -s - | tr '[:upper:]' '[:lower:]')
	kernel=$(printf '%s-%s' "${KVER%%-*}" "$bench_variant")
	dir=$bench_repo/tests/bench/results/$(date -u +%Y-%m-%d)-$kernel-$clock
	mkdir -p "$dir"
	series_n=$(grep -vc '^[[:space:]]*\(#\|$\)' "$bench_repo/kernel/series" 2>/dev/null || echo '?')
	tree_n=$(git -C "$KDIR" rev-list --count debian..scxd 2>/dev/null || echo '?')
	tree_head=$(git -C "$KDIR" log -1 --format='%h %s' scxd 2>/dev/null || echo '?')
	# the image's own record (kernel/build.sh) beats the tree, which may
	# have moved on since the image was built
	local image="the kernel tree has $tree_n on Debian (head: $tree_head)"
	if [ -f "${KBUILD:-}/.scxd-series" ]; then
		image="the image was built with $(wc -l <"$KBUILD/.scxd-series") on Debian (head: $(tail -1 "$KBUILD/.scxd-series"))"
	fi
	cp "$out" "$dir/$bench_name.out"
	[ -f "$out.load" ] && cp "$out.load" "$dir/$bench_name.load"
	cp "$txt" "$dir/$bench_name.txt" 2>/dev/null || true
	{
		printf 'command\t%s\n' "$cmd"
		printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
		printf 'commit\t%s%s\n' "$(git -C "$bench_repo" rev-parse --short HEAD)" \
			"$(git -C "$bench_repo" diff --quiet HEAD -- schedulers tests/bench ':!tests/bench/results' || echo ' (with uncommitted changes)')"
		printf 'kernel\t%s (%s variant); guest: %s\n' "$KVER" "$bench_variant" \
			"$(awk -F'\t' '$1 == "BENCH-KERNEL" { print $2; exit }' "$out")"
		printf 'series\t%s patches in kernel/series; %s\n' "$series_n" "$image"
		printf 'clock\t%s\n' "$bench_clock"
		printf 'vcpus\t%s\n' "$bench_cpus"
		printf 'host\t%s, %s CPUs\n' "$(uname -r)" "$(nproc)"
		printf 'host load\tbefore %s; after %s\n' "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)"
		printf 'extra objects\t%s\n' "${SCXD_BENCH_EXTRA_OBJS:-none}"
	} >"$dir/$bench_name.meta"
	bench_log "raw results: $dir/$bench_name.{out,meta,txt}"
}

bench_main() {
	bench_name=$1
	local driver=$2
	shift 2
	bench_variant=guest
	bench_cpus=4
	local icount=${SCXD_ICOUNT-3}
	local -a clock=()
	bench_clock=TCG
	if [ -n "$icount" ] && [ "$icount" != off ]; then
		clock=(--icount "$icount")
		bench_clock="TCG icount shift $icount"
	fi
	local mem=2048 timeout=3600
	while [ $# -gt 0 ]; do
		case $1 in
		--variant) bench_variant=$2; shift 2 ;;
		--cpus) bench_cpus=$2; shift 2 ;;
		--mem) mem=$2; shift 2 ;;
		--timeout) timeout=$2; shift 2 ;;
		--) shift; break ;;
		*) echo "usage: $0 [--variant V] [--cpus N] [--mem MB] [--timeout S] [-- driver args]" >&2; exit 2 ;;
		esac
	done

	local env_file=$bench_cache/build/$bench_variant/scxd.env
	[ -f "$env_file" ] || bench_die "$env_file missing (kernel/build.sh --variant $bench_variant)"
	# shellcheck disable=SC1090
	. "$env_file"
	bash "$bench_repo/qemu/need-packages" bench

	local bdir=${SCXD_MESON_BUILD:-$bench_cache/meson-sched-$bench_variant}
	[ -n "${SCXD_MESON_BUILD:-}" ] || nice -n 10 bash "$bench_repo/qemu/build-userspace" "$bdir" "$env_file"
	[ -x "$bdir/tests/sched/sched-run" ] || bench_die "no $bdir/tests/sched/sched-run (needs the kernel tree's libbpf)"
	local peers perf
	peers=$(bench_peers)
	perf=$(bench_perf_binary)
	[ -n "$perf" ] || bench_die "no perf binary (linux-perf)"

	local payload
	payload=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$payload'" EXIT
	mkdir -p "$payload/bin" "$payload/schedulers" "$payload/peers" "$payload/tools"
	cp "$bdir/tests/sched/sched-run" "$bdir/tests/bench/$driver" "$payload/bin/"
	cp "$bdir"/schedulers/*.bpf.o "$payload/schedulers/"
	# objects from elsewhere (a branch's scheduler not merged yet), by path
	local o
	for o in ${SCXD_BENCH_EXTRA_OBJS:-}; do
		[ -f "$o" ] || bench_die "SCXD_BENCH_EXTRA_OBJS: $o does not exist"
		cp "$o" "$payload/schedulers/"
		bench_log "extra scheduler object: $o"
	done
	cp "$peers"/scx_simple "$peers"/scx_flatcg "$payload/peers/" 2>/dev/null || true
	cp "$perf" "$payload/tools/perf"
	cp /usr/bin/stress-ng "$payload/tools/stress-ng"

	local dir=${SCXD_BENCH_OUT:-$bench_cache/bench}
	mkdir -p "$dir"
	local out=$dir/$bench_name.out log=$dir/$bench_name.console.log rc=0
	local load0 cmd sampler
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	# the host's load every 20 s while the guest runs, beside its rounds
	( while :; do printf '%s\t%s\n' "$(date -u +%T)" "$(cut -d' ' -f1-3 /proc/loadavg)"; sleep 20; done ) >"$out.load" &
	sampler=$!
	cmd="tests/bench/$bench_name --variant $bench_variant --cpus $bench_cpus -- $*"
	bench_log "booting the $bench_variant kernel ($bench_cpus vCPUs, $bench_clock) for $driver $*; console: $log"
	env -u SCXD_ICOUNT nice -n 10 "$bench_repo/qemu/run" "${clock[@]}" --variant "$bench_variant" --quiet --output \
		--cpus "$bench_cpus" --mem "$mem" --timeout "$timeout" --log "$log" \
		--payload "$payload/bin:/payload/bin" \
		--payload "$payload/schedulers:/payload/schedulers" \
		--payload "$payload/peers:/payload/peers" \
		--payload "$payload/tools:/payload/tools" \
		-- "$driver" "$@" | tee "$out" || rc=$?
	kill "$sampler" 2>/dev/null || true
	grep -q '^BENCH-ROW' "$out" || bench_die "the guest printed no result (exit $rc; console: $log)"

	# a driver that reports after every round: its last report only
	if grep -q '^BENCH-REPORT' "$out"; then
		awk '/^BENCH-REPORT/ { n = NR } { l[NR] = $0 } END { for (i = n; i <= NR; i++) print l[i] }' \
			"$out" | grep -v '^BENCH-NOTE' >"$out.last"
		grep '^BENCH-NOTE' "$out" | tail -2 >>"$out.last"
		mv "$out.last" "$out.table"
	else
		cp "$out" "$out.table"
	fi
	local txt=$dir/$bench_name.txt png=$dir/$bench_name.png
	rm -f "$png"
	bench_table "$out.table" "$txt" "$dir/$bench_name.dat" "$dir/$bench_name.gp" "$png" || true
	bench_keep_results "$out" "$txt" "$cmd" "$load0"
	echo
	cat "$txt"
	echo "table: $txt"
	[ -f "$png" ] && echo "plot:  $png"
	echo "console: $log (guest exit $rc)"
	return "$rc"
}
