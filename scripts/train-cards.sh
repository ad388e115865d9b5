#!/usr/bin/env bash
# Retrains the standard-card recogniser from nothing, resumably (run it again after an interruption and it goes
# on where it stopped): decks -> synthetic scenes -> finder and reader sets -> training -> ONNX in models/.
# Needs scripts/setup.sh (the runtime .venv, Debian's decks) and scripts/setup-train.sh (.venv-train).
# models/cards.md gives the time each step took on a 2-core machine, and how the shipped weights were made (their
# history differs from this clean recipe: see "Recipe and history").
set -euo pipefail
cd "$(dirname "$0")/.."
T=.venv-train/bin/python
OUT=${OUT:-out}
FINDER_EPOCHS=${FINDER_EPOCHS:-4}
READER_EPOCHS=${READER_EPOCHS:-24}

[ -d "$OUT/decks" ] || .venv/bin/tabletop synth decks --out "$OUT/decks"
DS="$OUT/ds10k_v2"
.venv/bin/tabletop synth scenes --decks "$OUT/decks" --family-split train --out "$DS" --n 10000 --seed 0 --kind detect --quiet
.venv/bin/tabletop synth scenes --decks "$OUT/decks" --family-split val --split val --out "$DS" --n 1500 --seed 1 --kind detect --quiet
.venv/bin/tabletop synth scenes --decks "$OUT/decks" --family-split test --split test --out "$DS" --n 1500 --seed 2 --kind detect --quiet

$T -m vision.train.datasets "$DS" --stage 1 --out "$OUT/finder_ds2" --decks "$OUT/decks"
$T -m vision.train.datasets "$DS" --stage 2 --out "$OUT/reader_ds4" --decks "$OUT/decks"

$T -m vision.train.fit finder --data "$OUT/finder_ds2/data.yaml" --epochs "$FINDER_EPOCHS" --scale 0.25 --project "$OUT/runs"
$T -m vision.train.fit reader --data "$OUT/reader_ds4" --epochs "$READER_EPOCHS" --lr0 0.001 --project "$OUT/runs"

$T -m vision.train.fit export --run "$OUT/runs/finder" --onnx models/cards-finder.onnx
$T -m vision.train.fit export --run "$OUT/runs/reader" --onnx models/cards-reader.onnx
$T -m vision.train.tune --decks "$OUT/decks"
echo "train-cards: models/cards-finder.onnx, cards-reader.onnx, cards-reader-head.npz, cards-thresholds.json written"
