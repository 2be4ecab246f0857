#!/usr/bin/env bash
# The library built with ASan and UBSan ($BUILD/san/libtrlat.so), preloaded
# into the launchers: threads, fork, every route, exit from a thread; with
# the fake libcupti, the join of kernels with launches.
. "$(dirname "$0")/lib.sh"
SAN=$B/san/libtrlat.so
ASAN=$(${CC:-cc} -print-file-name=libasan.so)
[ -f "$SAN" ] || { fail "sanitized build" "$SAN missing (make test-build)"; exit 0; }
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=86 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for mode in threads fork procaddr procaddr_ptds dlsym library unnamed exit_thread churn; do
    TRLAT_TRACE=100 TRLAT_OUTPUT="$WORK/san-%p.json" LD_PRELOAD="$ASAN $SAN" "$BIN/launcher" $mode 3000 \
        >"$WORK/o" 2>"$WORK/e"; rc=$?
    if [ $rc -eq 0 ] && ! grep -qE 'ERROR: AddressSanitizer|runtime error' "$WORK/e"; then
        ok "ASan+UBSan: launcher $mode"
    else
        fail "ASan+UBSan: launcher $mode" "exit $rc: $(grep -m3 -E 'ERROR|runtime error|SUMMARY' "$WORK/e" | tr '\n' ' ')"
    fi
done
# With CUPTI (the fake libcupti), without and with trace events (the slow
# launch variant); thread churn adopts join rings.
for ctx in 0 1; do
    for mode in threads churn exit_thread; do
        TRLAT_CUPTI=1 TRLAT_CUPTI_LIB=$B/tests/fake/libcupti_fake.so TRLAT_TRACE=$((ctx * 100)) \
            TRLAT_OUTPUT="$WORK/san-%p.json" LD_PRELOAD="$ASAN $SAN" "$BIN/launcher" $mode 3000 >"$WORK/o" 2>"$WORK/e"; rc=$?
        if [ $rc -eq 0 ] && ! grep -qE 'ERROR: AddressSanitizer|runtime error' "$WORK/e"; then
            ok "ASan+UBSan, CUPTI (trace=$ctx): launcher $mode"
        else
            fail "ASan+UBSan, CUPTI (trace=$ctx): launcher $mode" "exit $rc: $(grep -m3 -E 'ERROR|runtime error|SUMMARY' "$WORK/e" | tr '\n' ' ')"
        fi
    done
done
# The fast path's hits (the stand-in Triton on the fake driver): replays
# through the launch hooks (with the launch log), through
# the wrapper's common variant (without), and counted, not timed.
PROG=$ROOT/tests/fastpath/prog.py
TRLAT_FASTPATH=0 python3 "$PROG" corpus 4 >"$WORK/plain.out" 2>/dev/null
for how in log direct untimed; do
    env $([ $how = log ] && echo TRLAT_FASTPATH_LOG="$WORK/san.log") $([ $how = untimed ] && echo TRLAT_TIMING=none) \
        TRLAT_FASTPATH=1 TRLAT_OUTPUT="$WORK/san-fp-$how.json" LD_PRELOAD="$ASAN $SAN" python3 "$PROG" corpus 4 \
        >"$WORK/o" 2>"$WORK/e"; rc=$?
    if [ $rc -eq 0 ] && ! grep -qE 'ERROR: AddressSanitizer|runtime error' "$WORK/e" && cmp -s "$WORK/o" "$WORK/plain.out"; then
        ok "ASan+UBSan: fast path corpus ($how)"
    else
        fail "ASan+UBSan: fast path corpus ($how)" "exit $rc: $(grep -m3 -E 'ERROR|runtime error|SUMMARY' "$WORK/e" | tr '\n' ' ')"
    fi
    expect "ASan+UBSan: fast path corpus ($how) hit" "$(rq "$WORK/san-fp-$how.json" 'sum(k["fastpath"]["hits"] for k in r["kernels"] if k["fastpath"]) > 100')" True
