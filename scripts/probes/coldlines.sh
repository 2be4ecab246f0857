#!/usr/bin/env bash
# Cache lines a fast-path hit touches cold (docs/BENCHMARKS.md, "where a hit's margin goes", 2026-11-30):
# the stand-in Triton, torch's CPU tensors and the fake driver under
# callgrind's cache simulation, the fake driver writing a 256 KB buffer per
# launch (FAKE_CUDA_EVICT_KB) so that, as after the real driver's ~4 us
# launch, nothing of the caller's is left in L1; D1 misses counted inside
# the C launcher's call, the C __getitem__ and the launcher's dealloc, per
# call, by module and by function (the fake driver's own sweep left out).
#   [PYTHON=<a Python with torch>] [TRLAT_LIB=<libtrlat.so>] bash scripts/probes/coldlines.sh [hit_nop_with_args|hit_nop0] [data|code]
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/build/tests/fake TRLAT_SUMMARY=0 TRLAT_CUPTI=0 TRLAT_FASTPATH=1 \
    TRLAT_OUTPUT=/tmp/trlat-probe.json PYTHONHASHSEED=0 FAKE_CUDA_EVICT_KB=256
probe=${1:-hit_nop_with_args}
what=${2:-data}  # code: I1 misses, the fake driver also running 64 KB of code per launch
[ "$what" = code ] && export FAKE_CUDA_EVICT_CODE_KB=64
out=$(mktemp)
LD_PRELOAD=${TRLAT_LIB:-$PWD/build/libtrlat.so} valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file="$out" \
    '--toggle-collect=launcher_call*' '--toggle-collect=getitem*' '--toggle-collect=launcher_dealloc*' \
    "${PYTHON:-python3}" "scripts/probes/$probe.py" 20000 >/dev/null 2>&1
python3 scripts/probes/coldlines_report.py "$out" 20100 30 "$what"
rm -f "$out"
