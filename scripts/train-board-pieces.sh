#!/usr/bin/env bash
# Trains The LOOP's pieces net (issue 21, models/the-loop-cubes.md): the pieces on the ring (clone tokens by Paradox
# Era, vortex and mission tiles, pawns by agent) and the cubes beside them, on cuts 576 px wide, on this 2-core CPU, resumably: run it again after an interruption and
# every finished step is kept, the net resumes from its last checkpoint. Needs scripts/setup.sh and
# scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. procedural designs of The LOOP (tabletop synth pieces): by design number 14 of every 20 train, 3 validation,
#      3 test (art.common.design_split; the test boards are never rendered into training data);
#   2. board scenes of the 28 training and 6 validation boards, the Era ring cut out of each (vision.train.cube_data);
#   3. the net (arch "ring"), its ONNX graph (models/the-loop-pieces.onnx), and the cut-offs chosen on the
#      validation boards (models/the-loop-pieces-thresholds.json). The cubes are still counted by the cube net
#      (scripts/train-cubes.sh), which counted the validation Eras better (83.0% against 73.7%);
#   4. the clone tokens' Paradox Era reader (vision.board.clones, session 39): its colour likenesses' weights fitted
#      on the training boards' tokens, and the cut-off on the strongest clone map chosen on the validation boards
#      with this net (models/the-loop-clone-eras.json; numpy, no torch).
# About 2 hours here: designs 5 min, scenes 34, net 70 (session 37), cut-offs 3, Paradox Era reader 5.
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/the-loop"
RUN="$OUT/runs/board-pieces"
MINUTES=${MINUTES:-70}

.venv/bin/tabletop synth pieces --game the-loop --designs 40 --out "$P" --workers 2
$R -m vision.train.cube_data "$OUT/pieces-net/val" --pieces "$P" --split val --n 200 --seed 2
$R -m vision.train.cube_data "$OUT/pieces-net/train" --pieces "$P" --split train --n 3000 --seed 1
$T -m vision.train.cube_net train --data "$OUT/pieces-net/train" --val "$OUT/pieces-net/val" --pieces "$P" --out "$RUN" \
  --arch ring --minutes "$MINUTES" --threads 2
mkdir -p "$M/checkpoints"
cp "$RUN/last.pt" "$M/checkpoints/the-loop-pieces.last.pt"
cp "$RUN/curve.jsonl" "$M/checkpoints/the-loop-pieces.curve.jsonl"
$T -m vision.train.cube_net export --run "$RUN" --onnx "$M/the-loop-pieces.onnx"
$R -m vision.train.tune_cubes --val "$OUT/pieces-net/val" --pieces "$P" --models "$M" --model the-loop-pieces.onnx \
  --thresholds the-loop-pieces-thresholds.json
$R -m vision.train.clone_eras --data "$OUT/pieces-net/train" --val "$OUT/pieces-net/val" --pieces "$P" --models "$M"
echo "train-board-pieces: done: $M/the-loop-pieces.onnx, $M/the-loop-pieces-thresholds.json, $M/the-loop-clone-eras.json"
