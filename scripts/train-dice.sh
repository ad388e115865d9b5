#!/usr/bin/env bash
# Trains the dice nets (issue 21, models/dice.md) on this 2-core CPU, resumably: run it again after an interruption
# and every finished step is kept, each net resumes from its last checkpoint. Needs scripts/setup.sh and
# scripts/setup-train.sh (or TRAIN_PYTHON: a Python with torch and onnx).
#   1. Loot Roll's procedural designs (tabletop synth pieces): the tables the dice lie on, split by design number;
#   2. dice scenes (vision.train.dice_data): 300 of validation dice and tables, 3,000 of training ones, each with its
#      calibration (the scenes of out/dice-v3 drawn again), and 1,200 training trays of dice, half of them cocked.
#      Dice designs, numeral fonts, body colours and materials are split too (vision.synth.solids.random_solid): no
#      test die's look is ever rendered here. (Trays of dice alone gave the face reader four times the faces and read
#      no better; training dice lettered beyond their fonts, --lettered, read worse: models/dice.md. The shipped
#      reader is trained on the scenes alone.);
#   3. the upright face finder (45 min) then the table-view face finder (45 min) on one core, the face reader (65
#      min) on the other; the finder (20 min, then continued to 50); the table-view face finder continued to 75
#      minutes on the scenes and the trays; their ONNX graphs; the finder's cut-off, the face reader's temperature and the confidence floor
#      chosen on the validation dice, and the level faces' own (read in the table view) on 150 whole validation
#      scenes (vision.train.tune_dice).
# About 3 hours 45 minutes here: designs 1 min, scenes 26, trays 8, nets 175, tuning 12 (level faces at six peaks).
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/loot-roll"
D="$OUT/dice-v5"
TRAYS="$OUT/dice-tray-v5/train"

.venv/bin/tabletop synth pieces --game loot-roll --designs 20 --out "$P" --workers 2
$R -m vision.train.dice_data "$D/val" --pieces "$P" --split val --n 300 --seed 2
$R -m vision.train.dice_data "$D/train" --pieces "$P" --split train --n 3000 --seed 1
$R -m vision.train.dice_data "$TRAYS" --pieces "$P" --split train --tray --cocked 0.5 --n 1200 --seed 6
(
  $T -m vision.train.dice_net train --net faces --data "$D/train" --val "$D/val" \
    --out "$OUT/runs/dice-faces" --minutes 45 --batch 32 --threads 1
  $T -m vision.train.dice_net train --net faces --view table --data "$D/train" --val "$D/val" \
    --out "$OUT/runs/dice-faces-table" --minutes 45 --batch 32 --threads 1 --seed 1
) &
$T -m vision.train.dice_net train --net reader --data "$D/train" --val "$D/val" \
  --out "$OUT/runs/dice-reader" --minutes 65 --batch 64 --threads 1
wait
$T -m vision.train.dice_net train --net finder --data "$D/train" --val "$D/val" \
  --out "$OUT/runs/dice-finder" --minutes 20 --batch 12 --threads 2
# the finder's curve still rose at 20 minutes: the same run, its cosine stretched to 50 (a warm continuation)
$T -m vision.train.dice_net train --net finder --data "$D/train" --val "$D/val" \
  --out "$OUT/runs/dice-finder" --minutes 50 --batch 12 --threads 2
# the same run, its cosine stretched to 75 minutes, on the scenes and the cocked trays (a warm continuation)
$T -m vision.train.dice_net train --net faces --view table --data "$D/train" "$TRAYS" --val "$D/val" \
  --out "$OUT/runs/dice-faces-table" --minutes 75 --batch 32 --threads 1 --seed 1
mkdir -p "$M/checkpoints"
for net in finder faces faces-table reader; do
  cp "$OUT/runs/dice-$net/last.pt" "$M/checkpoints/dice-$net.last.pt"
  cp "$OUT/runs/dice-$net/curve.jsonl" "$M/checkpoints/dice-$net.curve.jsonl"
  $T -m vision.train.dice_net export --run "$OUT/runs/dice-$net" --onnx "$M/dice-$net.onnx"
done
$R -m vision.train.tune_dice --val "$D/val" --models "$M" --pieces "$P"
echo "train-dice: done: $M/dice-finder.onnx, $M/dice-faces.onnx, $M/dice-faces-table.onnx, $M/dice-reader.onnx," \
  "$M/dice-thresholds.json"
