#!/usr/bin/env bash
# Builds $BUILD/libtrlat.so (default build/) with GCC's profile feedback:
# an instrumented library first runs fast-path hits and misses on the fake
# driver, then the library is built again from what they counted, the
# blocks a hit runs laid out together and the rest moved out of their way.
# A hit's code follows a ~4 us driver call that has pushed it out of the
# instruction cache; laid out this way it spans fewer lines
# (docs/BENCHMARKS.md, "the replay block and make pgo", 2026-11-30). Code no training run reaches is
# optimized as without a profile (-fprofile-partial-training).
#   [PGO_PYTHON=<Python 3.12+; with torch 2.11, its tensor reads are trained too (CPU tensors)>] \
#   [BUILD=build] bash scripts/pgo-build.sh          (make pgo)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(realpath -m "${BUILD:-build}")
W=$B/pgo # the profiled build's own tree: the counts are named after its objects
PY=${PGO_PYTHON:-python3}
J=$(nproc)

"${CC:-cc}" -v 2>&1 | grep -q '^gcc version' ||
    { echo "pgo-build: ${CC:-cc} is not GCC (the profile flags are GCC's)" >&2; exit 1; }
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 12))' ||
    { echo "pgo-build: $PY is older than 3.12 (the fast path's last-hit path is not trained)" >&2; exit 1; }
# whether the toolchain links with -flto, probed once for the makes below
LTO=${LTO-$(make -s lto-flags)}
export LTO
make -s -j"$J" BUILD="$B" "$B/tests/fake/libcuda.so.1" "$B/tests/fake/c10/libc10_cuda.so" "$B/tests/bin/launcher"
rm -rf "$W"
make -s -j"$J" BUILD="$W" OPT="-O2 -fprofile-generate -fprofile-update=atomic" "$W/libtrlat.so"

# Training: the hits the GPU benchmark measures, as far as the CPU gets.
export LD_LIBRARY_PATH=$B/tests/fake TRLAT_SUMMARY=0 TRLAT_CUPTI=0 TRLAT_FASTPATH=1 \
    TRLAT_OUTPUT=$W/train.json
train() { LD_PRELOAD=$W/libtrlat.so "$@" >/dev/null; }
# the stand-in Triton and torch (tests/fastpath): the corpus (misses,
# captures, fallbacks), the lambda-grid loop, and the device and stream
# through the stand-in libc10_cuda (the GPU machine reads them so)
train "$PY" tests/fastpath/prog.py corpus 4
for c10 in "" "$B/tests/fake/c10/libc10_cuda.so"; do
    FAKE_C10_LIB=$c10 train "$PY" tests/fastpath/prog.py loop 20000
    FAKE_C10_LIB=$c10 train "$PY" tests/fastpath/prog.py lastcall 200
done
# torch's own tensors (tensor_direct.c reads their structs) with the
# stand-in Triton: scripts/probes
if "$PY" -c 'import torch, sys; sys.exit(not torch.__version__.startswith("2.11"))' 2>/dev/null; then
    train "$PY" scripts/probes/hit_nop_with_args.py 100000
    train "$PY" scripts/probes/hit_nop0.py 100000
    train "$PY" scripts/probes/decode_fake.py 200
else
    echo "pgo-build: no torch 2.11 in $PY: torch's tensor reads are not trained" >&2
fi

# the profile's own launch path, fast path off: every launch of a program
# that is not a hit goes through the wrapper (trained by a C loop's launches
# through each exported route, in proportion to a hit's weight above:
# without them the wrapper's record and clock reads were laid out as cold
# code, 233 instructions per launch instead of 203)
for route in direct_ex direct dlsym procaddr_ptds; do
    TRLAT_FASTPATH=0 train "$B/tests/bin/launcher" "$route" 200000
done

find "$W/obj" -name '*.o' -delete
rm -f "$W/libtrlat.so"
# interpose/handles.c without the profile: GCC warns, with no option to
# silence it (and -Werror), about its untrained wrappers' clones
make -s BUILD="$W" OPT=-O2 "$W/obj/interpose/handles.o"
make -s -j"$J" BUILD="$W" OPT="-O2 -fprofile-use -fprofile-partial-training -Wno-missing-profile" "$W/libtrlat.so"
make -s -j"$J" BUILD="$B" "$B/share/trlat/pyhook.py" "$B/share/trlat/gridcheck.py" "$B/share/trlat/libentry_model.py"
cp "$W/libtrlat.so" "$B/libtrlat.so"
echo "pgo-build: $B/libtrlat.so built with profile feedback"
