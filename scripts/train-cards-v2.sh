#!/usr/bin/env bash
# Trains the rectified card recogniser (corner finder + upright reader, models/cards-corners.md) from nothing, on this
# 2-core CPU, resumably: run it again after an interruption and every step goes on where it stopped (finished data is
# kept, training resumes from its last checkpoint). Needs scripts/setup.sh and scripts/setup-train.sh.
# The reader is trained in three stages on one run (each a warm restart of its cosine, as the shipped one was):
#   1. flat crops seen through the scene renderer's camera, and scene crops (READER_MINUTES_1, 60 min);
#   2. the same with fans and cascades over some crops (to READER_MINUTES_2, 80 min);
#   3. crops cut along frames erred as the trained corner finder errs (vision.train.finder_errors) (to 125 min);
#   4. only with READER_MINUTES_4 set (e.g. 215): the same with the finder's false corners (on no card) beside them,
#      which teach a card head: session 16's candidate (models/candidates/s16-reader7), not the shipped reader.
#   5. to READER_MINUTES_5 (170 min; 0 skips it): the same crops beside crops cut with each corner's short and long
#      edges swapped, taught as no index, and procedural decks with notched clubs: session 20's "reader9", shipped
#      since session 21 (continued 45 minutes from the shipped reader6).
# Every crop is labelled with its index's legibility (vision.synth.legibility): smeared indices teach "unsure".
# The corner refiner (session 17) is trained after the finder, on patches cut along that finder's own frames.
# About 5.2 hours in all here: finder 45 min, reader 170 min, refiner 40 min (REFINER_MINUTES), data about 65 min,
# thresholds 5 min: over the issue's 4 hours (models/cards-corners.md, "Limits"; the candidate's fourth reader stage
# adds 90 minutes more, "Session 16").
set -euo pipefail
cd "$(dirname "$0")/.."
T=.venv-train/bin/python
R=.venv/bin/python
OUT=${OUT:-out}
CORNER_MINUTES=${CORNER_MINUTES:-45}
READER_MINUTES_1=${READER_MINUTES_1:-60}
READER_MINUTES_2=${READER_MINUTES_2:-80}
READER_MINUTES_3=${READER_MINUTES_3:-125}
READER_MINUTES_4=${READER_MINUTES_4:-0}
READER_MINUTES_5=${READER_MINUTES_5:-170}
REFINER_MINUTES=${REFINER_MINUTES:-40}

# deck designs: Debian's decks (split by family) and procedural decks (split by font family)
[ -d "$OUT/decks" ] || .venv/bin/tabletop synth decks --out "$OUT/decks"
$R -m vision.synth.procedural "$OUT/procdecks" --n 240 --seed 0 --split train
$R -m vision.synth.procedural "$OUT/procdecks" --n 40 --seed 1 --split val
$R -m vision.synth.procedural "$OUT/procdecks" --n 40 --seed 2 --split test

# full-resolution scenes with exact corner geometry
$R -m vision.train.corner_data "$OUT/corner_scenes/train" --decks "$OUT/decks" --split train --n 6000 --seed 10
$R -m vision.train.corner_data "$OUT/corner_scenes/proc-train" --decks "$OUT/procdecks" --split train --n 2000 --seed 12
$R -m vision.train.corner_data "$OUT/corner_scenes/val" --decks "$OUT/decks" --split val --n 200 --seed 11

# the corner finder first: the reader's last stage is taught on its errors
$T -m vision.train.corner_net train --scenes "$OUT/corner_scenes/train" "$OUT/corner_scenes/proc-train" \
  --out "$OUT/runs/corners" --minutes "$CORNER_MINUTES" --val "$OUT/corner_scenes/val"
$T -m vision.train.corner_net export --run "$OUT/runs/corners" --onnx models/cards-corners.onnx

# rectified corner crops for the reader (each file is made once)
C="$OUT/reader_crops"
crops() {  # crops FILE ARGS...: vision.train.reader_data, unless FILE is already there
  local file="$C/$1"; shift
  [ -f "$file" ] || $R -m vision.train.reader_data "$file" --workers 2 "$@"
}
crops val.npz --decks "$OUT/decks" "$OUT/procdecks" --split val --n 8000 --scenes "$OUT/corner_scenes/val" \
  --max-scenes 200 --seed 1
crops debian-train.npz --decks "$OUT/decks" --split train --n 50000 --scenes "$OUT/corner_scenes/train" \
  --max-scenes 3000 --seed 0
crops proc-train.npz --decks "$OUT/procdecks" --split train --n 90000 --seed 2
crops proc-train-b.npz --decks "$OUT/procdecks" --split train --n 90000 --seed 3
crops debian-train-b.npz --decks "$OUT/decks" --split train --n 50000 --seed 4
crops proc-train-c.npz --decks "$OUT/procdecks" --split train --n 60000 --seed 5 --fanned
crops debian-train-c.npz --decks "$OUT/decks" --split train --n 30000 --seed 6 --fanned
[ -f "$OUT/finder_errors.npy" ] || $R -m vision.train.finder_errors "$OUT/finder_errors.npy" \
  --scenes "$OUT/corner_scenes/train" --max-scenes 600
E=(--finder-errors "$OUT/finder_errors.npy" --fanned)
# (session 15: every crop file is labelled with its index's legibility, ILLEGIBLE where the camera smeared it;
# the "-l" files replaced session 13's "-e" ones, cut the same way before legibility was measured)
crops val-l.npz --decks "$OUT/decks" "$OUT/procdecks" --split val --n 8000 --scenes "$OUT/corner_scenes/val" \
  --max-scenes 200 --seed 1 --finder-errors "$OUT/finder_errors.npy"
