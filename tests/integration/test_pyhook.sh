#!/usr/bin/env bash
# The Python hook around Triton's JITFunction.run, against the stand-in
# Triton of tests/pyhook (same run contract, launches through the fake
# driver with ctypes).
. "$(dirname "$0")/lib.sh"
PROG=$ROOT/tests/pyhook/prog.py
PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)') # not a shim script

run() { # NAME MODE N [env...]: report in $WORK/NAME.json, stdout in $WORK/NAME.out
    local name=$1 mode=$2 n=$3; shift 3
    rm -f "$WORK/$name.json"
    env "$@" TRLAT_OUTPUT="$WORK/$name.json" LD_PRELOAD=$LIB "$PY" "$PROG" "$mode" "$n" >"$WORK/$name.out" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.rc"
}
site() { sed -n "s/^site $2 //p" "$WORK/$1.out"; } # NAME SITE -> file:line
sites() { rq "$WORK/$1.json" 'sorted((s["site"], s["launches"]) for s in k("'"$2"'")["call_sites"])'; }

run loop loop 500
expect "hook installed, Triton version seen" "$(rq "$WORK/loop.json" '(r["python"]["hook"], r["python"]["triton_version"])')" "('installed', '3.6.0')"
expect "every call timed: py_to_driver count" "$(rq "$WORK/loop.json" '(k("add_kernel")["launches"], k("add_kernel")["py_to_driver_ns"]["count"])')" "(500, 500)"
expect "call site is the loop's line" "$(sites loop add_kernel)" "[('$(site loop loop)', 500)]"
expect "site kind python" "$(rq "$WORK/loop.json" 'k("add_kernel")["call_sites"][0]["kind"]')" python
expect "totals carry py_to_driver" "$(rq "$WORK/loop.json" 'r["totals"]["py_to_driver_ns"] == k("add_kernel")["py_to_driver_ns"]["sum"] > 0')" True
expect "one launch per call" "$(rq "$WORK/loop.json" '(r["python"]["calls"], r["python"]["calls_one_launch"])')" "(500, 500)"
expect "nothing on stderr" "$(cat "$WORK/loop.err")" ""

# trlat starts inside `import triton` (ctypes' dlsym of the driver): the
# import watcher patches before the first call. Triton imported after CUDA
# was used: patched at import too.
run first first_call 40
expect "started during import: first call timed" "$(rq "$WORK/first.json" 'k("add_kernel")["py_to_driver_ns"]["count"]')" 40
run late late_import 40
expect "imported after CUDA init: first call timed" "$(rq "$WORK/late.json" 'k("add_kernel")["py_to_driver_ns"]["count"]')" 40

run two two_sites 30
expect "three sites, exact counts" "$(sites two add_kernel)" \
    "$(python3 -c "print(sorted([('$(site two first)', 30), ('$(site two second)', 60), ('$(site two direct)', 1)]))")"

# py->driver starts at the call's entry: 200 us of Python work before the launch.
run spin spin 40
wall=$(sed -n 's/^wall_us_per_call //p' "$WORK/spin.out")
expect "py_to_driver covers the Python work (>= 200 us)" "$(rq "$WORK/spin.json" 'k("add_kernel")["py_to_driver_ns"]["min"] >= 200000')" True
expect "py_to_driver + driver <= wall per call" \
    "$(rq "$WORK/spin.json" '(k("add_kernel")["py_to_driver_ns"]["sum"] + k("add_kernel")["driver_ns"]["sum"]) / 40 <= '"$wall"' * 1000')" True

# ... and at kernel[grid] when run() comes from it: the call's own argument
# expressions (300 us here) are in; `f = kernel[grid]` on one line and
# `f(...)` 300 us later on another starts at run() instead.
run sub subscript 20
expect "kernel[grid](slow arg): py_to_driver from the subscript (every call >= 300 us)" \
    "$(rq "$WORK/sub.json" '(k("add_kernel")["py_to_driver_ns"]["count"], k("add_kernel")["py_to_driver_ns"]["min"] >= 300000)')" "(20, True)"
expect "f = kernel[grid]; ...; f(...) on another line: from run() (every call < 300 us)" \
    "$(rq "$WORK/sub.json" '(k("split_kernel")["py_to_driver_ns"]["count"], k("split_kernel")["py_to_driver_ns"]["max"] < 300000)')" "(20, True)"
