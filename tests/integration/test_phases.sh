#!/usr/bin/env bash
# TRLAT_PY_PHASES: a Triton call's py->driver split at its cache key, launch
# metadata and launcher, against the stand-in Triton 3.6 of tests/fastpath
# (its JITFunction.run passes the same marks as Triton's). A cache key made
# 300 us slower shows in its own phase.
. "$(dirname "$0")/lib.sh"
PROG=$ROOT/tests/fastpath/prog.py
PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
run() { # TAG [env...]
    local tag=$1; shift
    env "$@" PYTHONPATH="$ROOT/tests/fastpath" TRLAT_OUTPUT="$WORK/$tag.json" LD_PRELOAD=$LIB "$PY" "$PROG" loop 200 \
        >"$WORK/$tag.out" 2>"$WORK/$tag.err"
    echo $? >>"$WORK/$tag.out"
}
ph() { rq "$WORK/$1.json" "$2"; }
P='k("add_kernel")["py_phases_ns"]'

run off
expect "off by default: no phases in the report" "$(ph off '"py_phases_ns" in k("add_kernel")')" False
run on TRLAT_PY_PHASES=1
expect "on: same output" "$(cat "$WORK/on.out")" "$(cat "$WORK/off.out")"
expect "on: nothing on stderr" "$(cat "$WORK/on.err")" ""
expect "on: every call split at the launcher and at every mark" "$(ph on "($P[\"calls\"], $P[\"split_calls\"])")" "(200, 200)"
expect "on: before the launcher + the launcher's own = py->driver (1 ns a call of rounding)" \
    "$(ph on "abs($P[\"before_launcher\"] + $P[\"launcher\"] - k(\"add_kernel\")[\"py_to_driver_ns\"][\"sum\"]) <= 400")" True
expect "on: bind + cache and grid + metadata = before the launcher" \
    "$(ph on "abs($P[\"bind\"] + $P[\"cache_grid\"] + $P[\"launch_metadata\"] - $P[\"before_launcher\"]) <= 600")" True
run slow TRLAT_PY_PHASES=1 FAKE_TRITON_SLOW_KEY_US=300
expect "a slower cache key: its phase grew by it (>= 300 us a call)" \
    "$(ph slow "$P[\"cache_grid\"] // 200 >= 300000")" True
expect "a slower cache key: binding did not" "$(ph slow "$P[\"bind\"] // 200 < 100000")" True
"$B/trlat" report "$WORK/slow.json" >"$WORK/slow.txt"
expect "trlat report: the phase table, the slow phase's mean" \
    "$(sed -n '/^py→drv by Triton/,/^$/p' "$WORK/slow.txt" | awk '$NF == "add_kernel" { if ($(NF-4) >= 300 && $(NF-3) == "µs") print "slow"; else print }')" slow
"$B/trlat" merge "$WORK/on.json" "$WORK/on.json" -o "$WORK/m.json" 2>/dev/null
expect "merge: phases summed" "$(rq "$WORK/m.json" "$P[\"calls\"]")" 400
run fp TRLAT_PY_PHASES=1 TRLAT_FASTPATH=1
expect "with the fast path: only the calls Triton ran are split" \
    "$(ph fp "$P[\"calls\"] == k(\"add_kernel\")[\"fastpath\"][\"misses\"] + sum(k(\"add_kernel\")[\"fastpath\"][\"fallbacks\"].values())")" True
