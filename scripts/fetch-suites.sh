#!/usr/bin/env bash
# Fetches the libraries' own op tests that tests/gpu/test_lib_suites.py runs
# into .suites/ (git-ignored; carry it to the GPU machine with the build):
# Liger-Kernel's test/ from its 0.8.5 source distribution on PyPI (the
# version of the carried wheel), FlagGems' tests/ from its repository
# (FLAGGEMS_GIT, a URL or a local clone; FLAGGEMS_REV, the commit), since
# FlagGems publishes no source distribution.
set -eu
cd "$(dirname "$0")/.."
FLAGGEMS_GIT=${FLAGGEMS_GIT:-https://github.com/FlagOpen/FlagGems}
FLAGGEMS_REV=${FLAGGEMS_REV:-532ff438}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf .suites && mkdir -p .suites/liger .suites/flaggems
python3 -m pip download -q --no-deps --no-binary=:all: -d "$tmp" liger-kernel==0.8.5
tar -xzf "$tmp"/liger_kernel-0.8.5.tar.gz -C "$tmp"
cp -r "$tmp"/liger_kernel-0.8.5/test .suites/liger/
rm -rf .suites/liger/test/resources # datasets for its convergence tests, not run
git clone -q --no-checkout "$FLAGGEMS_GIT" "$tmp/fg"
git -C "$tmp/fg" archive "$FLAGGEMS_REV" tests | tar -x -C .suites/flaggems
du -sh .suites
