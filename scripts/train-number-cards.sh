#!/usr/bin/env bash
# Trains the number-card reader (issue 20: LOOP's and Bag-O-Loot's cards, models/numbers-corner-reader.md) from
# nothing, on this 2-core CPU, resumably: run it again after an interruption and every finished step is kept, the
# reader resumes from its last checkpoint. Needs scripts/setup.sh and scripts/setup-train.sh, and the corner finder
# and refiner of the standard-deck recogniser (models/, scripts/train-cards-v2.sh): number cards are found by the
# same corners and read by a reader of the same design with a number head and a colour head.
#   1. 100 procedural designs of each game (tabletop synth pieces): 70 train, 15 validation, 15 test by design
#      number, each split lettered in its own font families (vision.synth.art.common.design_split);
#   2. corner crops of the training designs' cards seen through the scene renderer's camera, with fans and
#      cascades over some (vision.train.reader_data --pieces);
#   3. full-resolution scenes of the training designs (vision.train.corner_data --pieces), and the card finder
#      fine-tuned on them beside the playing-card scenes (FINDER_MINUTES, 60; from models/cards-corners.onnx, batch
#      norms frozen) into models/numbers-corners.onnx;
#   4. the reader (READER_MINUTES, 75), its float and 8-bit graphs;
#   5. each game's cut-offs on scenes of its validation designs (vision.train.tune_rectified --game).
# About 3 hours here: designs 12 min, scenes 12, crops 12, finder 60, reader 75, cut-offs 10. Session 18's shipped
# weights: the finder 30 minutes on the first 1,500 scenes, then a warm restart to 60 with the other 2,000; the
# reader 45 minutes, then a warm restart to 75 (models/numbers-corner-reader.md).
set -euo pipefail
cd "$(dirname "$0")/.."
T=.venv-train/bin/python
R=.venv/bin/python
OUT=${OUT:-out}
READER_MINUTES=${READER_MINUTES:-75}
FINDER_MINUTES=${FINDER_MINUTES:-60}
P="$OUT/numcards"
C="$OUT/number_crops"

for game in loop bag-o-loot; do
  .venv/bin/tabletop synth pieces --game "$game" --designs 100 --out "$P/$game" --workers 2
done
mkdir -p "$C"
crops() {  # crops FILE ARGS...: vision.train.reader_data on the number-card designs, unless FILE is already there
  local file="$C/$1"; shift
  [ -f "$file" ] || $R -m vision.train.reader_data "$file" --pieces "$P/loop" "$P/bag-o-loot" --workers 2 --fanned "$@"
}
crops val.npz --split val --n 10000 --seed 41
crops test.npz --split test --n 10000 --seed 42
crops train.npz --split train --n 140000 --seed 40

S="$OUT/number_scenes"
$R -m vision.train.corner_data "$S/val" --pieces "$P/loop" "$P/bag-o-loot" --split val --n 150 --seed 51
$R -m vision.train.corner_data "$S/train" --pieces "$P/loop" "$P/bag-o-loot" --split train --n 1500 --seed 50
$R -m vision.train.corner_data "$S/train2" --pieces "$P/loop" "$P/bag-o-loot" --split train --n 2000 --seed 52
$T -m vision.train.corner_net train --scenes "$S/train" "$S/train2" "$OUT/corner_scenes/train" \
  "$OUT/corner_scenes/proc-train" --out "$OUT/runs/numcorners" --minutes "$FINDER_MINUTES" --threads 2 --lr 1e-3 \
  --val "$S/val" --val-scenes 60 --init-onnx models/cards-corners.onnx
$T -m vision.train.corner_net export --run "$OUT/runs/numcorners" --onnx models/numbers-corners.onnx

$T -m vision.train.reader_net train --data "$C/train.npz" --val "$C/val.npz" --out "$OUT/runs/numreader" \
  --minutes "$READER_MINUTES" --threads 2 --vocabulary numbers
$T -m vision.train.reader_net export --run "$OUT/runs/numreader" --onnx models/numbers-corner-reader.float.onnx
$T -m vision.train.quantise corner-reader --float models/numbers-corner-reader.float.onnx --crops "$C/val.npz" \
  --out models/numbers-corner-reader.onnx --game loop
for game in loop bag-o-loot; do
  $R -m vision.train.tune_rectified --game "$game" --pieces "$P/$game" --scenes 150 --seed 5
done
