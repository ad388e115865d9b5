#!/usr/bin/env bash
# Trains The LOOP's cube counter (issue 21, models/the-loop-cubes.md; the net of session 32, on cuts 400 px wide) on
# this 2-core CPU, resumably: run it again
# after an interruption and every finished step is kept, the net resumes from its last checkpoint. Needs
# scripts/setup.sh and scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. procedural designs of The LOOP (tabletop synth pieces): by design number 14 of every 20 train, 3 validation,
#      3 test (art.common.design_split; the test boards are never rendered into training data);
#   2. board scenes of the training and validation boards, the Era ring cut out of each (vision.train.cube_data):
#      first 1,600 scenes of the 14 training boards of 20 designs, then 2,400 more of the 70 of 100 designs;
#   3. the net: 40 minutes on the first scenes, then on to 65 on both (a warm continuation of the cosine, as the
#      shipped one was trained in session 32), its ONNX graph, and the peak cut-off chosen on the validation boards.
# About 1.9 hours here: designs 3 min, scenes 35, net 65, cut-off 1.
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/the-loop"
RUN="$OUT/runs/cubes"

# (the first scenes pick among the boards of the first 20 designs: made before the 100 are rendered)
.venv/bin/tabletop synth pieces --game the-loop --designs 20 --out "$P" --workers 2
$R -m vision.train.cube_data "$OUT/cubes/val" --pieces "$P" --split val --n 200 --seed 2 --cut-px 400
$R -m vision.train.cube_data "$OUT/cubes/train" --pieces "$P" --split train --n 1600 --seed 1 --cut-px 400
.venv/bin/tabletop synth pieces --game the-loop --designs 100 --out "$P" --workers 2
$R -m vision.train.cube_data "$OUT/cubes/train2" --pieces "$P" --split train --n 2400 --seed 3 --cut-px 400
$T -m vision.train.cube_net train --data "$OUT/cubes/train" --val "$OUT/cubes/val" --pieces "$P" --out "$RUN" \
  --arch small --minutes 40 --threads 2
$T -m vision.train.cube_net train --data "$OUT/cubes/train" "$OUT/cubes/train2" --val "$OUT/cubes/val" --pieces "$P" \
  --out "$RUN" --arch small --minutes 65 --threads 2
mkdir -p "$M/checkpoints"
cp "$RUN/last.pt" "$M/checkpoints/the-loop-cubes.last.pt"
cp "$RUN/curve.jsonl" "$M/checkpoints/the-loop-cubes.curve.jsonl"
$T -m vision.train.cube_net export --run "$RUN" --onnx "$M/the-loop-cubes.onnx"
$R -m vision.train.tune_cubes --val "$OUT/cubes/val" --pieces "$P" --models "$M"
echo "train-cubes: done: $M/the-loop-cubes.onnx, $M/the-loop-cubes-thresholds.json"
