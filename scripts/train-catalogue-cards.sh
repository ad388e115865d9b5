#!/usr/bin/env bash
# Trains what names Loot Roll's and The LOOP's catalogue cards (issue 20, models/catalogue-cards.md) on this 2-core
# CPU, resumably: run it again after an interruption and every finished step is kept, the finder resumes from its
# last checkpoint. Needs scripts/setup.sh and scripts/setup-train.sh, the number-card finder (models/
# numbers-corners.onnx, scripts/train-number-cards.sh) and its scenes: catalogue cards are found by the same corner
# finder, fine-tuned on them, and named by matching the enrolled pictures (no reader to train).
#   1. 100 procedural designs of each game (tabletop synth pieces): 70 train, 15 validation, 15 test by design number;
#   2. full-resolution scenes of the training designs (vision.train.corner_data --pieces), and the finder fine-tuned
#      on them beside the number-card and playing-card scenes (FINDER_MINUTES, 60; batch norms frozen) into
#      models/catalogue-corners.onnx;
#   3. the stand-in catalogues (design 0 of each game) and each game's cut-offs on validation designs.
# About 1.3 hours here: designs 3 min, scenes 10, finder 60, cut-offs 15.
set -euo pipefail
cd "$(dirname "$0")/.."
T=.venv-train/bin/python
R=.venv/bin/python
OUT=${OUT:-out}
FINDER_MINUTES=${FINDER_MINUTES:-60}
P="$OUT/catcards"
S="$OUT/cat_scenes"

for game in loot-roll the-loop; do
  .venv/bin/tabletop synth pieces --game "$game" --designs 100 --out "$P/$game" --workers 2
done
$R -m vision.train.corner_data "$S/val" --pieces "$P/loot-roll" "$P/the-loop" --split val --n 150 --seed 61
$R -m vision.train.corner_data "$S/train" --pieces "$P/loot-roll" "$P/the-loop" --split train --n 2000 --seed 60
# the catalogue scenes twice: a third of the tiles, beside the cards the finder already knows
$T -m vision.train.corner_net train --scenes "$S/train" "$S/train" "$OUT/number_scenes/train" \
  "$OUT/number_scenes/train2" "$OUT/corner_scenes/train" "$OUT/corner_scenes/proc-train" \
  --out "$OUT/runs/catcorners" --minutes "$FINDER_MINUTES" --threads 2 --lr 1e-3 --val "$S/val" --val-scenes 60 \
  --init-onnx models/numbers-corners.onnx
$T -m vision.train.corner_net export --run "$OUT/runs/catcorners" --onnx models/catalogue-corners.onnx
for game in loot-roll the-loop; do
  $R -m vision.recognise.catalogue stand-in --game "$game"
  $R -m vision.train.tune_catalogue --game "$game" --pieces "$P/$game" --scenes 150 --seed 5
done
