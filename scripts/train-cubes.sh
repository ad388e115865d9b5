#!/usr/bin/env bash
# Trains The LOOP's board net (issue 21, models/the-loop-cubes.md; session 40): one net over the Era ring cut 400 px
# wide marks the cubes (red, green, blue) and the pieces (clone tokens, vortex and mission tiles, pawns), on this
# 2-core CPU, resumably: run it again after an interruption and every finished step is kept, the net resumes from its
# last checkpoint. Needs scripts/setup.sh and scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. procedural designs of The LOOP (tabletop synth pieces): by design number 14 of every 20 train, 3 validation,
#      3 test (art.common.design_split; the test boards are never rendered into training data);
#   2. board scenes of the 70 training and 15 validation boards, each cut at the net's side (400 px) and at the cube
#      checker's (600 px, for scripts/train-cube-check.sh) (vision.train.cube_data --fine-px);
#   3. the net (arch "ring"), 70 minutes on the cut as it is, then (session 59) the same run continued to
#      UPRIGHT_MINUTES (default 110) on each cut turned to its camera (--upright), its ONNX graph, and its cut-offs
#      chosen on the validation boards, the cut read turned;
#   4. the clone tokens' Paradox Era reader (vision.board.clones): its colour likenesses' weights fitted on the
#      training boards' tokens, and the cut-off on the strongest clone map chosen on the validation boards with the
#      net (numpy, no torch).
# About 2 hours 25 minutes here: designs 5 min, scenes 21 (session 60; 34 in session 40, on a busier machine), net
# 70 + 40, cut-offs 3, Paradox Era reader 5. Then train-cube-check.sh.
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/the-loop"
RUN="$OUT/runs/cubes"
D="$OUT/cubes"
MINUTES=${MINUTES:-70}
UP="$OUT/runs/cubes-upright"  # the run continued on the cut turned to the camera
UPRIGHT_MINUTES=${UPRIGHT_MINUTES:-110}

.venv/bin/tabletop synth pieces --game the-loop --designs 100 --out "$P" --workers 2
$R -m vision.train.cube_data "$D/val" --pieces "$P" --split val --n 200 --seed 2 --cut-px 400 --fine-px 600
$R -m vision.train.cube_data "$D/train" --pieces "$P" --split train --n 3000 --seed 1 --cut-px 400 --fine-px 600
$T -m vision.train.cube_net train --data "$D/train" --val "$D/val" --pieces "$P" --out "$RUN" --arch ring \
  --minutes "$MINUTES" --threads 2
if [ ! -f "$UP/last.pt" ]; then
  mkdir -p "$UP" && cp "$RUN/last.pt" "$RUN/curve.jsonl" "$UP/"
fi
$T -m vision.train.cube_net train --data "$D/train" --val "$D/val" --pieces "$P" --out "$UP" --arch ring \
  --minutes "$UPRIGHT_MINUTES" --threads 2 --upright
mkdir -p "$M/checkpoints"
cp "$UP/last.pt" "$M/checkpoints/the-loop-cubes.last.pt"
cp "$UP/curve.jsonl" "$M/checkpoints/the-loop-cubes.curve.jsonl"
$T -m vision.train.cube_net export --run "$UP" --onnx "$M/the-loop-cubes.onnx"
$R -m vision.train.tune_cubes --val "$D/val" --pieces "$P" --models "$M" --upright
$R -m vision.train.clone_eras --data "$D/train" --val "$D/val" --pieces "$P" --models "$M"
echo "train-cubes: done: $M/the-loop-cubes.onnx, $M/the-loop-cubes-thresholds.json, $M/the-loop-clone-eras.json"
