#!/usr/bin/env bash
# trlat never changes what the program does.
. "$(dirname "$0")/lib.sh"

# Errors from the driver reach the caller unchanged.
for code in 1 2 201 700 999; do
    FAKE_CUDA_RESULT=$code "$BIN/launcher" direct 3 >"$WORK/plain.out" 2>&1; plain=$?
    FAKE_CUDA_RESULT=$code TRLAT_OUTPUT="$WORK/e.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >"$WORK/pre.out" 2>&1; pre=$?
    expect "driver error $code passes through (output)" "$(cat "$WORK/pre.out")" "$(cat "$WORK/plain.out")"
    expect "driver error $code passes through (exit)" "$pre" "$plain"
    rm -f "$WORK/e.json"
done
FAKE_CUDA_RESULT=700 TRLAT_OUTPUT="$WORK/err.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 4 >/dev/null 2>&1
expect "failed launches counted as errors" "$(rq "$WORK/err.json" 'k("direct_kernel")["errors"]')" 4

# 8 threads x 100,000 launches: exact.
TRLAT_OUTPUT="$WORK/threads.json" LD_PRELOAD=$LIB "$BIN/launcher" threads 100000 >"$WORK/t.out" 2>&1
expect "8 threads x 100000: exact count" "$(rq "$WORK/threads.json" 'k("threaded_kernel")["launches"]')" 800000
expect "8 threads x 100000: driver agrees" "$(grep -c 'driver cuLaunchKernel 800000' "$WORK/t.out")" 1
expect "8 threads: at most 8 thread states" "$(rq "$WORK/threads.json" '1 <= r["totals"]["threads"] <= 8')" True

# Thread churn: states of exited threads are reused, not multiplied.
TRLAT_OUTPUT="$WORK/churn.json" LD_PRELOAD=$LIB "$BIN/launcher" churn 100 >/dev/null 2>&1
expect "200 short threads: all launches" "$(rq "$WORK/churn.json" 'k("churn_kernel")["launches"]')" 20000
expect "200 short threads: states reused" "$(rq "$WORK/churn.json" 'r["totals"]["threads"] <= 2')" True

# fork: parent and child each report their own launches under their pid.
TRLAT_OUTPUT="$WORK/fork-%p.json" LD_PRELOAD=$LIB "$BIN/launcher" fork 25 >"$WORK/f.out" 2>&1
ppid=$(sed -n 's/^parent \([0-9]*\) .*/\1/p' "$WORK/f.out"); cpid=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$WORK/f.out")
expect "fork: parent report" "$(rq "$WORK/fork-$ppid.json" '(k("parent_kernel")["launches"], k("child_kernel"), r["pid"])')" "(25, None, $ppid)"
expect "fork: child report" "$(rq "$WORK/fork-$cpid.json" '(k("child_kernel")["launches"], k("parent_kernel"), r["pid"])')" "(50, None, $cpid)"
rm -f "$WORK"/fork-*.json
TRLAT_OUTPUT="$WORK/fork-%p.json" LD_PRELOAD=$LIB "$BIN/launcher" fork_idle 5 >/dev/null 2>&1
expect "fork: a child that never launches writes nothing" "$(ls "$WORK"/fork-*.json | wc -l)" 1

# exit() from a non-main thread still writes the report.
TRLAT_OUTPUT="$WORK/exit.json" LD_PRELOAD=$LIB "$BIN/launcher" exit_thread 12 >"$WORK/x.out" 2>&1; rc=$?
expect "exit from a thread: exit code" "$rc" 0
expect "exit from a thread: report" "$(rq "$WORK/exit.json" 'k("exit_thread_kernel")["launches"]')" 12

# C++ exceptions keep working.
TRLAT_OUTPUT="$WORK/cxx.json" LD_PRELOAD=$LIB "$BIN/cxx_throw" >"$WORK/c.out" 2>&1; rc=$?
expect "C++ throw/catch under trlat" "$rc:$(cat "$WORK/c.out")" "0:caught 1000"
expect "C++ program's launches, name demangled" "$(rq "$WORK/cxx.json" 'k("cxx_kernel(float*, int)")["launches"]')" 1000

# A second preloaded library using dlsym(RTLD_NEXT, "malloc").
TRLAT_OUTPUT="$WORK/mw.json" LD_PRELOAD="$LIB $B/tests/lib/libmallocwrap.so" "$BIN/launcher" dlsym 10 >"$WORK/m.out" 2>"$WORK/m.err"; rc=$?
expect "malloc wrapper after trlat: runs" "$rc" 0
expect "malloc wrapper after trlat: its malloc is used" "$(grep -cE 'mallocwrap: [1-9][0-9]* mallocs' "$WORK/m.err")" 1
expect "malloc wrapper after trlat: launches seen" "$(rq "$WORK/mw.json" 'k("dlsym_ex_kernel")["launches"]')" 10
LD_PRELOAD="$B/tests/lib/libmallocwrap.so $LIB" TRLAT_OUTPUT="$WORK/mw2.json" "$BIN/launcher" dlsym 10 >/dev/null 2>"$WORK/m2.err"; rc=$?
expect "malloc wrapper before trlat: runs" "$rc" 0

