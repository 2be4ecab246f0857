#!/usr/bin/env bash
# Downloads the wheels the GPU suites need beyond the GPU machine's image
# (Liger-Kernel, FlagGems and what FlagGems needs that the image lacks) into
# .whl/ for Python 3.12 on x86-64; scripts/gpu-test.sh installs them there.
# Carry .whl with the build (it is git-ignored).
set -eu
cd "$(dirname "$0")/.."
mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl \
    liger-kernel==0.8.5 flag-gems==5.0.2 sqlalchemy==2.0.48 greenlet==3.5.6
ls .whl
