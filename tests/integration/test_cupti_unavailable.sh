#!/usr/bin/env bash
# CUPTI that cannot be used (no GPU here: the real libcupti fails to start on
# the fake driver; missing or broken libraries; another subscriber): the run
# goes on unchanged, the report is host-only with config.cupti
# "unavailable" and a reason, and trlat says why in one stderr line.
. "$(dirname "$0")/lib.sh"
FAKE_CUPTI=$B/tests/fake/libcupti_fake.so

run() { # run OUT ENV... -- ARGS: launcher under trlat, stdout/stderr to OUT.{out,err}
    local out=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    env "${envs[@]}" TRLAT_OUTPUT="$WORK/$out.json" LD_PRELOAD=$LIB timeout 60 "$BIN/launcher" "$@" \
        >"$WORK/$out.out" 2>"$WORK/$out.err"
}

"$BIN/launcher" direct 7 >"$WORK/plain.out" 2>&1; plain_rc=$?

for mode in auto 1; do
    run a$mode TRLAT_CUPTI=$mode -- direct 7; rc=$?
    expect "TRLAT_CUPTI=$mode on the fake driver: exit code" "$rc" "$plain_rc"
    expect "TRLAT_CUPTI=$mode: output unchanged" "$(cat "$WORK/a$mode.out")" "$(cat "$WORK/plain.out")"
    expect "TRLAT_CUPTI=$mode: config.cupti" "$(rq "$WORK/a$mode.json" 'r["config"]["cupti"]')" unavailable
    expect "TRLAT_CUPTI=$mode: a reason" "$(rq "$WORK/a$mode.json" 'bool(r["config"]["cupti_reason"])')" True
    expect "TRLAT_CUPTI=$mode: host records kept" "$(rq "$WORK/a$mode.json" 'k("direct_kernel")["launches"]')" 7
    expect "TRLAT_CUPTI=$mode: no GPU numbers" \
        "$(rq "$WORK/a$mode.json" '(r["totals"]["gpu_ns"], k("direct_kernel")["gpu_ns"], k("direct_kernel")["starved_ns"])')" \
        "(None, None, None)"
    expect "TRLAT_CUPTI=$mode: one line on stderr says why" "$(grep -c 'CUPTI unavailable' "$WORK/a$mode.err")" 1
done

run off TRLAT_CUPTI=0 -- direct 3
expect "TRLAT_CUPTI=0: config.cupti off" "$(rq "$WORK/off.json" '(r["config"]["cupti"], r["config"]["cupti_reason"])')" "('off', None)"
expect "TRLAT_CUPTI=0: nothing said about CUPTI" "$(grep -c CUPTI "$WORK/off.err")" 0

run nolib TRLAT_CUPTI=auto TRLAT_CUPTI_LIB=/nonexistent/libcupti.so -- direct 3
expect "TRLAT_CUPTI_LIB missing: reason names it" \
    "$(rq "$WORK/nolib.json" '(r["config"]["cupti"], "TRLAT_CUPTI_LIB" in r["config"]["cupti_reason"])')" "('unavailable', True)"
expect "TRLAT_CUPTI_LIB missing: run goes on" "$(rq "$WORK/nolib.json" 'k("direct_kernel")["launches"]')" 3

run notcupti TRLAT_CUPTI=1 TRLAT_CUPTI_LIB="$B/tests/fake/libcuda.so.1" -- direct 3
expect "not a libcupti: reason" "$(rq "$WORK/notcupti.json" '"lacks cuptiSubscribe" in r["config"]["cupti_reason"]')" True

run sub TRLAT_CUPTI=auto TRLAT_CUPTI_LIB="$FAKE_CUPTI" FAKE_CUPTI_SUBSCRIBE_RC=39 -- direct 3
expect "another subscriber: trlat stands aside" \
    "$(rq "$WORK/sub.json" '(r["config"]["cupti"], "another CUPTI client" in r["config"]["cupti_reason"])')" "('unavailable', True)"
expect "another subscriber: said once" "$(grep -c 'another CUPTI client' "$WORK/sub.err")" 1

run enable TRLAT_CUPTI=1 TRLAT_CUPTI_LIB="$FAKE_CUPTI" FAKE_CUPTI_ENABLE_RC=1 -- direct 3
expect "kernel activity refused: unavailable" \
    "$(rq "$WORK/enable.json" '(r["config"]["cupti"], "kernel activity" in r["config"]["cupti_reason"], k("direct_kernel")["launches"])')" \
    "('unavailable', True, 3)"

run inj TRLAT_CUPTI=auto CUDA_INJECTION64_PATH=/nonexistent/libinjection.so TRLAT_CUPTI_LIB="$FAKE_CUPTI" -- direct 3
expect "a profiler's injection: auto stands aside" \
    "$(rq "$WORK/inj.json" '(r["config"]["cupti"], "CUDA_INJECTION64_PATH" in r["config"]["cupti_reason"])')" "('unavailable', True)"
run inj1 TRLAT_CUPTI=1 CUDA_INJECTION64_PATH=/nonexistent/libinjection.so TRLAT_CUPTI_LIB="$FAKE_CUPTI" \
    FAKE_CUPTI_KERNEL=direct_kernel -- direct 3
expect "a profiler's injection: TRLAT_CUPTI=1 goes ahead" "$(rq "$WORK/inj1.json" 'r["config"]["cupti"]')" on

# Clean ends with CUPTI unusable: never launched, fork, exit from a thread.
run idle TRLAT_CUPTI=auto -- direct 0; rc=$?
expect "never launched: exits 0" "$rc" 0
expect "never launched: no report" "$(ls "$WORK"/idle.json 2>/dev/null | wc -l)" 0
TRLAT_CUPTI=auto TRLAT_OUTPUT="$WORK/fork-%p.json" LD_PRELOAD=$LIB timeout 60 "$BIN/launcher" fork 5 >"$WORK/f.out" 2>&1; rc=$?
expect "fork: exits 0" "$rc" 0
expect "fork: two reports, both host-only" \
    "$(for f in "$WORK"/fork-*.json; do rq "$f" 'r["config"]["cupti"]'; done | sort | uniq -c | awk '{print $1, $2}')" "2 unavailable"
run xt TRLAT_CUPTI=auto -- exit_thread 9; rc=$?
expect "exit from a thread: exits 0" "$rc" 0
expect "exit from a thread: report" "$(rq "$WORK/xt.json" '(r["config"]["cupti"], k("exit_thread_kernel")["launches"])')" "('unavailable', 9)"
