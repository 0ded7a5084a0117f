#!/usr/bin/env bash
# GPU check: training-step throughput (samples/s, fp32 and bf16 autocast) of K-BERT with HowNet,
# LET and the MiniLM relation classifier against a plain transformers BertModel of the same size
# on batches of the same shapes, and `graphmatch predict RUN --input FILE` on runs trained for a
# few steps (benchmarks/gpu_throughput.py says how each is measured). Sized for at most 8 minutes
# on one GPU; a Markdown table on stdout and, with $OUT set, in $OUT/gpu_check.md (written after
# every row, so a run cut short keeps what it measured).
#
#   bash benchmarks/gpu_check.sh                      # from the repository root (or anywhere)
#   bash benchmarks/gpu_check.sh --device cpu --steps 2 --rounds 1   # a CPU smoke run
#
# Python: $PYTHON, else .venv/bin/python, else python3. Data: $GRAPHMATCH_DATA, else shared/data or
# ../shared/data beside the repository. Exit 2, with one line, when a package or the data is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-}
if [[ -z $PY ]]; then
    if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi
if ! command -v "$PY" >/dev/null 2>&1; then
    echo "gpu_check: no Python interpreter $PY (set PYTHON)" >&2
    exit 2
fi
if ! "$PY" -c "import torch, torch_geometric, transformers" >/dev/null 2>&1; then
    missing=$("$PY" -c '
import importlib
out = []
for name in ("torch", "torch_geometric", "transformers"):
    try:
        importlib.import_module(name)
    except Exception as err:
        out.append(f"{name} ({type(err).__name__})")
print(", ".join(out))' 2>/dev/null || true)
    echo "gpu_check: $PY cannot import ${missing:-torch, torch_geometric, transformers}; install graphmatch's dependencies (pip install -e .) first" >&2
    exit 2
fi

DATA=${GRAPHMATCH_DATA:-}
if [[ -z $DATA ]]; then
    for d in shared/data ../shared/data; do
        if [[ -d $d ]]; then DATA=$(cd "$d" && pwd); break; fi
    done
fi
need=(kbert hownet lcqmc semeval2010_task8)
for sub in "${need[@]}"; do
    if [[ -z $DATA || ! -d $DATA/$sub ]]; then
        echo "gpu_check: no data folder ${DATA:-shared/data}/$sub (set GRAPHMATCH_DATA to a data root with ${need[*]})" >&2
        exit 2
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
out_args=()
if [[ -n ${OUT:-} ]]; then out_args=(--out "$OUT/gpu_check.md"); fi

# 460 s for the benchmark, the rest of the 8 minutes for start-up and clean-up
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" GRAPHMATCH_DATA="$DATA"
status=0
timeout -k 10 460 "$PY" benchmarks/gpu_throughput.py --data-dir "$DATA" --work "$WORK/runs" \
    --cache-dir "$WORK/cache" "${out_args[@]}" "$@" || status=$?
if [[ $status == 124 || $status == 137 ]]; then
    echo "gpu_check: stopped after 460 s; the rows measured so far are in ${OUT:-(no \$OUT)}/gpu_check.md" >&2
fi
exit "$status"
