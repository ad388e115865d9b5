"""Session 25 (scratch, kept for the record): the tracker on the tracker bench's two gnome-dondorf games, read with
an enrolled deck head (`tabletop enrol out/decks/gnome-dondorf --adapt 10 --out HEAD`); the shipped reading is
`evaluate(folder, truth=False)` without the deck.

Usage: .venv/bin/python track_dondorf.py HEAD
"""

import json
import sys
from pathlib import Path

from tracker.bench import evaluate
from vision.recognise.enrol_rectified import load_deck_head


def main() -> None:
    head = load_deck_head(sys.argv[1])
    for game in ("random-2000-gnome-dondorf", "solver-2000-gnome-dondorf"):
        for name, deck in (("shipped", None), ("enrolled", head)):
            decoder = evaluate(Path("out/tracker_bench") / game, truth=False, deck=deck)["decoder"]
            plain = {k: v for k, v in decoder.items() if not isinstance(v, (list, dict))}
            print(game, name, json.dumps(plain), flush=True)


if __name__ == "__main__":
    main()
