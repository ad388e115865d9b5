#!/usr/bin/env bash
# Trains The LOOP's board reader (issue 21, models/the-loop-cubes.md): cubes per Era and the pieces on the ring (clone
# tokens, vortex and mission tiles, pawns), on this 2-core CPU, resumably: run it again after an interruption and
# every finished step is kept, the net resumes from its last checkpoint. Needs scripts/setup.sh and
# scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. procedural designs of The LOOP (tabletop synth pieces): by design number 14 of every 20 train, 3 validation,
#      3 test (art.common.design_split; the test boards are never rendered into training data);
#   2. board scenes of the 28 training and 6 validation boards, the Era ring cut out of each (vision.train.cube_data);
#   3. the net (arch "ring"), its ONNX graph, and the peak cut-offs chosen on the validation boards.
# About 1.9 hours here: designs 25 min, scenes 30, net 70, cut-offs 2.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${TRAIN_PYTHON:-.venv-train/bin/python}
R=.venv/bin/python
OUT=${OUT:-out}
M=${MODELS:-models}
P="$OUT/pieces/the-loop"
RUN="$OUT/runs/cubes-ring"
MINUTES=${MINUTES:-70}

.venv/bin/tabletop synth pieces --game the-loop --designs 40 --out "$P" --workers 2
$R -m vision.train.cube_data "$OUT/cubes/val" --pieces "$P" --split val --n 200 --seed 2
$R -m vision.train.cube_data "$OUT/cubes/train" --pieces "$P" --split train --n 3000 --seed 1
$T -m vision.train.cube_net train --data "$OUT/cubes/train" --val "$OUT/cubes/val" --pieces "$P" --out "$RUN" \
  --arch ring --minutes "$MINUTES" --threads 2
mkdir -p "$M/checkpoints"
cp "$RUN/last.pt" "$M/checkpoints/the-loop-cubes.last.pt"
cp "$RUN/curve.jsonl" "$M/checkpoints/the-loop-cubes.curve.jsonl"
$T -m vision.train.cube_net export --run "$RUN" --onnx "$M/the-loop-cubes.onnx"
$R -m vision.train.tune_cubes --val "$OUT/cubes/val" --pieces "$P" --models "$M"
echo "train-cubes: done: $M/the-loop-cubes.onnx, $M/the-loop-cubes-thresholds.json"
