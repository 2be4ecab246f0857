#!/usr/bin/env bash
# Triton launches that do not come through JITFunction.run, against the
# stand-in Triton of tests/pyhook: a CompiledKernel called directly, a
# library's KernelInterface subclass in site-packages (FlagGems' LibEntry
# manner), and Inductor's CachingAutotuner called from generated code.
# Each launch is timed from the outermost Python call and carries two
# sites: the kernel's (first frame outside Triton and Inductor's runtime)
# and the user's (first frame of the program's own code).
. "$(dirname "$0")/lib.sh"
PROG=$ROOT/tests/pyhook/prog.py
LIBFILE=$ROOT/tests/pyhook/site-packages/fakelib/__init__.py

run() { # NAME MODE N PYTHON [env...]
    local name=$1 mode=$2 n=$3 py=$4; shift 4
    rm -f "$WORK/$name.json"
    env "$@" TRLAT_OUTPUT="$WORK/$name.json" LD_PRELOAD=$LIB "$py" "$PROG" "$mode" "$n" >"$WORK/$name.out" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.rc"
}
site() { sed -n "s/^site $2 //p" "$WORK/$1.out"; }
pairs() { rq "$WORK/$1.json" 'sorted(((s["site"], s.get("user_site"), s["launches"]) for s in k("'"$2"'")["call_sites"]), key=str)'; }
timed() { rq "$WORK/$1.json" '(k("'"$2"'")["launches"], k("'"$2"'")["py_to_driver_ns"]["count"])'; }
p50_us() { rq "$WORK/$1.json" 'k("'"$2"'")["py_to_driver_ns"]["p50"] // 1000'; }

