#!/usr/bin/env bash
# CUPTI's cost per launch, and trlat's cost beyond it, on the raw C loop of
# cuLaunchKernelEx (GPU machine). One run, the variants interleaved (their
# order rotates every round):
#   raw        bench_launch N
#   cupti      LD_PRELOAD=libcupti_min.so bench_launch N   (CONCURRENT_KERNEL only)
#   trlat      LD_PRELOAD=libtrlat.so TRLAT_CUPTI=1 bench_launch N   (TRLAT_CUPTI_JOIN=records, the default)
#   trlat_cupti_callback  the same with TRLAT_CUPTI_JOIN=callback
#   trlat_off  LD_PRELOAD=libtrlat.so TRLAT_CUPTI=0 bench_launch N (the interposer alone)
# All CUPTI clients load the same libcupti (TRLAT_CUPTI_LIB). bench_launch
# makes its CUDA context before trlat starts: the records join is known to
# join nothing there (docs/CUPTI.md), the callback join should join all.
#
#   tests/gpu/bench_cupti.sh [BENCH_LAUNCH [N [ROUNDS]]]    defaults: build/tests/gpu/bench_launch 200000 7
#
# Prints each round, then the medians, TABLE lines, and for each join
#   PASS/FAIL trlat with CUPTI (join J) adds <= 300 ns beyond CUPTI itself
#   PASS/FAIL trlat's report (join J) joined every launch with its GPU record
# CUPTI's own cost (cupti - raw) is printed for comparison with FACTS.md (~1.6 us).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-$PWD/build}
BENCH=${1:-$BUILD/tests/gpu/bench_launch}
N=${2:-200000}
ROUNDS=${3:-7}
LIB=${TRLAT_LIB:-$BUILD/libtrlat.so}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

MIN=$BUILD/tests/gpu/libcupti_min.so
if [ ! -f "$MIN" ]; then
    MIN=$TMP/libcupti_min.so
    gcc -std=c11 -D_GNU_SOURCE -O2 -fPIC -shared -I"$CUDA_HOME/include" -o "$MIN" tests/gpu/cupti_min.c -ldl -lpthread ||
        { echo "FAIL build tests/gpu/cupti_min.c"; exit 1; }
fi
if [ -z "${TRLAT_CUPTI_LIB:-}" ]; then
    for c in "$CUDA_HOME/lib64/libcupti.so.13" "$CUDA_HOME/targets/x86_64-linux/lib/libcupti.so.13" \
             /usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13; do
        [ -f "$c" ] && { TRLAT_CUPTI_LIB=$c; break; }
    done
fi
export TRLAT_CUPTI_LIB=${TRLAT_CUPTI_LIB:-}
echo "bench: $BENCH N=$N rounds=$ROUNDS libcupti=${TRLAT_CUPTI_LIB:-(loader search)}"
[ -x "$BENCH" ] || { echo "FAIL no $BENCH (make build/tests/gpu/bench_launch)"; exit 1; }

one() { # one VARIANT -> ns per launch on stdout
    local out
    case $1 in
        raw) out=$("$BENCH" "$N" 2>"$TMP/err") ;;
        cupti) out=$(LD_PRELOAD=$MIN "$BENCH" "$N" 2>"$TMP/err") ;;
        trlat) out=$(TRLAT_CUPTI=1 TRLAT_SUMMARY=0 TRLAT_OUTPUT=$TMP/r.json LD_PRELOAD=$LIB "$BENCH" "$N" 2>"$TMP/err") ;;
        trlat_cupti_callback) out=$(TRLAT_CUPTI=1 TRLAT_CUPTI_JOIN=callback TRLAT_SUMMARY=0 TRLAT_OUTPUT=$TMP/cb.json \
                                   LD_PRELOAD=$LIB "$BENCH" "$N" 2>"$TMP/err") ;;
        trlat_off) out=$(TRLAT_CUPTI=0 TRLAT_SUMMARY=0 TRLAT_OUTPUT=$TMP/off.json LD_PRELOAD=$LIB "$BENCH" "$N" 2>"$TMP/err") ;;
    esac
    local v=${out#ns_per_launch=}
    if [ "$v" = "$out" ] || [ -z "$v" ]; then
        echo "FAIL $1 run: $out $(tail -3 "$TMP/err")" >&2
        echo nan
    else
        echo "$v"
    fi
}