crops debian-train-l.npz --decks "$OUT/decks" --split train --n 50000 --scenes "$OUT/corner_scenes/train" \
  --max-scenes 3000 --seed 30 "${E[@]}"
crops proc-train-l.npz --decks "$OUT/procdecks" --split train --n 90000 --seed 31 "${E[@]}"

# the reader, in three stages on one run, then its 8-bit graph and the thresholds
RUN="$OUT/runs/reader5"
$T -m vision.train.reader_net train --data "$C/debian-train.npz" "$C/proc-train.npz" "$C/debian-train-b.npz" \
  "$C/proc-train-b.npz" --val "$C/val.npz" --out "$RUN" --minutes "$READER_MINUTES_1"
$T -m vision.train.reader_net train --data "$C/debian-train.npz" "$C/proc-train.npz" "$C/debian-train-b.npz" \
  "$C/proc-train-b.npz" "$C/debian-train-c.npz" "$C/proc-train-c.npz" --val "$C/val.npz" --out "$RUN" \
  --minutes "$READER_MINUTES_2"
$T -m vision.train.reader_net train --data "$C/debian-train-l.npz" "$C/proc-train-l.npz" "$C/debian-train-b.npz" \
  "$C/proc-train-b.npz" --val "$C/val-l.npz" --out "$RUN" --minutes "$READER_MINUTES_3"
if [ "$READER_MINUTES_4" != 0 ]; then
  # (session 16) where the trained finder fires on no card: phones, tiles, pips, the cloth's pattern; the validation
  # file joins them to val-l's crops
  crops false-train.npz --decks "$OUT/decks" --split train --n 0 --false-corners \
    --scenes "$OUT/corner_scenes/train" "$OUT/corner_scenes/proc-train" --max-scenes 8000
  crops false-val.npz --decks "$OUT/decks" --split val --n 0 --false-corners --scenes "$OUT/corner_scenes/val" \
    --max-scenes 200
  [ -f "$C/val-n.npz" ] || $R -m vision.train.reader_data "$C/val-n.npz" --join "$C/val-l.npz" "$C/false-val.npz"
  $T -m vision.train.reader_net train --data "$C/debian-train-l.npz" "$C/proc-train-l.npz" "$C/false-train.npz" \
    --val "$C/val-n.npz" --out "$RUN" --minutes "$READER_MINUTES_4"
fi
if [ "$READER_MINUTES_5" != 0 ]; then
  # (session 20) swapped corners taught as no index: the finder swaps the edges of about one corner in seven
  crops proc-swap.npz --decks "$OUT/procdecks" --split train --n 30000 --seed 51 "${E[@]}" --swapped
  crops debian-swap.npz --decks "$OUT/decks" --split train --n 20000 --seed 52 "${E[@]}" --swapped
  crops val-swap.npz --decks "$OUT/decks" "$OUT/procdecks" --split val --n 3000 --seed 53 \
    --finder-errors "$OUT/finder_errors.npy" --swapped
  [ -f "$C/val-s.npz" ] || $R -m vision.train.reader_data "$C/val-s.npz" --join "$C/val-l.npz" "$C/val-swap.npz"
  $T -m vision.train.reader_net train --data "$C/debian-train-l.npz" "$C/proc-train-l.npz" "$C/debian-train-b.npz" \
    "$C/proc-train-b.npz" "$C/proc-swap.npz" "$C/debian-swap.npz" --val "$C/val-s.npz" --out "$RUN" \
    --minutes "$READER_MINUTES_5" --lr 5e-3
fi
$T -m vision.train.reader_net export --run "$RUN" --onnx models/cards-corner-reader.float.onnx
# the runtime reads with the 8-bit graph, calibrated on validation crops (2.7x as fast, the same top-1)
$T -m vision.train.quantise corner-reader --float models/cards-corner-reader.float.onnx --crops "$C/val-l.npz" \
  --out models/cards-corner-reader.onnx
# (session 17) the corner refiner: each found corner's edges measured again on a patch around it, taught on the
# trained finder's own frames
[ -d "$OUT/refiner/val" ] || $R -m vision.train.refiner_data "$OUT/refiner/val" --scenes "$OUT/corner_scenes/val"
$R -m vision.train.refiner_data "$OUT/refiner/train" --scenes "$OUT/corner_scenes/train" \
  "$OUT/corner_scenes/proc-train" --seed 1
$T -m vision.train.refiner_net train --data "$OUT/refiner/train" --val "$OUT/refiner/val" --out "$OUT/runs/refiner" \
  --minutes "$REFINER_MINUTES"
$T -m vision.train.refiner_net export --run "$OUT/runs/refiner" --onnx models/cards-corner-refiner.float.onnx
$T -m vision.train.quantise corner-refiner --float models/cards-corner-refiner.float.onnx \
  --patches "$OUT/refiner/val" --out models/cards-corner-refiner.onnx
$R -m vision.train.tune_rectified --decks "$OUT/decks" --procedural "$OUT/procdecks" --scenes 300
# (session 20) after a new reader, `--calibration-only` keeps the cut-offs and fits only the calibration curves: the
# full tune's face-down choices cost precision on fresh scenes (models/cards-corners.md, "Session 20")
echo "train-cards-v2: models/cards-corners.onnx, cards-corner-reader.onnx (.float.onnx), cards-corner-refiner.onnx"\
  "(.float.onnx), cards-corners-thresholds.json"
