#!/usr/bin/env bash
# The pip path, as a new user takes it: a clean virtual environment,
# `pip install <repo>`, then `trlat run -- python ...` and `import trlat` in
# it, launching on the fake driver (build/tests/fake, made by `make test`).
# Needs PyPI (the build backend, scikit-build-core). Prints ok/FAIL lines.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FAKE=$ROOT/${BUILD:-build}/tests/fake
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0
check() { if [ "$2" = "$3" ]; then echo "ok   wheel: $1"; else echo "FAIL wheel: $1: got '$2', expected '$3'"; failed=1; fi; }

python3 -m venv "$WORK/venv" || { echo "FAIL wheel: python3 -m venv"; exit 1; }
if ! "$WORK/venv/bin/pip" install -q --disable-pip-version-check "$ROOT" >"$WORK/pip.log" 2>&1; then
    echo "FAIL wheel: pip install $ROOT"; tail -20 "$WORK/pip.log"; exit 1
fi
[ -f "$FAKE/libcuda.so.1" ] || { echo "FAIL wheel: no fake driver at $FAKE (run make test first)"; exit 1; }
cd "$WORK" && mkdir run && cd run
LD_LIBRARY_PATH=$FAKE TRLAT_CUPTI=0 TRLAT_SUMMARY=0 "$WORK/venv/bin/trlat" run -- "$WORK/venv/bin/python" -c '
import ctypes, trlat
cuda = ctypes.CDLL("libcuda.so.1")
f = ctypes.c_void_p()
cuda.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), b"wheel_kernel")
for _ in range(7):
    cuda.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, None, None)
print("api", trlat.active(), trlat.flush() == trlat.report_path() != None)
' >"$WORK/run.out" 2>"$WORK/run.err"
check "trlat run -- python ...: exit 0" "$?" 0
check "import trlat inside: the API answers" "$(cat "$WORK/run.out")" "api True True"
check "the report appeared, every launch in it" \
    "$(ls trlat-*.json 2>/dev/null | wc -l):$(python3 -c 'import json,glob; r=json.load(open(glob.glob("trlat-*.json")[0])); print([k["launches"] for k in r["kernels"] if k["name"] == "wheel_kernel"])' 2>&1)" "1:[7]"
check "python -m trlat --version" "$("$WORK/venv/bin/python" -m trlat --version 2>&1)" "trlat 0.1.0"
check "the installed CLI needs no jansson" "$(ldd "$WORK"/venv/lib/python3*/site-packages/trlat/_bin/trlat | grep -c jansson)" 0
check "without trlat loaded: NotLoaded" "$("$WORK/venv/bin/python" -c 'import trlat
try:
    trlat.pause()
except trlat.NotLoaded:
    print("NotLoaded")')" NotLoaded
exit $failed
