#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of tests/kselftest/run's stack check: run one selftest with
# the ftrace stack tracer watching the sched_ext kfuncs, then print the
# deepest kernel stack seen at their entry ("STACK_MAX <bytes>") and the
# call chain behind it. Needs CONFIG_STACK_TRACER (the debug kernel).
T=/sys/kernel/tracing
[ -e $T/stack_max_size ] || mount -t tracefs nodev $T 2>/dev/null
[ -e $T/stack_max_size ] || T=/sys/kernel/debug/tracing
[ -e $T/stack_max_size ] || { echo "STACK_ERROR no stack tracer"; exit 1; }

echo 'scx_bpf_*' > $T/stack_trace_filter
echo 0 > $T/stack_max_size
echo 1 > /proc/sys/kernel/stack_tracer_enabled
runner -t "$1"
rc=$?
echo 0 > /proc/sys/kernel/stack_tracer_enabled
echo "STACK_MAX $(cat $T/stack_max_size)"
cat $T/stack_trace
exit $rc
