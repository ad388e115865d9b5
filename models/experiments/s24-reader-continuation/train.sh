#!/usr/bin/env bash
# session 24: reader9 continued 60 minutes on the recipe's kinds of crops plus 480 new procedural designs, faded crops
set -euo pipefail
cd /work/main
while ! grep -q DONE /tmp/s24/gen.log; do sleep 20; done
T="env PYTHONPATH=/tmp/torchlib .venv/bin/python"
C=out/reader_crops; G=out/gpu/crops
mkdir -p out/runs/s24
[ -f out/runs/s24/last.pt ] || cp models/checkpoints/cards-corner-reader.last.pt out/runs/s24/last.pt
[ -f out/runs/s24/curve.jsonl ] || cp models/checkpoints/cards-corner-reader.curve.jsonl out/runs/s24/curve.jsonl
$T -m vision.train.reader_net train --data $C/s24-debian-scenes.npz $G/debian-train.npz $G/proc-train.npz \
  $G/proc3-train.npz $C/s24-proc4-train.npz $G/debian-swap.npz $G/proc3-swap.npz $C/s24-proc4-swap.npz \
  --val $C/val-cal.npz --out out/runs/s24 --minutes 260 --lr 5e-3
echo TRAINED