# A program with no CUDA at all: same output, same exit code, no report.
for cmd in "sh -c 'echo hello; exit 3'" "python3 -c 'import sys; print(sum(range(10))); sys.exit(4)'"; do
    eval "$cmd" >"$WORK/p.out" 2>&1; plain=$?
    eval "TRLAT_OUTPUT=$WORK/none.json LD_PRELOAD=$LIB TRLAT_SUMMARY=1 $cmd" >"$WORK/q.out" 2>&1; pre=$?
    expect "no CUDA: same output ($cmd)" "$(cat "$WORK/q.out")" "$(cat "$WORK/p.out")"
    expect "no CUDA: same exit code ($cmd)" "$pre" "$plain"
    expect "no CUDA: no report ($cmd)" "$(ls "$WORK"/none.json 2>/dev/null | wc -l)" 0
done
TRLAT_OUTPUT="$WORK/nc.json" LD_PRELOAD=$LIB "$BIN/nocuda" >"$WORK/n.out" 2>"$WORK/n.err"
expect "libcuda never loaded by trlat" "$(cat "$WORK/n.out")" "found=1 rc=3 libcuda_mapped=0"
expect "trlat says why, once" "$(grep -c 'no libcuda' "$WORK/n.err")" 1

# TRLAT_DISABLE=1: pure pass-through, no report.
TRLAT_DISABLE=1 TRLAT_OUTPUT="$WORK/dis.json" LD_PRELOAD=$LIB "$BIN/launcher" dlsym 10 >"$WORK/d.out" 2>&1; rc=$?
expect "TRLAT_DISABLE=1: runs" "$rc" 0
expect "TRLAT_DISABLE=1: no report" "$(ls "$WORK"/dis.json 2>/dev/null | wc -l)" 0

# The report file: no symlink followed, no other report clobbered, fallback dir.
ln -s "$WORK/target" "$WORK/link.json"
TRLAT_OUTPUT="$WORK/link.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>&1
expect "symlink at the path not followed" "$(ls "$WORK"/target 2>/dev/null | wc -l)" 0
expect "report written beside it instead" "$(rq "$WORK/link.1.json" 'k("direct_kernel")["launches"]')" 2
echo '{"other": "report"}' >"$WORK/taken.json"
TRLAT_OUTPUT="$WORK/taken.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>&1
expect "existing report not clobbered" "$(cat "$WORK/taken.json")" '{"other": "report"}'
expect "new report beside it" "$(rq "$WORK/taken.1.json" 'k("direct_kernel")["launches"]')" 2
mkdir -p "$WORK/tmp"
TMPDIR=$WORK/tmp TRLAT_OUTPUT="/proc/no/such/dir/r.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>"$WORK/u.err"; rc=$?
expect "unwritable dir: program runs on" "$rc" 0
expect "unwritable dir: falls back to TMPDIR" "$(rq "$WORK/tmp/r.json" 'k("direct_kernel")["launches"]')" 2
expect "unwritable dir: says so once" "$(grep -c 'cannot write' "$WORK/u.err")" 1

# Summary on stderr.
TRLAT_SUMMARY=1 TRLAT_OUTPUT="$WORK/s.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 7 >/dev/null 2>"$WORK/s.err"
expect "summary names the kernel" "$(grep -c 'direct_kernel' "$WORK/s.err")" 1
expect "summary says where the report went" "$(grep -c "report: $WORK/s.json" "$WORK/s.err")" 1
# Its per-launch columns are medians: one slow first launch (a module load,
# 30 ms here against 20 us for the others) would be most of a mean.
FAKE_CUDA_LAUNCH_NS=20000 FAKE_CUDA_FIRST_LAUNCH_NS=30000000 TRLAT_SUMMARY=1 TRLAT_OUTPUT="$WORK/s1.json" \
    LD_PRELOAD=$LIB "$BIN/launcher" direct 40 >/dev/null 2>"$WORK/s1.err"
drv=$(awk '$2 == "direct_kernel" { print $5, $6 }' "$WORK/s1.err")
expect "summary: the driver column is the median, not the mean (mean $(rq "$WORK/s1.json" \
    'k("direct_kernel")["driver_ns"]["sum"] // 40') ns)" "$(echo "$drv" | grep -cE '^[0-9.]+ us$' | head -1)/$(
    echo "$drv" | awk '{ print ($1 >= 20 && $1 < 100) }')" "1/1"

# %p %r %h in TRLAT_OUTPUT
RANK=3 TRLAT_OUTPUT="$WORK/rank-%r-%h.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>&1
expect "TRLAT_OUTPUT %r %h" "$(rq "$WORK/rank-3-$(hostname).json" 'r["rank"]')" 3

# TRLAT_TRACE keeps the last N launches as events.
TRLAT_TRACE=5 TRLAT_OUTPUT="$WORK/tr.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 20 >/dev/null 2>&1
expect "TRLAT_TRACE=5: 5 events" "$(rq "$WORK/tr.json" 'len(r["events"])')" 5
expect "TRLAT_TRACE events ordered, named" "$(rq "$WORK/tr.json" 'all(e["kernel"]=="direct_kernel" and e["end_ns"]>=e["start_ns"] for e in r["events"])')" True
