#!/usr/bin/env bash
# A driver shim under trlat whose launch entry point calls another exported
# launch entry point by name (tests/integration/nestshim.c): the inner call
# enters trlat's wrapper again on the same thread, inside the outer one's
# driver call. Each launch is counted once, by the outer wrapper (the call
# the program made), on the common and the slow variant and with CUPTI.
. "$(dirname "$0")/lib.sh"
NEST=$B/tests/nestshim

# run NAME SHIMDIR MODE N [ENV...]: the launcher with SHIMDIR's libcuda.so.1
# in front of the fake driver
run() {
    local name=$1 dir=$2 mode=$3 n=$4; shift 4
    timeout 60 env "$@" LD_LIBRARY_PATH="$NEST/$dir:$LD_LIBRARY_PATH" TRLAT_OUTPUT="$WORK/$name.json" LD_PRELOAD=$LIB \
        "$BIN/launcher" "$mode" "$n" >"$WORK/$name.out" 2>"$WORK/$name.err"
}
# seen NAME KERNEL: launches in the report, what the driver and the shim saw
seen() {
    local drv
    drv=$(awk '$1 == "driver" && ($2 == "cuLaunchKernel" || $2 == "cuLaunchKernel_ptsz") { printf "%s=%s ", $2, $3 }' \
        "$WORK/$1.out")
    echo "$(rq "$WORK/$1.json" "k('$2')['launches']") $drv$(grep -h '^nestshim:' "$WORK/$1.err")"
}

run p ptsz direct_ptsz 1000
expect "shim's _ptsz calls cuLaunchKernel: counted once" "$(seen p direct_ptsz_kernel)" \
    "1000 cuLaunchKernel=1000 cuLaunchKernel_ptsz=0 nestshim: 1000 launches"
expect "nested: driver_ns has one value per launch" \
    "$(rq "$WORK/p.json" 'k("direct_ptsz_kernel")["driver_ns"]["count"]')" 1000
run l legacy direct 1000
expect "shim's cuLaunchKernel calls _ptsz: counted once" "$(seen l direct_kernel)" \
    "1000 cuLaunchKernel=0 cuLaunchKernel_ptsz=1000 nestshim: 1000 launches"

# The slow variant (trace events): one event per launch.
run pt ptsz direct_ptsz 300 TRLAT_TRACE=1000
expect "nested, slow variant: counted once, one event each" "$(seen pt direct_ptsz_kernel) $(rq "$WORK/pt.json" \
    'len([e for e in r["events"] if e["kind"] == "launch"])')" \
    "300 cuLaunchKernel=300 cuLaunchKernel_ptsz=0 nestshim: 300 launches 300"

# CUPTI's callback runs in the innermost driver call and still takes the
# outer launch's entry time: every kernel record joins its launch.
run pc ptsz direct_ptsz 500 TRLAT_CUPTI=1 TRLAT_CUPTI_LIB="$B/tests/fake/libcupti_fake.so" \
    FAKE_CUPTI_KERNEL=direct_ptsz_kernel
expect "nested, CUPTI: counted once, each joined by trlat's id" "$(seen pc direct_ptsz_kernel) $(rq "$WORK/pc.json" \
    '(k("direct_ptsz_kernel")["gpu_ns"]["count"], r["gpu"]["joined_by_trlat_id"])')" \
    "500 cuLaunchKernel=500 cuLaunchKernel_ptsz=0 nestshim: 500 launches (500, 500)"

# Launches past the shim: recorded as usual.
run d ptsz direct 200
expect "shim loaded, launches that do not nest: counted as usual" "$(seen d direct_kernel)" \
    "200 cuLaunchKernel=200 cuLaunchKernel_ptsz=0 nestshim: 0 launches"

# The same shims preloaded after trlat: the program's call by name reaches
# the shim through trlat's wrapper (which forwards to the next definition,
# as the call would without trlat), and the shim's inner call trlat's again.
prerun() { # NAME SHIM MODE N
    timeout 60 env TRLAT_OUTPUT="$WORK/$1.json" LD_PRELOAD="$LIB $B/tests/lib/libnestshim_$2.so" \
        "$BIN/launcher" "$3" "$4" >"$WORK/$1.out" 2>"$WORK/$1.err"
}
prerun ap ptsz direct_ptsz 400
expect "preloaded shim's _ptsz calls cuLaunchKernel: not bypassed, counted once" "$(seen ap direct_ptsz_kernel)" \
    "400 cuLaunchKernel=400 cuLaunchKernel_ptsz=0 nestshim: 400 launches"
prerun al legacy direct 400
expect "preloaded shim's cuLaunchKernel calls _ptsz: not bypassed, counted once" "$(seen al direct_kernel)" \
    "400 cuLaunchKernel=0 cuLaunchKernel_ptsz=400 nestshim: 400 launches"