expect "subscript: sites" "$(sites sub split_kernel)" "[('$(site sub splitcall)', 20)]"
"$PY" "$PROG" subscript 20 >"$WORK/plain-sub.out" 2>&1
expect "subscript: same output" "$(cat "$WORK/sub.out")" "$(cat "$WORK/plain-sub.out")"
run sub_fp subscript 20 TRLAT_FASTPATH=1
expect "fast path on: no subscript wrapper, still timed" "$(rq "$WORK/sub_fp.json" '(k("add_kernel")["py_to_driver_ns"]["count"], k("split_kernel")["py_to_driver_ns"]["count"])')" "(20, 20)"

# Host time between launches by user site: 500 us of the program's own code
# before each launch at one line, 200 us of Triton's (py->driver) at another.
run between between 40
bsite() { rq "$WORK/between.json" '[s for s in k("add_kernel")["call_sites"] if s["user_site"] == "'"$(site between "$1")"'"][0]['"$2"'] // 1000'; }
expect "between: own code: the gap covers it (>= 39 x 500 us)" "$(($(bsite own_time '"gap_ns"') >= 39 * 500))" 1
expect "between: own code: Triton's part of it small (< 40 x 150 us)" "$(($(bsite own_time '"triton_ns"') < 40 * 150))" 1
expect "between: Triton's spin: Triton's part covers it (>= 40 x 200 us)" "$(($(bsite triton_time '"triton_ns"') >= 40 * 200))" 1
expect "between: Triton's spin: within its gap and return (gap + 40 x 100 us)" \
    "$(($(bsite triton_time '"triton_ns"') <= $(bsite triton_time '"gap_ns"') + 40 * 100))" 1
"$B/trlat" report "$WORK/between.json" >"$WORK/between.txt"
expect "between: report: the table by user site, the program's own line first" \
    "$(sed -n '/^host time between launches, by user site/,/^$/p' "$WORK/between.txt" | sed -n '3p' | grep -c "$(site between own_time)\$")" 1

# py_return_ns: from the call's first launch back to Python (300 us of
# Triton work after the launch here); a quick return is small.
run ret retspin 20
expect "retspin: py_return_ns for every call, covers the return path (>= 300 us)" \
    "$(rq "$WORK/ret.json" '(k("add_kernel")["py_return_ns"]["count"], k("add_kernel")["py_return_ns"]["min"] >= 300000)')" "(20, True)"
expect "loop: py_return_ns for every call, under the spin's" \
    "$(rq "$WORK/loop.json" '(k("add_kernel")["py_return_ns"]["count"], k("add_kernel")["py_return_ns"]["max"] < 300000)')" "(500, True)"

# Exceptions from Triton's run pass through unchanged, with the same traceback.
"$PY" "$PROG" exception 20 >"$WORK/plain-exc.out" 2>&1
run exc exception 20
expect "exception: same traceback and output" "$(cat "$WORK/exc.out")" "$(cat "$WORK/plain-exc.out")"
expect "exception: raising calls counted, not attributed" \
    "$(rq "$WORK/exc.json" '(r["python"]["calls_without_launch"]["error"], k("add_kernel")["launches"], k("add_kernel")["py_to_driver_ns"]["count"])')" "(20, 1, 1)"
expect "exception: the next call's site" "$(sites exc add_kernel)" "[('$(site exc after)', 1)]"

# Calls that launch nothing, or several times.
run zm zero_multi 25
expect "zero/multi: counters" "$(rq "$WORK/zm.json" '(r["python"]["calls"], r["python"]["calls_multi_launch"], r["python"]["calls_without_launch"])')" \
    "(75, 25, {'warmup': 25, 'error': 0, 'other': 25})"
expect "multi: py time once per call, every launch at its site" \
    "$(rq "$WORK/zm.json" '(k("add_kernel")["launches"], k("add_kernel")["py_to_driver_ns"]["count"])')" "(75, 25)"
expect "zero-launch calls have no site" "$(sites zm add_kernel)" "[('$(site zm multi)', 75)]"
expect "zero/multi: one py_return_ns per call that launched" \
    "$(rq "$WORK/zm.json" 'k("add_kernel")["py_return_ns"]["count"]')" 25

