#!/usr/bin/env bash
# scripts/gpu-test.sh as a gate, run here on stand-in suites (the GPU suites
# themselves need the GPU machine): it exits non-zero when a suite is
# missing, prints a FAIL line, misses a benchmark target (a TABLE line
# ending in FAIL) or exits non-zero without printing anything — and zero
# only when every suite passed.
. "$(dirname "$0")/lib.sh"

T=$WORK/tree
mkdir -p "$T/scripts" "$T/tests/gpu" "$T/build/tests/gpu"
cp "$ROOT/scripts/gpu-test.sh" "$T/scripts/"
: >"$T/build/libtrlat.so" # a carried build: the script builds nothing
printf '#!/bin/sh\n' >"$T/build/tests/gpu/bench_launch"
chmod +x "$T/build/tests/gpu/bench_launch"
printf 'print("PASS one")\nprint("PASS two")\n' >"$T/tests/gpu/test_ok.py"
printf 'print("PASS one")\nraise SystemExit(3)\n' >"$T/tests/gpu/test_crash.py"
printf 'print("PASS one")\nprint("FAIL two: why")\n' >"$T/tests/gpu/test_fail.py"
printf 'echo "TABLE a hit 1.2x (target 1.3x)  PASS"\n' >"$T/tests/gpu/bench_good.sh"
printf 'echo "TABLE a hit 1.2x  PASS"; echo "TABLE b hit 1.4x (target 1.3x)  FAIL"; echo "TABLE b other  misses it"\n' \
    >"$T/tests/gpu/bench_miss.sh"

gate() { # SUITE...: the exit status, then the summary's lines for the suites
    (cd "$WORK" && OUT=$WORK/out BUILD=$T/build bash "$T/scripts/gpu-test.sh" "$@" >"$WORK/gate.out" 2>&1)
    echo "$?"
    sed -n '/^== summary/,$p' "$WORK/gate.out" | grep -E '^  (test|bench|nonexistent)' | sed 's/, [0-9]*s$//; s/  */ /g'
}

expect "gpu-test.sh: every suite passed" "$(gate test_ok.py bench_good.sh)" \
    "0
 test_ok.py 2 passed, 0 failed, exit 0
 bench_good.sh 0 passed, 0 failed, targets: 1 met, 0 missed, exit 0"
expect "gpu-test.sh: a suite that dies without a FAIL line" "$(gate test_ok.py test_crash.py | head -1)" 1
expect "gpu-test.sh: a FAIL line" "$(gate test_fail.py)" \
    "1
 test_fail.py 1 passed, 1 failed, exit 0"
expect "gpu-test.sh: a missed target, counted" "$(gate bench_miss.sh)" \
    "1
 bench_miss.sh 0 passed, 0 failed, targets: 1 met, 1 missed, exit 0"
expect "gpu-test.sh: a missing suite" "$(gate test_ok.py nonexistent.py | sed -n '1p;3p')" \
    "1
 nonexistent.py missing"
expect "gpu-test.sh: logs under OUT" "$(ls "$WORK/out")" "gpu-test.log
summary.txt"
