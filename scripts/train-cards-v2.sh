#!/usr/bin/env bash
# Trains the rectified card recogniser (corner finder + upright reader, models/cards-corners.md) from nothing, on this
# 2-core CPU, resumably: run it again after an interruption and every step goes on where it stopped (finished data is
# kept, training resumes from its last checkpoint). Needs scripts/setup.sh and scripts/setup-train.sh.
# It makes the shipped weights (flat crops with `--camera simple`); session 12's reader, trained through the scene
# renderer's camera and on fanned crops and not shipped, is made by the commands in models/cards-corners.md.
# Minutes of training per net: CORNER_MINUTES, READER_MINUTES (the shipped models' budgets by default).
set -euo pipefail
cd "$(dirname "$0")/.."
T=.venv-train/bin/python
R=.venv/bin/python
OUT=${OUT:-out}
CORNER_MINUTES=${CORNER_MINUTES:-45}
READER_MINUTES=${READER_MINUTES:-25}

# deck designs: Debian's decks (split by family) and procedural decks (split by font family)
[ -d "$OUT/decks" ] || .venv/bin/tabletop synth decks --out "$OUT/decks"
$R -m vision.synth.procedural "$OUT/procdecks" --n 240 --seed 0 --split train
$R -m vision.synth.procedural "$OUT/procdecks" --n 40 --seed 1 --split val
$R -m vision.synth.procedural "$OUT/procdecks" --n 40 --seed 2 --split test

# full-resolution scenes with exact corner geometry
$R -m vision.train.corner_data "$OUT/corner_scenes/train" --decks "$OUT/decks" --split train --n 6000 --seed 10
$R -m vision.train.corner_data "$OUT/corner_scenes/proc-train" --decks "$OUT/procdecks" --split train --n 2000 --seed 12
$R -m vision.train.corner_data "$OUT/corner_scenes/val" --decks "$OUT/decks" --split val --n 200 --seed 11

# rectified corner crops for the reader
C="$OUT/reader_crops"
[ -f "$C/debian-train.npz" ] || $R -m vision.train.reader_data "$C/debian-train.npz" --decks "$OUT/decks" --split train \
  --n 50000 --scenes "$OUT/corner_scenes/train" --max-scenes 3000 --workers 2 --camera simple
[ -f "$C/proc-train.npz" ] || $R -m vision.train.reader_data "$C/proc-train.npz" --decks "$OUT/procdecks" --split train \
  --n 90000 --workers 2 --seed 2 --camera simple
[ -f "$C/val.npz" ] || $R -m vision.train.reader_data "$C/val.npz" --decks "$OUT/decks" "$OUT/procdecks" --split val \
  --n 8000 --scenes "$OUT/corner_scenes/val" --max-scenes 200 --workers 2 --seed 1 --camera simple

# training (time budgets, resumable) and export to ONNX
$T -m vision.train.corner_net train --scenes "$OUT/corner_scenes/train" "$OUT/corner_scenes/proc-train" \
  --out "$OUT/runs/corners" --minutes "$CORNER_MINUTES" --val "$OUT/corner_scenes/val"
$T -m vision.train.reader_net train --data "$C/debian-train.npz" "$C/proc-train.npz" --val "$C/val.npz" \
  --out "$OUT/runs/reader2" --minutes "$READER_MINUTES"
$T -m vision.train.corner_net export --run "$OUT/runs/corners" --onnx models/cards-corners.onnx
$T -m vision.train.reader_net export --run "$OUT/runs/reader2" --onnx models/cards-corner-reader.float.onnx
# the runtime reads with the 8-bit graph, calibrated on validation crops (2.7x as fast, the same top-1)
$T -m vision.train.quantise corner-reader --float models/cards-corner-reader.float.onnx --crops "$C/val.npz" \
  --out models/cards-corner-reader.onnx
$R -m vision.train.tune_rectified --decks "$OUT/decks" --procedural "$OUT/procdecks"
echo "train-cards-v2: models/cards-corners.onnx, cards-corner-reader.onnx, cards-corners-thresholds.json written"
