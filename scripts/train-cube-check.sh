#!/usr/bin/env bash
# Trains The LOOP's cube checker (issue 21, models/the-loop-cubes.md, "The cube checker"): the second look at every
# peak of the shipped cube net (models/the-loop-cubes.onnx), on this 2-core CPU, resumably: run it again after an
# interruption and every finished step is kept, the net resumes from its last checkpoint. Needs scripts/setup.sh and
# scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. procedural designs of The LOOP (tabletop synth pieces): by design number 14 of every 20 train, 3 validation,
#      3 test (art.common.design_split; the test boards are never rendered into training data);
#   2. board scenes of the training and validation boards, each cut at the cube net's side (400 px) and at the
#      checker's (600 px) (vision.train.cube_data --fine-px): the very scenes train-cubes.sh renders (kept when made);
#   3. the checker: windows at the net's cube candidates, 40 minutes, then on to 70 (a warm continuation of the
#      cosine, as the shipped one was trained in session 38), its ONNX graph, and the candidates' floor and the
#      checker's cut-off chosen on the validation boards;
#   4. (session 40) the floor and cut-off chosen again for the net trained after this checker: run this script's last
#      line alone after retraining the net.
# About 1.4 hours after train-cubes.sh (its designs and scenes kept): candidates 5 at each start, checker 70,
# cut-offs 2; the whole cube counter takes about 3.4 hours from nothing.
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/the-loop"
RUN="$OUT/runs/cube-check"

.venv/bin/tabletop synth pieces --game the-loop --designs 100 --out "$P" --workers 2
D="$OUT/cubes"
$R -m vision.train.cube_data "$D/val" --pieces "$P" --split val --n 200 --seed 2 --cut-px 400 --fine-px 600
$R -m vision.train.cube_data "$D/train" --pieces "$P" --split train --n 3000 --seed 1 --cut-px 400 --fine-px 600
for minutes in 40 70; do
  $T -m vision.train.cube_check train --data "$D/train" --val "$D/val" --pieces "$P" --models "$M" --out "$RUN" \
    --minutes $minutes --threads 2
done
mkdir -p "$M/checkpoints"
cp "$RUN/last.pt" "$M/checkpoints/the-loop-cube-check.last.pt"
cp "$RUN/curve.jsonl" "$M/checkpoints/the-loop-cube-check.curve.jsonl"
$T -m vision.train.cube_check export --run "$RUN" --onnx "$M/the-loop-cube-check.onnx"
$R -m vision.train.cube_check tune --val "$D/val" --pieces "$P" --models "$M"
echo "train-cube-check: done: $M/the-loop-cube-check.onnx, $M/the-loop-cube-check.json"
