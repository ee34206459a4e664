#!/bin/bash
# Run the policy fuzzer for a bounded time from the seed corpus; print the
# CPU time it used. Glue for meson test: run-fuzz.sh FUZZER SEEDS WORKDIR
# The budget is $SCXD_FUZZ_SECONDS seconds (default 60).
set -eu
fuzzer=$1 seeds=$2 work=$3 secs=${SCXD_FUZZ_SECONDS:-60}
mkdir -p "$work/corpus" "$work/artifacts"
TIMEFORMAT="fuzz-policy: ${secs}s budget, CPU user %U s, sys %S s, wall %R s"
time "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$work/artifacts/" -print_final_stats=1 \
	"$work/corpus" "$seeds"
