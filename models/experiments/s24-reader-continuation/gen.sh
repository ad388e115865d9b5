#!/usr/bin/env bash
# session 24: data for a reader continuation on the recipe's whole data plus new designs
set -euo pipefail
cd /work/main
R=.venv/bin/python
C=out/reader_crops
E="--finder-errors out/finder_errors.npy --fanned"
[ -f out/corner_scenes/train/.done ] || { $R -m vision.train.corner_data out/corner_scenes/train --decks out/decks --split train --n 3000 --seed 10 --workers 2 && touch out/corner_scenes/train/.done; }
[ -f out/finder_errors.npy ] || $R -m vision.train.finder_errors out/finder_errors.npy --scenes out/corner_scenes/train --max-scenes 600
[ -f $C/s24-debian-scenes.npz ] || $R -m vision.train.reader_data $C/s24-debian-scenes.npz --decks out/decks --split train --n 20000 --scenes out/corner_scenes/train --max-scenes 3000 --seed 80 --workers 2 $E
[ -f out/procdecks4/.done ] || { $R -m vision.synth.procedural out/procdecks4 --n 240 --seed 6 --split train && touch out/procdecks4/.done; }
[ -f $C/s24-proc4-train.npz ] || $R -m vision.train.reader_data $C/s24-proc4-train.npz --decks out/procdecks4 --split train --n 60000 --seed 81 --workers 2 $E
[ -f $C/s24-proc4-swap.npz ] || $R -m vision.train.reader_data $C/s24-proc4-swap.npz --decks out/procdecks4 --split train --n 12000 --seed 82 --workers 2 --swapped
echo DONE