# Autotuner.run -> JITFunction.run (and Heuristics -> Autotuner -> JIT):
# timed once, at the outermost call, attributed to the program's line.
run nest nested 30
expect "nested: one py time per outer call" "$(rq "$WORK/nest.json" '(k("tuned_kernel")["py_to_driver_ns"]["count"], r["python"]["calls"])')" "(60, 60)"
expect "nested: inner calls not timed again" "$(rq "$WORK/nest.json" 'r["python"]["nested_calls"]')" "$((30 + 6 + 2 * 30 + 6))"
expect "nested: benchmark launches at the user's line" "$(sites nest tuned_kernel)" \
    "$(python3 -c "print(sorted([('$(site nest autotuned)', 36), ('$(site nest heuristics)', 36)]))")"

# Four Python threads (the GIL released around each launch).
run thr threads 3000
expect "threads: exact launches and py times" "$(rq "$WORK/thr.json" '(k("add_kernel")["launches"], k("add_kernel")["py_to_driver_ns"]["count"])')" "(12000, 12000)"
expect "threads: each line its own launches" "$(sites thr add_kernel)" \
    "$(python3 -c "print(sorted([('$(site thr odd)', 6000), ('$(site thr even)', 6000)]))")"

# The patched class behaves as before.
"$PY" "$PROG" identity 1 >"$WORK/plain-id.out" 2>&1
run id identity 1
expect "identity: same results" "$(cat "$WORK/id.out")" "$(cat "$WORK/plain-id.out")"
run wr wrapper 1
expect "wrappers: trlat's method-descriptor type, the originals as __wrapped__" "$(head -2 "$WORK/wr.out")" \
    "$(printf 'run trlat Hook run\n__getitem__ trlat Hook __getitem__')"
# Python 3.11+: the __getitem__ wrapper makes Triton's lambda itself (the
# identity run above compares it with Triton's own); the method's frame
# does not run.
run sf subscript_frames 10
if "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    expect "subscript: Triton's lambda made without running __getitem__" "$(grep 'getitem frames' "$WORK/sf.out")" "getitem frames 0"
fi
expect "subscript, plain: __getitem__ runs" "$("$PY" "$PROG" subscript_frames 10 | grep 'getitem frames')" "getitem frames 10"
for m in loop two_sites zero_multi nested threads; do
    "$PY" "$PROG" $m 10 >"$WORK/p.out" 2>&1
    run same $m 10
    expect "same output under trlat ($m)" "$(cat "$WORK/same.out")$(cat "$WORK/same.err")" "$(cat "$WORK/p.out")"
done

# Look-alikes of the hook's file in the working directory and on sys.path
# never run; the hook still comes from trlat's own directory.
mkdir -p "$WORK/evil/share/trlat" "$WORK/cwd/share/trlat"
for d in "$WORK/evil" "$WORK/evil/share/trlat" "$WORK/cwd" "$WORK/cwd/share/trlat"; do
    for f in pyhook.py trlat_pyhook.py; do
        echo "open('$WORK/pwned', 'a').write('$d/$f\n')" >"$d/$f"
    done
done
(cd "$WORK/cwd" && PYTHONPATH=$WORK/evil:$WORK/evil/share/trlat TRLAT_OUTPUT="$WORK/evil.json" LD_PRELOAD=$LIB "$PY" "$PROG" loop 10 >/dev/null 2>&1)
expect "look-alike hook files never run" "$(cat "$WORK/pwned" 2>/dev/null)" ""
expect "hook installed from trlat's directory" "$(rq "$WORK/evil.json" 'r["python"]["hook"]')" installed

