#!/bin/bash
# Run one fuzzer for a bounded time from its seed corpus and dictionary;
# print the CPU time it used. Glue for meson test and fuzz/run:
#   run-fuzz.sh FUZZER SEEDS WORKDIR DICT MAX_LEN SHARE
# The budget is SHARE percent of $SCXD_FUZZ_SECONDS seconds (default 60),
# at least 1 s.
set -eu
fuzzer=$1 seeds=$2 work=$3 dict=$4 max_len=$5 share=$6
total=${SCXD_FUZZ_SECONDS:-60}
secs=$(( total * share / 100 ))
[ "$secs" -ge 1 ] || secs=1
name=$(basename "$fuzzer")
mkdir -p "$work/corpus" "$work/artifacts"
TIMEFORMAT="$name: ${secs}s budget, CPU user %U s, sys %S s, wall %R s"
time "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-max_len="$max_len" -dict="$dict" \
	-artifact_prefix="$work/artifacts/" -print_final_stats=1 \
	"$work/corpus" "$seeds"
