#!/usr/bin/env bash
# Trains the dice nets (issue 21, models/dice.md) on this 2-core CPU, resumably: run it again after an interruption
# and every finished step is kept, each net resumes from its last checkpoint. Needs scripts/setup.sh and
# scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. Loot Roll's procedural designs (tabletop synth pieces): the tables the dice lie on, split by design number;
#   2. dice scenes (vision.train.dice_data): 300 of validation dice and tables, 3,000 of training ones. Dice designs,
#      numeral fonts, body colours and materials are split too (vision.synth.solids.random_solid): no test die's
#      look is ever rendered here. (Trays of dice alone, dice_data --tray, gave the face reader four times the faces
#      and read no better; training dice lettered beyond their fonts, --lettered, read worse: models/dice.md. The
#      shipped reader is trained without either.);
#   3. the face finder (60 min) and the face reader (60 min) side by side, one core each, then the finder (20 min);
#      their ONNX graphs; the finder's cut-off, the face reader's temperature and the confidence floor chosen on the
#      validation dice, and the level faces' own on 150 whole validation scenes (vision.train.tune_dice).
# About 2 hours here: designs 1 min, scenes 26, nets 80, tuning 6.
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/loot-roll"
D="$OUT/dice-v3"

.venv/bin/tabletop synth pieces --game loot-roll --designs 20 --out "$P" --workers 2
$R -m vision.train.dice_data "$D/val" --pieces "$P" --split val --n 300 --seed 2
$R -m vision.train.dice_data "$D/train" --pieces "$P" --split train --n 3000 --seed 1
$T -m vision.train.dice_net train --net faces --data "$D/train" --val "$D/val" \
  --out "$OUT/runs/dice-faces" --minutes 45 --batch 32 --threads 1 &
$T -m vision.train.dice_net train --net reader --data "$D/train" --val "$D/val" \
  --out "$OUT/runs/dice-reader" --minutes 65 --batch 64 --threads 1
wait
$T -m vision.train.dice_net train --net finder --data "$D/train" --val "$D/val" \
  --out "$OUT/runs/dice-finder" --minutes 20 --batch 12 --threads 2
mkdir -p "$M/checkpoints"
for net in finder faces reader; do
  cp "$OUT/runs/dice-$net/last.pt" "$M/checkpoints/dice-$net.last.pt"
  cp "$OUT/runs/dice-$net/curve.jsonl" "$M/checkpoints/dice-$net.curve.jsonl"
  $T -m vision.train.dice_net export --run "$OUT/runs/dice-$net" --onnx "$M/dice-$net.onnx"
done
$R -m vision.train.tune_dice --val "$D/val" --models "$M" --pieces "$P"
echo "train-dice: done: $M/dice-finder.onnx, $M/dice-faces.onnx, $M/dice-reader.onnx, $M/dice-thresholds.json"
