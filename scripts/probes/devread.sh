#!/usr/bin/env bash
# On the GPU machine: what the current device and stream cost to read, in a
# tight loop after torch made its CUDA context (devread.c: cuCtxGetCurrent,
# cuCtxGetDevice, cudaGetDevice, c10::cuda::GetDevice, getCurrentCUDAStream,
# the GIL released and taken back, ...), and where torch 2.11's libc10_cuda
# keeps the target device GetDevice answers first (its .symtab, GetDevice's
# code). docs/FASTPATH.md "The current device" cites its output.
#   bash scripts/probes/devread.sh
set -x
cd "$(dirname "$0")"
TL=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib
PYINC=$(python3 -c 'import sysconfig;print(sysconfig.get_paths()["include"])')
gcc -O2 -shared -fPIC -I"$PYINC" devread.c -o /tmp/devread.so -ldl && python3 devread.py /tmp/devread.so
readelf -sW "$TL/libc10_cuda.so" | grep -iE 'target|TLS' | head -20
objdump -d --no-show-raw-insn "$TL/libc10_cuda.so" | awk '/<_ZN3c104cuda9GetDeviceEPa>:/,/^$/' | head -30
