#!/usr/bin/env bash
# Tunes the dice watcher's rule (issue 21, models/dice.md, session 50) after scripts/train-dice.sh: 120 validation
# roll clips (dice of the validation split thrown onto validation tables, never the bench's test ones) rendered and
# read frame by frame with the trained nets, with and without the table's calibration (resumable: each clip's
# readings are kept as it is done), then per way of reading the rule of least cost on them, written under "watch"
# in the dice thresholds file. About 30 minutes on this 2-core CPU (clips 28, rules 1); a tuning of the runtime's
# rule over trained nets, not a training: the nets' recipe stays 3 h 45 min.
source "$(dirname "$0")/train-env.sh"  # set -euo pipefail, the repository root, T, R, OUT, M
P="$OUT/pieces/loot-roll"
CLIPS="$OUT/dice-clips-val"

$R -m vision.train.tune_watch record --pieces "$P" --out "$CLIPS" --clips 120 --models "$M"
$R -m vision.train.tune_watch tune --records "$CLIPS" --models "$M"
echo "tune-dice-watch: done: the watcher's rules in $M/dice-thresholds.json"
