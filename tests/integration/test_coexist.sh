#!/usr/bin/env bash
# Another preloaded library that wraps dlsym (tests/integration/dlsymwrap.c,
# as GPU-sharing shims and other profilers do), before or after trlat in
# LD_PRELOAD: trlat sees every launch the program finds through dlsym or
# cuGetProcAddress, and the other library sees every lookup it saw without
# trlat. Where that library takes glibc's dlsym from libc's own handle and
# comes first, trlat cannot be in the path: it says so, once, naming it.
. "$(dirname "$0")/lib.sh"
W=$B/tests/lib/libdlsymwrap.so MW=$B/tests/lib/libmallocwrap.so N=300

# run NAME PRELOAD MODE [ENV...]
run() {
    local name=$1 pre=$2 mode=$3; shift 3
    timeout 60 env "$@" TRLAT_OUTPUT="$WORK/$name.json" LD_PRELOAD="$pre" "$BIN/launcher" "$mode" $N \
        >"$WORK/$name.out" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.rc"
}
# what the other library saw (all but its count of every lookup: trlat's
# check at load looks one up through a dlsym ahead of it)
wrap_saw() { sed -n 's/^\(dlsymwrap: .*\); all lookups.*/\1/p' "$WORK/$1.err"; }
counts() { # NAME MODE: the launches of the mode's two kernels in the report
    local a=dlsym_ex_kernel b=dlsym_kernel
    [ "$2" = procaddr ] && a=procaddr_kernel b=procaddr_ex_kernel
    if [ -f "$WORK/$1.json" ]; then rq "$WORK/$1.json" "[(x['launches'] if x else 0) for x in (k('$a'), k('$b'))]"
    else echo "no report"; fi
}

for real in v34 v225 libc; do
    for mode in dlsym procaddr; do
        run plain "$W" $mode DLSYMWRAP_REAL=$real
        for order in first after; do
            name=$real-$mode-$order pre="$W $LIB"
            [ $order = after ] && pre="$LIB $W"
            run "$name" "$pre" $mode DLSYMWRAP_REAL=$real
            what="dlsymwrap ($real) $order trlat, $mode"
            expect "$what: the program's output and exit code unchanged" \
                "$(cat "$WORK/$name.rc") $(cat "$WORK/$name.out")" "$(cat "$WORK/plain.rc") $(cat "$WORK/plain.out")"
            expect "$what: the other library sees every lookup and launch" "$(wrap_saw "$name")" "$(wrap_saw plain)"
            said=$(grep -c "trlat: $W wraps dlsym ahead of trlat" "$WORK/$name.err")
            if [ $real = libc ] && [ $order = first ]; then
                expect "$what: cannot be seen, said once with the library's path" "$(counts "$name" $mode) $said" \
                    "no report 1"
            else
                expect "$what: trlat counts every launch" "$(counts "$name" $mode) $said" "[$N, $N] 0"
            fi
        done
    done
done

# A lookup the other library answers NULL: asked of it once, NULL for the
# program, as without trlat.
run hide-plain "$W" dlsym DLSYMWRAP_HIDE=cuLaunchCooperativeKernel
for order in first after; do
    pre="$W $LIB"
    [ $order = after ] && pre="$LIB $W"
    run hide-$order "$pre" dlsym DLSYMWRAP_HIDE=cuLaunchCooperativeKernel
    expect "dlsymwrap $order trlat, hiding an entry point: NULL for the program, asked once" \
        "$(grep -h '^dlsym(cuLaunchCooperativeKernel)' "$WORK/hide-$order.out") $(wrap_saw hide-$order)" \
        "$(grep -h '^dlsym(cuLaunchCooperativeKernel)' "$WORK/hide-plain.out") $(wrap_saw hide-plain)"
done

# RTLD_NEXT keeps meaning "after the caller" through both libraries' dlsym:
# the malloc wrapper last finds glibc's malloc, not its own (it exits 99).
for pre in "$W $LIB $MW" "$LIB $W $MW" "$MW $W $LIB"; do
    for real in v34 libc; do
        run mw "$pre" dlsym DLSYMWRAP_REAL=$real
        expect "RTLD_NEXT through dlsymwrap ($real) and trlat ($(echo "$pre" | sed "s|$B/||g")): runs" \
            "$(cat "$WORK/mw.rc") $(grep -cE 'mallocwrap: [1-9][0-9]* mallocs' "$WORK/mw.err")" "0 1"
    done
done

# Without another library's dlsym, trlat says nothing about it.
run alone "$LIB" dlsym
expect "trlat alone: nothing said about dlsym" "$(grep -c 'wraps dlsym' "$WORK/alone.err")" 0
run plain "$W" dlsym DLSYMWRAP_REAL=libc
run off "$W $LIB" dlsym DLSYMWRAP_REAL=libc TRLAT_DISABLE=1
expect "TRLAT_DISABLE=1: nothing said, the other library sees all" "$(grep -c 'wraps dlsym' "$WORK/off.err") $(
    wrap_saw off)" "0 $(wrap_saw plain)"