# A relative LD_PRELOAD and a chdir: the file is still trlat's own.
(cd "$B/.." && TRLAT_OUTPUT="$WORK/rel.json" LD_PRELOAD="$(basename "$B")/libtrlat.so" "$PY" -c "
import os, runpy, sys
os.chdir('$WORK/cwd'); sys.argv = ['$PROG', 'loop', '10']; sys.path.insert(0, '$ROOT/tests/pyhook')
runpy.run_path('$PROG')" >/dev/null 2>&1)
expect "relative LD_PRELOAD, chdir: hook installed" "$(rq "$WORK/rel.json" '(r["python"]["hook"], k("add_kernel")["py_to_driver_ns"]["count"])')" "('installed', 10)"

# No hook file beside the library: said once, the program runs on.
mkdir -p "$WORK/lonely"
cp "$LIB" "$WORK/lonely/libtrlat.so"
"$PY" "$PROG" loop 10 >"$WORK/p.out" 2>&1
TRLAT_OUTPUT="$WORK/lonely.json" LD_PRELOAD=$WORK/lonely/libtrlat.so "$PY" "$PROG" loop 10 >"$WORK/l.out" 2>"$WORK/l.err"; rc=$?
expect "no hook file: runs, same output" "$rc:$(cat "$WORK/l.out")" "0:$(cat "$WORK/p.out")"
expect "no hook file: said once" "$(grep -c 'cannot read .*share/trlat/pyhook.py' "$WORK/l.err")" 1
expect "no hook file: launches still counted" "$(rq "$WORK/lonely.json" '(r["python"]["hook"], k("add_kernel")["launches"], k("add_kernel")["py_to_driver_ns"])')" "('failed', 10, None)"

# A Triton trlat does not recognise: profiled without the hook, said once.
FAKE_TRITON_VERSION=2.1.0 "$PY" "$PROG" loop 10 >"$WORK/p.out" 2>&1
run old loop 10 FAKE_TRITON_VERSION=2.1.0
expect "unknown Triton: same output" "$(cat "$WORK/old.out")" "$(cat "$WORK/p.out")"
expect "unknown Triton: said once" "$(grep -c 'Triton 2.1.0 is not a version trlat recognises' "$WORK/old.err")" 1
expect "unknown Triton: no hook" "$(rq "$WORK/old.json" '(r["python"]["hook"], k("add_kernel")["launches"], k("add_kernel")["py_to_driver_ns"], k("add_kernel")["call_sites"])')" "('not_recognised', 10, None, [])"

# Not a Python program: "python" is null. TRLAT_DISABLE=1: nothing at all.
TRLAT_OUTPUT="$WORK/c.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 5 >/dev/null 2>&1
expect "C program: python null" "$(rq "$WORK/c.json" 'r["python"]')" None
TRLAT_DISABLE=1 TRLAT_OUTPUT="$WORK/dis.json" LD_PRELOAD=$LIB "$PY" "$PROG" nested 5 >"$WORK/d.out" 2>&1; rc=$?
"$PY" "$PROG" nested 5 >"$WORK/p.out" 2>&1
expect "TRLAT_DISABLE=1: same output, no report" "$rc:$(cat "$WORK/d.out"):$(ls "$WORK"/dis.json 2>/dev/null | wc -l)" "0:$(cat "$WORK/p.out"):0"

# Other CPython versions found on this machine (3.9+, on PATH or under
# pyenv; none: nothing checked here): the wrapper type, the patched class's
# behaviour and the timings.
mapfile -t others < <(other_pythons "$PY")
for OPY in "${others[@]}"; do
    other=$("$OPY" -c 'import sys; print("python%d.%d.%d" % sys.version_info[:3])')
    "$OPY" "$PROG" identity 1 >"$WORK/o-plain.out" 2>&1
    TRLAT_OUTPUT="$WORK/o-id.json" LD_PRELOAD=$LIB "$OPY" "$PROG" identity 1 >"$WORK/o-id.out" 2>&1
    expect "$other: identity, same results" "$(cat "$WORK/o-id.out")" "$(cat "$WORK/o-plain.out")"
    TRLAT_OUTPUT="$WORK/o-wr.json" LD_PRELOAD=$LIB "$OPY" "$PROG" wrapper 1 >"$WORK/o-wr.out" 2>&1
    expect "$other: the wrapper type" "$(head -2 "$WORK/o-wr.out")" "$(printf 'run trlat Hook run\n__getitem__ trlat Hook __getitem__')"
    rm -f "$WORK/o-loop.json"
    TRLAT_OUTPUT="$WORK/o-loop.json" LD_PRELOAD=$LIB "$OPY" "$PROG" loop 50 >/dev/null 2>&1
    expect "$other: every call timed" "$(rq "$WORK/o-loop.json" '(r["python"]["hook"], k("add_kernel")["py_to_driver_ns"]["count"])')" "('installed', 50)"
done