variants=(raw cupti trlat trlat_cupti_callback trlat_off)
nv=${#variants[@]}
declare -A all
for v in "${variants[@]}"; do all[$v]=""; done
for ((r = 0; r < ROUNDS; r++)); do
    line="round $r:"
    for ((i = 0; i < nv; i++)); do
        v=${variants[$(((i + r) % nv))]}
        x=$(one "$v")
        all[$v]="${all[$v]} $x"
        line="$line $v=$x"
        if [ "$v" = trlat ] && [ "$r" = 0 ]; then
            cp "$TMP/r.json" "$TMP/first.json" 2>/dev/null
            grep -h 'trlat:' "$TMP/err" | head -3
        fi
        if [ "$v" = trlat_cupti_callback ] && [ "$r" = 0 ]; then
            cp "$TMP/cb.json" "$TMP/first_cb.json" 2>/dev/null
            grep -h 'trlat:' "$TMP/err" | head -3
        fi
        [ "$v" = cupti ] && [ "$r" = 0 ] && grep -h 'cupti_min' "$TMP/err"
    done
    echo "$line"
done

python3 - "$TMP/first.json" "$TMP/first_cb.json" "$N" "${all[raw]}" "${all[cupti]}" "${all[trlat]}" \
    "${all[trlat_cupti_callback]}" "${all[trlat_off]}" <<'PY'
import json, statistics, sys
paths, n = sys.argv[1:3], int(sys.argv[3])
vals = [[float(x) for x in s.split() if x != "nan"] for s in sys.argv[4:9]]
if any(not v for v in vals):
    print("FAIL some variant produced no number"); sys.exit(1)
raw, cupti, trlat, cb, off = (statistics.median(v) for v in vals)
print(f"medians (ns per launch): raw {raw:.0f}  cupti_min {cupti:.0f}  trlat+CUPTI records join {trlat:.0f}  "
      f"trlat+CUPTI callback join {cb:.0f}  trlat, CUPTI off {off:.0f}")
print(f"CUPTI kernel activity alone: +{cupti - raw:.0f} ns per launch (FACTS.md: ~1600)")
print(f"trlat with CUPTI beyond CUPTI itself: records join {trlat - cupti:+.0f}, callback join {cb - cupti:+.0f} "
      f"ns per launch (budget 300)")
print(f"trlat with CUPTI off: {off - raw:+.0f} ns per launch")
print(f"TABLE cupti_cost raw_ns {raw:.0f} cupti_ns {cupti:.0f} trlat_cupti_ns {trlat:.0f} trlat_off_ns {off:.0f} "
      f"cupti_delta_ns {cupti - raw:.0f} trlat_beyond_cupti_ns {trlat - cupti:.0f}")
print(f"TABLE cupti_cost_callback trlat_cupti_callback_ns {cb:.0f} trlat_callback_beyond_cupti_ns {cb - cupti:.0f} "
      f"callback_minus_records_ns {cb - trlat:.0f}")
for join, t in (("records", trlat), ("callback", cb)):
    print(("PASS" if t - cupti <= 300 else "FAIL") +
          f" trlat with CUPTI (join {join}) adds <= 300 ns beyond CUPTI itself: {t - cupti:+.0f} ns")
joined = {}
for join, path in zip(("records", "callback"), paths):
    try:
        r = json.load(open(path))
        k = max(r["kernels"], key=lambda k: k["launches"])
        g = r.get("gpu") or {}
        total = n + 2000
        ok = (r["config"]["cupti"] == "on" and k["sources"]["driver"] == total and k["sources"]["runtime"] == 0
              and k["gpu_ns"] and k["gpu_ns"]["count"] == total and g.get("joined_by_trlat_id") == total
              and g.get("unjoined_records") == 0 and g.get("lost_join_records", 0) == 0)
        gpu_sum = k["gpu_ns"]["sum"] if k["gpu_ns"] else 0
        share = (k["starved_ns"] or 0) / ((k["starved_ns"] or 0) + gpu_sum) if gpu_sum else 0
        joined[join] = g.get("joined_by_trlat_id")
        print(f"TABLE cupti_join_{join} launches {total} joined {g.get('joined_by_trlat_id')} unjoined "
              f"{g.get('unjoined_records')} lost {g.get('lost_join_records')} starved_launches {k['starved_launches']} "
              f"starved_share {share:.3f}")
        print(("PASS" if ok else "FAIL") + f" trlat's report (join {join}) joined every launch with its GPU record:"
              f" cupti={r['config']['cupti']} reason={r['config']['cupti_reason']} {k['name']} launches={k['launches']}"
              f" sources={k['sources']} gpu_count={k['gpu_ns'] and k['gpu_ns']['count']}"
              f" gpu_p50={k['gpu_ns'] and k['gpu_ns']['p50']}ns gpu section={g}")
    except Exception as e:
        print(f"FAIL trlat's report (join {join}) unreadable: {e}")
PY
