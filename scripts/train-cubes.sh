#!/usr/bin/env bash
# Trains The LOOP's cube counter (issue 21, models/the-loop-cubes.md) on this 2-core CPU, resumably: run it again
# after an interruption and every finished step is kept, the net resumes from its last checkpoint. Needs
# scripts/setup.sh and scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. procedural designs of The LOOP (tabletop synth pieces): by design number 14 of every 20 train, 3 validation,
#      3 test (art.common.design_split; the test boards are never rendered here);
#   2. board scenes of the training and validation boards, the Era ring cut out of each (vision.train.cube_data);
#   3. the net (CUBE_MINUTES, 40) and its ONNX graph; the peak cut-off chosen on the validation boards.
# About an hour here: designs 1 min, scenes 15, net 40, cut-off 1.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${TRAIN_PYTHON:-.venv-train/bin/python}
R=.venv/bin/python
OUT=${OUT:-out}
M=${MODELS:-models}
DESIGNS=${DESIGNS:-20}
CUBE_MINUTES=${CUBE_MINUTES:-40}
P="$OUT/pieces/the-loop"

.venv/bin/tabletop synth pieces --game the-loop --designs "$DESIGNS" --out "$P" --workers 2
$R -m vision.train.cube_data "$OUT/cubes/val" --pieces "$P" --split val --n 200 --seed 2
$R -m vision.train.cube_data "$OUT/cubes/train" --pieces "$P" --split train --n 1600 --seed 1
$T -m vision.train.cube_net train --data "$OUT/cubes/train" --val "$OUT/cubes/val" --pieces "$P" \
  --out "$OUT/runs/cubes" --minutes "$CUBE_MINUTES" --threads 2
mkdir -p "$M/checkpoints"
cp "$OUT/runs/cubes/last.pt" "$M/checkpoints/the-loop-cubes.last.pt"
cp "$OUT/runs/cubes/curve.jsonl" "$M/checkpoints/the-loop-cubes.curve.jsonl"
$T -m vision.train.cube_net export --run "$OUT/runs/cubes" --onnx "$M/the-loop-cubes.onnx"
$R -m vision.train.tune_cubes --val "$OUT/cubes/val" --pieces "$P" --models "$M"
echo "train-cubes: done: $M/the-loop-cubes.onnx, $M/the-loop-cubes-thresholds.json"