done
# the launcher memo (compiled kernels launched directly), verify mode too
TRLAT_FASTPATH=0 python3 "$PROG" compiled 8 >"$WORK/cplain.out" 2>/dev/null
for fp in 1 verify; do
    TRLAT_FASTPATH=$fp TRLAT_OUTPUT="$WORK/san-cfp-$fp.json" LD_PRELOAD="$ASAN $SAN" python3 "$PROG" compiled 8 \
        >"$WORK/o" 2>"$WORK/e"; rc=$?
    if [ $rc -eq 0 ] && ! grep -qE 'ERROR: AddressSanitizer|runtime error' "$WORK/e" && cmp -s "$WORK/o" "$WORK/cplain.out"; then
        ok "ASan+UBSan: compiled kernels ($fp)"
    else
        fail "ASan+UBSan: compiled kernels ($fp)" "exit $rc: $(grep -m3 -E 'ERROR|runtime error|SUMMARY' "$WORK/e" | tr '\n' ' ')"
    fi
    expect "ASan+UBSan: compiled kernels ($fp) hit" "$(rq "$WORK/san-cfp-$fp.json" 'k("add_kernel")["fastpath"]["hits"]')" 86
done
# FlagGems' LibEntry.run served in C (fastpath/libentry.c), verify mode too
TRLAT_FASTPATH=0 python3 "$PROG" libentry 6 >"$WORK/lplain.out" 2>/dev/null
for fp in 1 verify; do
    TRLAT_FASTPATH=$fp TRLAT_FASTPATH_DEBUG=1 TRLAT_OUTPUT="$WORK/san-lfp-$fp.json" \
        LD_PRELOAD="$ASAN $SAN" python3 "$PROG" libentry 6 >"$WORK/o" 2>"$WORK/le-$fp"; rc=$?
    if [ $rc -eq 0 ] && ! grep -qE 'ERROR: AddressSanitizer|runtime error' "$WORK/le-$fp" && cmp -s "$WORK/o" "$WORK/lplain.out"; then
        ok "ASan+UBSan: LibEntry in C ($fp)"
    else
        fail "ASan+UBSan: LibEntry in C ($fp)" "exit $rc: $(grep -m3 -E 'ERROR|runtime error|SUMMARY' "$WORK/le-$fp" | tr '\n' ' ')"
    fi
done
# One prog.py workload under the sanitizers with the fast path on: it runs
# clean, prints what it prints without trlat, and its debug lines say WANT.
san_workload() { # NAME MODE TAG WANT
    TRLAT_FASTPATH=0 python3 "$PROG" "$2" 6 >"$WORK/$3plain.out" 2>/dev/null
    TRLAT_FASTPATH=1 TRLAT_FASTPATH_DEBUG=1 TRLAT_OUTPUT="$WORK/san-$3fp.json" \
        LD_PRELOAD="$ASAN $SAN" python3 "$PROG" "$2" 6 >"$WORK/o" 2>"$WORK/$3e"; rc=$?
    if [ $rc -eq 0 ] && ! grep -qE 'ERROR: AddressSanitizer|runtime error' "$WORK/$3e" &&
        cmp -s "$WORK/o" "$WORK/$3plain.out" && grep -qF "$4" "$WORK/$3e"; then
        ok "ASan+UBSan: $1"
    else
        fail "ASan+UBSan: $1" "exit $rc: $(grep -m3 -E 'ERROR|runtime error|SUMMARY|fast path' "$WORK/$3e" | tr '\n' ' ')"
    fi
}
# data_ptr() methods read as their attribute, and LibEntry's key reads
# taken by its launch (fastpath/getter.c)
san_workload "data_ptr getters" getters g 'data_ptr read as the attribute'
san_workload "LibEntry's key reads taken by its launch" libentry_reads r '16 data_ptr() reads of the key taken'
# LibEntry's first-call path raced by four threads (fastpath/libentry_first.c)
san_workload "LibEntry's first calls in threads" libentry_threads t 'of its first-call paths'
expect "ASan+UBSan: LibEntry in C, calls served" "$(grep -o '[0-9]* calls of FlagGems.*first-call paths' "$WORK/le-1" | sed 's/ (.*), and/,/')" "98 calls of FlagGems' LibEntry.run were served in C, 48 of its first-call paths"
n=$(python3 -c "import json,glob; print(sum(json.load(open(f))['totals']['launches'] for f in glob.glob('$WORK/san-*.json')))")
expect "ASan+UBSan: reports written and parsable" "$([ "$n" -gt 0 ] && echo yes)" yes
