#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test trlat.
# Idempotent; run as root (or with sudo available). Packages only: nothing is
# downloaded outside the distribution's and PyPI's registries.
set -euo pipefail

pkgs=(build-essential pkg-config check libsubunit-dev libunwind-14-dev libjansson-dev
      python3 python3-venv cmake g++ clang libclang-rt-dev clang-format)
# python3-venv, cmake: the wheel's build (pip install ., scripts/check-wheel.sh)
# libunwind-14-dev: LLVM's libunwind.a is PIC and goes into libtrlat.so (it
# replaces libunwind-dev, whose archive is not PIC).
# The HTML report test renders the page in headless Chromium.
[ "${TRLAT_DEPS_NO_BROWSER:-0}" = 1 ] || pkgs+=(chromium)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# CUDA headers (cuda.h, cupti*.h) are needed to build; the driver is not.
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$CUDA_HOME/include/cuda.h" ]; then
    echo "install-deps: $CUDA_HOME/include/cuda.h not found; installing CUDA headers from PyPI" >&2
    python3 -m pip install -q --disable-pip-version-check nvidia-cuda-runtime nvidia-cuda-cupti
fi
