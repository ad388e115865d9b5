#!/usr/bin/env bash
# session 25: one deck's own crops (enrolment adaptation experiment), val deck gnome-paris
set -euo pipefail
cd /work/main
R=.venv/bin/python; O=out/s25; D=${DECK:-gnome-paris}; S=${SPLIT:-val}
E="--finder-errors out/finder_errors.npy --fanned"
[ -f $O/$D-enrol-scenes/.done ] || { $R -m vision.train.corner_data $O/$D-enrol-scenes --decks out/decks/$D --split $S --n 300 --seed 902 --workers 2 && touch $O/$D-enrol-scenes/.done; }
[ -f $O/$D-train.npz ] || $R -m vision.train.reader_data $O/$D-train.npz --decks out/decks/$D --split $S --n 15000 --scenes $O/$D-enrol-scenes --max-scenes 300 --seed 900 --workers 2 $E
[ -f $O/$D-swap.npz ] || $R -m vision.train.reader_data $O/$D-swap.npz --decks out/decks/$D --split $S --n 3000 --seed 903 --workers 2 $E --swapped
[ -f $O/$D-scenes/.done ] || { $R -m vision.train.corner_data $O/$D-scenes --decks out/decks/$D --split $S --n 150 --seed 901 --workers 2 && touch $O/$D-scenes/.done; }
[ -f $O/$D-eval.npz ] || $R -m vision.train.reader_data $O/$D-eval.npz --decks out/decks/$D --split $S --n 0 --scenes $O/$D-scenes --max-scenes 150 --seed 904 --workers 2
echo DONE
