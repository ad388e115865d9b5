#!/usr/bin/env bash
# Trains The LOOP's cube checker (issue 21, models/the-loop-cubes.md, "The cube checker"): the second look at every
# peak of the shipped cube net (models/the-loop-cubes.onnx), on this 2-core CPU, resumably: run it again after an
# interruption and every finished step is kept, the net resumes from its last checkpoint. Needs scripts/setup.sh and
# scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. procedural designs of The LOOP (tabletop synth pieces): by design number 14 of every 20 train, 3 validation,
#      3 test (art.common.design_split; the test boards are never rendered into training data);
#   2. board scenes of the training and validation boards, each cut at the cube net's side (400 px) and at the
#      checker's (600 px) (vision.train.cube_data --fine-px): the very scenes train-cubes.sh renders (kept when made);
#   3. the checker: windows at the shipped net's cube candidates, each turned to the camera's bearing (--upright,
#      session 58), MINUTES of training (default 60, one cosine, as the shipped one was trained in session 58), its
#      ONNX graph, and the candidates' floor and the checker's cut-off chosen on the validation boards; after retraining the cube net, run this script again (the checker learns the
#      new net's candidates);
#   4. the Era count reader (session 56): every training and validation scene read by the net and the checker
#      (vision.train.era_count_data), the reader trained ERA_MINUTES (default 20; session 60: 20 minutes alone counted
#      the validation Eras as 30 did) on each Era's square given the checker's count, its ONNX graph, and the margin by
#      which its count must beat the checker's, chosen on the validation boards.
# About 1.5 hours after train-cubes.sh (its designs and scenes kept): candidates 5, checker 60, cut-offs 4, readings 3,
# Era reader 20, margin 1; the whole cube counter takes about 3.9 hours from nothing (session 60's count: designs 5 and
# scenes 21 measured then, the rest as each stage's budget or its last measured time).
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/the-loop"
RUN="$OUT/runs/cube-check-upright-s59"  # a fresh run at the upright cube net's candidates (session 59)
MINUTES=${MINUTES:-60}
ERA_RUN="$OUT/runs/era-count-s60"  # session 60: the reader retrained on the upright net's and checker's readings
ERA_MINUTES=${ERA_MINUTES:-20}

.venv/bin/tabletop synth pieces --game the-loop --designs 100 --out "$P" --workers 2
D="$OUT/cubes"
$R -m vision.train.cube_data "$D/val" --pieces "$P" --split val --n 200 --seed 2 --cut-px 400 --fine-px 600
$R -m vision.train.cube_data "$D/train" --pieces "$P" --split train --n 3000 --seed 1 --cut-px 400 --fine-px 600
$T -m vision.train.cube_check train --data "$D/train" --val "$D/val" --pieces "$P" --models "$M" --out "$RUN" \
  --minutes "$MINUTES" --threads 2 --upright
mkdir -p "$M/checkpoints"
cp "$RUN/last.pt" "$M/checkpoints/the-loop-cube-check.last.pt"
cp "$RUN/curve.jsonl" "$M/checkpoints/the-loop-cube-check.curve.jsonl"
$T -m vision.train.cube_check export --run "$RUN" --onnx "$M/the-loop-cube-check.onnx"
$R -m vision.train.cube_check tune --val "$D/val" --pieces "$P" --models "$M" --upright
E="$OUT/era-count-s59"  # the readings of the checker trained above: delete this folder after retraining it
[ -f "$E/val.npz" ] || $R -m vision.train.era_count_data "$E/val.npz" --data "$D/val" --pieces "$P" --models "$M"
[ -f "$E/train.npz" ] || $R -m vision.train.era_count_data "$E/train.npz" --data "$D/train" --pieces "$P" --models "$M"
$T -m vision.train.era_count train --data "$D/train" --readings "$E/train.npz" --val "$D/val" \
  --val-readings "$E/val.npz" --pieces "$P" --models "$M" --out "$ERA_RUN" --minutes "$ERA_MINUTES" --threads 2
cp "$ERA_RUN/last.pt" "$M/checkpoints/the-loop-era-count.last.pt"
cp "$ERA_RUN/curve.jsonl" "$M/checkpoints/the-loop-era-count.curve.jsonl"
$T -m vision.train.era_count export --run "$ERA_RUN" --onnx "$M/the-loop-era-count.onnx"
$R -m vision.train.era_count tune --val "$D/val" --val-readings "$E/val.npz" --pieces "$P" --models "$M"
echo "train-cube-check: done: $M/the-loop-cube-check.onnx, $M/the-loop-cube-check.json, $M/the-loop-era-count.onnx"
