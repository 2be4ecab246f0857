#!/usr/bin/env bash
# The GPU scripts on stand-ins, here without a GPU (the GPU suites
# themselves need the GPU machine). scripts/gpu-test.sh as a gate: it exits
# non-zero when a suite is missing, prints a FAIL line, misses a benchmark
# target (a TABLE line ending in FAIL) or exits non-zero without printing
# anything, and zero only when every suite passed.
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

# scripts/bench_fastpath.py's decode verdict on stand-in measurements (its
# processes need the GPU): the gap each process closes, their median the
# verdict, and the TRLAT_TIMING=all processes beside it.
decode() { # EAGER FASTPATH GRAPHS: the TABLE lines and the exit status
    python3 - "$ROOT/scripts" "$@" <<'PY' 2>&1
import itertools, sys
sys.path.insert(0, sys.argv[1])
e, f, g = (float(x) for x in sys.argv[2:5])
sys.argv = ["bench_fastpath.py", "--kernels", "none", "--ab-rounds", "3", "--steps", "5"]
import bench_fastpath as b
n = itertools.count()
def measure(cmd, env, preload):  # process i: eager i us slower; process 1 of the timed ones gives nothing
    i = next(n)
    return None if i == 1 else {"eager": [e + i], "fastpath": [f], "graphs": [g], "host": [5.0]}
b.measure = measure
rc = b.main()
print("exit", rc)
PY
}
out=$(decode 100 40 13)
expect "bench_fastpath.py: each decode process's gap" "$(echo "$out" | grep -o '^decode A/B process [0-9]: .*gap closed [0-9.]*%' | sed 's/:.*gap closed/:/')" \
    "decode A/B process 0: 69.0%
decode A/B process 2: 69.7%"
expect "bench_fastpath.py: decode verdict, a missed target" "$(echo "$out" | grep -E '^TABLE|^exit')" \
    "TABLE fastpath decode: eager 101.0 us, fastpath 40.0 us, graphs 13.0 us per step; gap closed 69.3% (target 75%) FAIL
TABLE fastpath decode with TRLAT_TIMING=all: eager 104.0 us, fastpath 40.0 us, graphs 13.0 us per step; gap closed 70.3% (target 75%) misses it
exit 1"
expect "bench_fastpath.py: decode verdict, a met target" "$(decode 100 30 13 | grep -E '^TABLE fastpath decode:|^exit' | sed 's/.*) //')" \
    "PASS
exit 0"
