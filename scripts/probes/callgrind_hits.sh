#!/usr/bin/env bash
# Instructions per fast-path call on the CPU machine (docs/BENCHMARKS.md,
# "four last hits; a sampler"): the stand-in Triton, torch's CPU tensors and the fake driver
# under callgrind, counted inside the C launcher's call (launcher_call, warm-up
# calls included), then the ns per call of the same probes without valgrind.
#   [PYTHON=<a Python with torch>] [TRLAT_LIB=<libtrlat.so>] bash scripts/probes/callgrind_hits.sh   (after make test-build)
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/build/tests/fake TRLAT_SUMMARY=0 TRLAT_CUPTI=0 TRLAT_FASTPATH=1 TRLAT_OUTPUT=/tmp/trlat-probe.json
py=${PYTHON:-python3}
lib=${TRLAT_LIB:-$PWD/build/libtrlat.so} # another build to compare
# PROBE N CALLS [the function counted inside: the JIT launcher's, or the
# compiled[grid] runner's; ARG]
for p in "hit_nop_with_args 20000 20100" "hit_nop0 20000 20100" "decode_fake 200 4000" \
    "hit_compiled 20000 20100 runner_call" "hit_compiled 20000 20100 launcher_call jit"; do
    set -- $p
    out=$(mktemp)
    LD_PRELOAD=$lib valgrind --tool=callgrind --callgrind-out-file="$out" "--toggle-collect=${4:-launcher_call}*" \
        "$py" "scripts/probes/$1.py" "$2" 1 $5 >/dev/null 2>&1
    ir=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    rm -f "$out"
    echo "$1${5:+ $5}: $ir instructions in $3 calls, $((ir / $3)) per call"
done
for i in 1 2; do
    LD_PRELOAD=$lib "$py" scripts/probes/hit_nop_with_args.py 200000 | sed 's/^/nop_with_args /'
    LD_PRELOAD=$lib "$py" scripts/probes/hit_nop0.py 200000 | sed 's/^/nop0 /'
    LD_PRELOAD=$lib "$py" scripts/probes/decode_fake.py 200 | sed 's/^/decode /'
done