check_python() { # PYTHON LABEL [env...]
    local py=$1 v=$2; shift 2
    run "$v-c" compiled 20 "$py" "$@"
    expect "$v: compiled[grid](...): every launch timed" "$(timed "$v-c" compiled_kernel)" "(20, 20)"
    expect "$v: compiled[grid](...): timed from the subscript (300 us argument)" "$(($(p50_us "$v-c" compiled_kernel) >= 300))" 1
    expect "$v: compiled[grid](...): the line is both sites" "$(pairs "$v-c" compiled_kernel)" \
        "[('$(site "$v-c" compiled)', '$(site "$v-c" compiled)', 20)]"
    expect "$v: CompiledKernel.run(...): every launch timed" "$(timed "$v-c" compiled_run)" "(20, 20)"
    expect "$v: CompiledKernel.run(...): its line" "$(pairs "$v-c" compiled_run)" \
        "[('$(site "$v-c" compiled_run)', '$(site "$v-c" compiled_run)', 20)]"
    expect "$v: f = compiled[grid] apart from f(...): timed from the launcher" \
        "$(timed "$v-c" compiled_split):$(($(p50_us "$v-c" compiled_split) < 300))" "(20, 20):1"
    expect "$v: compiled: outermost calls, none nested" "$(rq "$WORK/$v-c.json" '(r["python"]["calls_one_launch"], r["python"]["nested_calls"])')" "(60, 0)"

    run "$v-l" library 20 "$py" "$@"
    local libsite; libsite=$(sed -n 's/^libsite //p' "$WORK/$v-l.out")
    local bwdsite; bwdsite=$(sed -n 's/^bwdsite //p' "$WORK/$v-l.out")
    expect "$v: library wrapper: every launch timed" "$(timed "$v-l" lib_add_kernel)" "(80, 80)"
    # a backward pass on autograd's thread: the user's line is the one the
    # thread waiting in _engine_run_backward called it from
    expect "$v: library wrapper: the library's line beside the user's" "$(pairs "$v-l" lib_add_kernel)" \
        "$(python3 -c "print(sorted([('$libsite', '$(site "$v-l" user_lib)', 20), ('$libsite', '$(site "$v-l" user_deep)', 20), ('$libsite', None, 20), ('$bwdsite', '$(site "$v-l" user_backward)', 20)], key=str))")"
    # 3.12 and 3.13: past the first 16 calls, each frame's code and offset
    # read from the frame itself (the sites above cover those calls)
    local reads=frame_objects
    case $("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])') in 3.12 | 3.13) reads=interpreter_words ;; esac
    expect "$v: call sites read as $reads" "$(rq "$WORK/$v-l.json" 'r["python"]["frame_reads"]')" "$reads"
    expect "$v: library wrapper: its run is the outermost call" "$(rq "$WORK/$v-l.json" '(r["python"]["calls_one_launch"], r["python"]["nested_calls"])')" "(80, 80)"
    # which layer took what: the library's own Python (200 us a call)
    # before it evaluated compiled[grid], part of the call's py->driver
    expect "$v: library wrapper: its own part, every call, within py->driver" "$(rq "$WORK/$v-l.json" \
        '[(l["calls"], 200000 <= l["sum"] // l["calls"], l["sum"] <= p["sum"]) for l, p in [(k("lib_add_kernel")["py_library_ns"], k("lib_add_kernel")["py_to_driver_ns"])]][0]')" \
        "(80, True, True)"
    expect "$v: compiled: no library part" "$(rq "$WORK/$v-c.json" '[n["name"] for n in r["kernels"] if "py_library_ns" in n]')" "[]"
    expect "$v: library wrapper: same output as without trlat" "$(cat "$WORK/$v-l.out")" "$("$py" "$PROG" library 20 2>&1)"

    run "$v-i" inductor 20 "$py" "$@"
    local gensite; gensite=$(sed -n 's/^gensite //p' "$WORK/$v-i.out")
    expect "$v: Inductor: every launch timed" "$(timed "$v-i" triton_poi_fused_add_0)" "(20, 20)"
    expect "$v: Inductor: generated code's line beside the user's" "$(pairs "$v-i" triton_poi_fused_add_0)" \
        "[('$gensite', '$(site "$v-i" user_compiled)', 20)]"
    # FlagGems' generated wrappers (its cache dir, default or set) are a library's too
    local g d; d=$(mktemp -d)
    for g in "" "FLAGGEMS_CACHE_DIR=$d/fg"; do
        run "$v-g" inductor 20 "$py" "$@" PROG_GEN=flaggems $g
        expect "$v: FlagGems' generated code${g:+ (\$FLAGGEMS_CACHE_DIR)}: its line beside the user's" "$(pairs "$v-g" triton_poi_fused_add_0)" \
            "[('$(sed -n 's/^gensite //p' "$WORK/$v-g.out")', '$(site "$v-g" user_compiled)', 20)]"
    done
    expect "$v: Inductor: CachingAutotuner.run is the outermost call" "$(rq "$WORK/$v-i.json" '(r["python"]["calls_one_launch"], r["python"]["nested_calls"])')" "(20, 20)"
    expect "$v: Inductor: its own part, until Triton's launcher" "$(rq "$WORK/$v-i.json" \
        '[(l["calls"], 0 < l["sum"] <= p["sum"]) for l, p in [(k("triton_poi_fused_add_0")["py_library_ns"], k("triton_poi_fused_add_0")["py_to_driver_ns"])]][0]')" "(20, True)"
    # the fast path on this stand-in (no torch) stands aside, and says so once
    local said=""
    [ "$v" = "fast path on" ] && said="trlat: fast path: this Python or Triton is not one it knows (needs CPython 3.11+ with a GIL, Triton 3.6's JITFunction and torch); every call runs through Triton"
    for n in c l i; do
        expect "$v: $n: exit 0, nothing else on stderr" "$(cat "$WORK/$v-$n.rc"):$(cat "$WORK/$v-$n.err")" "0:$said"
    done
}

PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
V=$("$PY" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
check_python "$PY" "$V"

# The CLI: the user's line beside the library's; a merge keeps each pair.
lsite=$(sed -n 's/^libsite //p' "$WORK/$V-l.out")
"$B/trlat" report "$WORK/$V-l.json" >"$WORK/l.txt" 2>&1
expect "trlat report: the library's line (from the user's)" \
    "$(grep -c -F "$lsite (from $(site "$V-l" user_lib))" "$WORK/l.txt"):$(grep -c -F "$lsite (from $(site "$V-l" user_deep))" "$WORK/l.txt")" "1:1"
libsum='(k("lib_add_kernel")["py_library_ns"]["sum"], sum(s.get("library_ns", 0) for s in k("lib_add_kernel")["call_sites"]))'
expect "trlat report: the library's part by user site, and said" \
    "$(grep -cE "Triton's +library's +rest" "$WORK/l.txt"):$(grep -c "^note: 80 calls of 1 kernel came through a library's own KernelInterface.run" "$WORK/l.txt")" "1:1"
expect "the library's part: its sites' sum is the kernel's" "$(rq "$WORK/$V-l.json" "$libsum[0] == $libsum[1] > 0")" True
"$B/trlat" merge "$WORK/$V-l.json" "$WORK/$V-l.json" -o "$WORK/lm.json" >/dev/null 2>&1
expect "trlat merge: the library's part summed" "$(rq "$WORK/lm.json" "$libsum")" \
    "$(rq "$WORK/$V-l.json" "tuple(2 * x for x in $libsum)")"
expect "trlat merge: sites summed by (site, user site)" "$(pairs lm lib_add_kernel)" \
    "$(python3 -c "print(sorted([('$lsite', '$(site "$V-l" user_lib)', 40), ('$lsite', '$(site "$V-l" user_deep)', 40), ('$lsite', None, 40), ('$(sed -n 's/^bwdsite //p' "$WORK/$V-l.out")', '$(site "$V-l" user_backward)', 40)], key=str))")"
check_python "$PY" "fast path on" TRLAT_FASTPATH=1

# Other CPython versions here (3.12 and 3.13 read sites from the running
# interpreter frames once both walks agreed): the same answers.
mapfile -t others < <(other_pythons "$PY")
for OPY in "${others[@]}"; do
    check_python "$OPY" "$("$OPY" -c 'import sys; print("python%d.%d.%d" % sys.version_info[:3])')"
done
