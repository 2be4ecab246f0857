#!/usr/bin/env bash
# The FlagGems decode's open figures in one device call, each part under
# its own timeout and written under $OUT as it ends (a later timeout loses
# nothing before it); a short summary last.
#   [GEMS_PARTS="ab ver phases suites pab ops"] bash scripts/probes/gems_check.sh BUILD [BASE_BUILD]
# ab      ab_bisect.sh: the in-process A/B of BUILD (and BASE_BUILD), the
#         share of Triton-side host time removed and the tokens
# ver     a TRLAT_FASTPATH=verify process: hits checked, mismatches, tokens
# phases  a TRLAT_FASTPATH_PHASES=1 process: where a served LibEntry call goes
# suites  FlagGems' and Liger's op tests off / on / verify (.suites carried)
# pab     profile mode's cost, recording against paused, 60 steps an arm
# ops     gems_ops.py: each op's call with the fast path against paused
# Carry BUILD (and BASE_BUILD), .whl and .fgcache; .suites for suites.
set -u
cd "$(dirname "$0")/../.." || exit 1
b=${1:?BUILD}
base=${2:-}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
. scripts/probes/gpu_env.sh
nvidia-smi -L >"$OUT/gems_device.txt" 2>&1
# one decode process under b, its report and stderr kept
decode() { # name, seconds, env...
    local name=$1 s=$2
    shift 2
    env "$@" TRLAT_OUTPUT="$OUT/gems_$name.json" LD_PRELOAD="$b/libtrlat.so" \
        timeout "$s" python3 tests/gpu/real_models.py gems 30 >"$OUT/gems_$name.txt" 2>&1
    echo "$name: exit $?" >>"$OUT/gems_exits.txt"
}
for part in ${GEMS_PARTS:-ab ver phases}; do
    case $part in
        ab) AB_ROUNDS=1 AB_FLUSHES=1 REAL_AB_TOP=30 timeout 240 bash scripts/probes/ab_bisect.sh gems 30 "$b" ${base:+"$base"} \
            >"$OUT/gems_ab.txt" 2>&1 ;;
        ver) decode ver 90 TRLAT_FASTPATH=verify TRLAT_FASTPATH_DEBUG=1 ;;
        phases) decode phases 90 TRLAT_FASTPATH=1 TRLAT_FASTPATH_DEBUG=1 TRLAT_FASTPATH_PHASES=1 ;;
        suites) BUILD=$b SUITE_S=40 timeout 240 python3 tests/gpu/test_lib_suites.py >"$OUT/gems_suites.txt" 2>&1 ;;
        pab) BUILD=$b REAL_ROUNDS=1 REAL_MODES=pab REAL_WORKLOADS=gems REAL_STEPS=gems:60 \
            timeout 200 python3 tests/gpu/bench_real_models.py >"$OUT/gems_pab.txt" 2>&1 ;;
        ops) LD_PRELOAD=$b/libtrlat.so TRLAT_FASTPATH=1 TRLAT_CUPTI=0 TRLAT_FASTPATH_PHASES=1 \
            timeout 120 python3 scripts/probes/gems_ops.py 6 300 >"$OUT/gems_ops.txt" 2>&1 ;;
        *) echo "gems_check: no part $part" >&2 ;;
    esac
done
cd "$OUT" || exit 1
cat gems_device.txt gems_exits.txt 2>/dev/null
grep -hE '^==|removed|AB_US' gems_ab.txt 2>/dev/null
grep -hE 'served in C|STEP_US|mismatch|hits checked' gems_ver.txt gems_phases.txt 2>/dev/null | cut -c1-300
grep -hE '^(TABLE|FAIL)' gems_suites.txt gems_pab.txt 2>/dev/null | cut -c1-300
grep -hE '×|x ' gems_ops.txt 2>/dev/null | head -20
echo "tokens (count, first 60 characters):"
cat gems_ab.txt gems_ver.txt gems_phases.txt 2>/dev/null | grep '^TOKENS' | cut -c1-60 | sort | uniq -c
