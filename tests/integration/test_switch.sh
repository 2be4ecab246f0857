#!/usr/bin/env bash
# The run-time switches, from Python through ctypes (trlat_api_fastpath,
# trlat_api_profiling), on the stand-in Triton of tests/fastpath and the
# fake driver: five blocks of N identical calls (fast path on, off, on
# again; profiling paused, resumed).
. "$(dirname "$0")/lib.sh"
PROG=$ROOT/tests/fastpath/prog.py
N=50
mapfile -t pythons < <(find_pythons 11)
[ ${#pythons[@]} -gt 0 ] || { fail switch "no Python 3.11+ found"; exit 0; }
PY=${pythons[0]}

run() { # TAG FASTPATH
    env TRLAT_FASTPATH=$2 TRLAT_TIMING=all TRLAT_FASTPATH_LOG="$WORK/$1.log" TRLAT_OUTPUT="$WORK/$1.json" \
        LD_PRELOAD=$LIB timeout 120 "$PY" "$PROG" switch "$N" >"$WORK/$1.out" 2>"$WORK/$1.err"
    echo "exit $?" >>"$WORK/$1.out"
}
k() { rq "$WORK/$1.json" "k('add_kernel')$2"; }

run on 1
expect "fast path on: what the switches said" "$(grep -v done "$WORK/on.out" | tr '\n' ';')" \
    "fastpath was 1;fastpath was 0;profiling was 1;profiling was 0;exit 0;"
# the paused block's launches are not in the report; every other one is
expect "fast path on: launches outside the pause" "$(k on '["launches"]')" $((4 * N))
# the first call misses; the switched-off block runs through Triton
# (neither hit nor miss); the paused block still replays
expect "fast path on: hits" "$(k on '["fastpath"]["hits"]')" $((4 * N - 1))
expect "fast path on: misses" "$(k on '["fastpath"]["misses"]')" 1
# and the warm-up's launch, timed from the launcher's hook (installed during
# that first call)
expect "fast path on: Python calls outside the pause" "$(rq "$WORK/on.json" 'r["python"]["calls"]')" $((4 * N + 1))
# the launch log (every launch the driver got) has all five blocks, the warm-up too
expect "fast path on: the driver got every launch" "$(grep -c add_kernel "$WORK/on.log")" $((5 * N))

run off 0
expect "fast path off: the switch says it did not start" "$(grep -v done "$WORK/off.out" | tr '\n' ';')" \
    "fastpath was -1;fastpath was -1;profiling was 1;profiling was 0;exit 0;"
expect "fast path off: launches outside the pause" "$(k off '["launches"]')" $((4 * N))
expect "fast path off: same output as on" "$(grep done "$WORK/off.out")" "$(grep done "$WORK/on.out")"

# what ran is in the report's config, beside what was asked
expect "fast path on: config says it ran" "$(rq "$WORK/on.json" '(r["config"]["fastpath"], r["config"]["fastpath_state"], r["config"]["fastpath_reason"])')" "('on', 'ran', None)"
expect "fast path off: config says off" "$(rq "$WORK/off.json" '(r["config"]["fastpath"], r["config"]["fastpath_state"])')" "('off', 'off')"
# asked for in a program without Python: it stood aside, and says why
TRLAT_FASTPATH=1 TRLAT_OUTPUT="$WORK/c.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>&1
expect "fast path without Python: stood aside" "$(rq "$WORK/c.json" 'r["config"]["fastpath_state"]')" stood_aside
expect "fast path without Python: why" "$(rq "$WORK/c.json" 'r["config"]["fastpath_reason"]')" \
    "no Triton launch from Python reached it"
expect "fast path without Python: trlat report says it" \
    "$("$B/trlat" report "$WORK/c.json" | grep -c 'fastpath on (stood aside: no Triton launch from Python reached it')" 1
