#!/usr/bin/env bash
# Scale: kernels, modules, threads and launches at the size of real jobs.
# Each case must exit normally under a timeout, count exactly, and stay
# within the memory bound README states (about 10 KB per kernel per
# launching thread, 14 KB per kernel while the report is written).
source "$(dirname "$0")/lib.sh"
SCALE=$BIN/scale

# run_scale TAG ARGS...: runs scale under trlat; sets rc, rss_kb (the
# process's peak RSS, report writing included) and report.
run_scale() {
    local tag=$1
    shift
    rm -f trlat-*.json
    LD_PRELOAD=$LIB timeout 120 "$SCALE" "$@" >"$tag.out" 2>"$tag.err"
    rc=$?
    rss_kb=$(awk '/^peak_rss_kb/ {print $2}' "$tag.err")
    rss_kb=${rss_kb:-999999999}
    report=$(report_of "trlat-*.json")
}

# check TAG LAUNCHES KERNELS MAX_RSS_KB
check() {
    if [ "$rc" != 0 ]; then
        fail "$1" "exit $rc (124: did not finish in 120 s); stderr: $(head -c 300 "$1.err")"
        return
    fi
    if [ -z "$report" ]; then
        fail "$1" "no report"
        return
    fi
    expect "$1 launches" "$(rq "$report" 'r["totals"]["launches"]')" "$2"
    expect "$1 kernels" "$(rq "$report" 'r["totals"]["kernels"]')" "$3"
    expect "$1 launches by kernel add up" "$(rq "$report" 'sum(k["launches"] for k in r["kernels"])')" "$2"
    if [ "$rss_kb" -le "$4" ]; then
        ok "$1 rss ${rss_kb} KB <= $4 KB"
    else
        fail "$1 rss" "${rss_kb} KB > $4 KB"
    fi
}

# distinct kernels: the report's name index used to be rebuilt at 256
# slots whatever the count, and its probe loop never ended past that
for k in 1 256 257 4096; do
    run_scale kernels$k kernels $k 3
    check "kernels $k" $((3 * k)) $k $((4096 + 24 * k))
    expect "kernels $k each launched 3 times" "$(rq "$report" 'sorted({x["launches"] for x in r["kernels"]})')" "[3]"
done

# past the per-thread table (4096 kernels) the rest are "(other)", said once
run_scale kernels100k kernels 100000 2
if [ "$rc" = 0 ] && [ -n "$report" ]; then
    expect "kernels 100000 launches" "$(rq "$report" 'r["totals"]["launches"]')" 200000
    expect "kernels 100000 all counted" "$(rq "$report" 'sum(k["launches"] for k in r["kernels"])')" 200000
    n=$(rq "$report" 'len(r["kernels"])')
    # 4096 slots, "(other)", and launches still in the last record batch
    if [ "$n" -ge 4097 ] && [ "$n" -le $((4097 + 256)) ]; then ok "kernels 100000 bounded entries ($n)"
    else fail "kernels 100000 bounded entries" "$n"; fi
    expect "kernels 100000 other" "$(rq "$report" 'k("(other)") is not None and k("(other)")["launches"] > 180000')" True
    expect "kernels 100000 said once" "$(grep -c 'more distinct kernels than trlat keeps' kernels100k.err)" 1
    expect "kernels 100000 names said once" "$(grep -c 'more than 57344 kernel handles' kernels100k.err)" 1
    [ "$rss_kb" -le 262144 ] && ok "kernels 100000 rss ${rss_kb} KB" || fail "kernels 100000 rss" "$rss_kb KB"
else
    fail "kernels 100000" "exit $rc; $(head -c 300 kernels100k.err)"
fi

run_scale modules modules 1000
check "modules 1000" 1000 1000 $((4096 + 24 * 1000))

# short-lived threads: an exited thread's state is adopted by the next
run_scale threads threads 100000
check "threads 100000" 100000 1 4096
threads=$(rq "$report" 'r["totals"]["threads"]')
[ "${threads:-999}" -le 65 ] && ok "threads 100000 states reused ($threads)" || fail "threads 100000 states" "$threads"

run_scale launches launches 100000000
check "launches 100M" 100000000 1 4096

run_scale mt mt 8 2000000
check "threads 8 x 2M" 16000000 1 4096
expect "threads 8 x 2M threads" "$(rq "$report" 'r["totals"]["threads"]')" 8
