#!/usr/bin/env bash
# make demo: a small workload under trlat, then the report.
# Real Triton kernels on a GPU when one and Triton are there; otherwise the
# fake driver of the tests, and the output says plainly it is simulated.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LIB=$PWD/$BUILD/libtrlat.so
OUTDIR=$(mktemp -d /tmp/trlat-demo-XXXXXX)

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   python3 -c 'import torch, triton; assert torch.cuda.is_available()' >/dev/null 2>&1; then
    echo "== trlat demo: real Triton kernels on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
    TRLAT_OUTPUT=$OUTDIR/demo.json LD_PRELOAD=$LIB python3 tests/gpu/workloads.py mix
    TRLAT_OUTPUT=$OUTDIR/nop.json LD_PRELOAD=$LIB python3 tests/gpu/workloads.py nop 5000
    REPORT=$OUTDIR/nop.json
else
    echo "== trlat demo: SIMULATED (no GPU with Triton here): the tests' fake libcuda,"
    echo "   each launch spinning 3 us as a driver would; Triton, Python and GPU times are absent."
    export LD_LIBRARY_PATH=$PWD/$BUILD/tests/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    TRLAT_OUTPUT=$OUTDIR/demo.json FAKE_CUDA_LAUNCH_NS=3000 LD_PRELOAD=$LIB \
        "$BUILD/tests/bin/launcher" dlsym 20000 >/dev/null
    REPORT=$OUTDIR/demo.json
fi
echo
echo "== trlat report $REPORT"
"$BUILD/trlat" report "$REPORT" --top 5
echo
echo "(reports kept in $OUTDIR)"
