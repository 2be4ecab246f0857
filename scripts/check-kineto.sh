#!/usr/bin/env bash
# `trlat trace --format kineto` read by a real consumer: HolisticTraceAnalysis
# (from PyPI, in a virtual environment of its own) loads the traces of the
# CLI fixtures and computes its kernel-launch statistics, which
# tests/cli/check_hta.py compares with the reports. Needs PyPI and the
# built CLI (build/trlat). Prints ok/FAIL lines.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRLAT=$ROOT/${BUILD:-build}/trlat
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv" || { echo "FAIL kineto: python3 -m venv"; exit 1; }
# HTA without its notebook and test dependencies (jupyterlab, pytest): what
# its trace analysis imports
if ! "$WORK/venv/bin/pip" install -q --disable-pip-version-check --no-deps HolisticTraceAnalysis==0.5.0 \
        >"$WORK/pip.log" 2>&1 ||
    ! "$WORK/venv/bin/pip" install -q --disable-pip-version-check numpy pandas networkx plotly pydot ijson pyyaml \
        psutil >>"$WORK/pip.log" 2>&1; then
    echo "FAIL kineto: pip install HolisticTraceAnalysis"; tail -20 "$WORK/pip.log"; exit 1
fi
cd "$WORK" && "$WORK/venv/bin/python" "$ROOT/tests/cli/check_hta.py" "$TRLAT" \
    "$ROOT/tests/cli/fixtures/basic.json" "$ROOT/tests/cli/fixtures/hooked0.json" "$ROOT/tests/cli/fixtures/hooked1.json" \
    2>"$WORK/hta.log" | sed 's/^ok  /ok   kineto:/; s/^FAIL/FAIL kineto:/'
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || tail -20 "$WORK/hta.log"
exit "$rc"
