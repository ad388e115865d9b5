"""Perfectly placed observations of Loot the Loop tables, for decoder tests without pictures or models: each card
where the table convention puts it (deck cascade, notes, score pile, or setup piles), read with a chosen
probability, with `changed` set where the label at a place differs from the previous table's."""

from __future__ import annotations

import numpy as np

from games.loot_the_loop.engine import LootTheLoop
from tracker.loot_the_loop import DECK_SHOWN, LABELS, PILE_SHOWN, STEP_SHARE
from tracker.sightings import BACK, Sighting
from tracker.snapshot import Snapshot, TableObject

CARD_W, CARD_H = 60.0, 84.0
DECK_AT = (600.0, 560.0)
NOTES_AT = ((760.0, 300.0), (840.0, 300.0), (920.0, 300.0))
SCORE_AT = (1000.0, 560.0)
PILES_AT = ((400.0, 560.0), (600.0, 560.0), (800.0, 560.0))


def card_quad(cx: float, cy: float) -> np.ndarray:
    w, h = CARD_W / 2, CARD_H / 2
    return np.array([[cx - w, cy - h], [cx + w, cy - h], [cx + w, cy + h], [cx - w, cy + h]], np.float32)


def places(core: dict) -> dict[str, tuple[str, np.ndarray]]:
    """Place name -> (label, outline) for what a camera sees of the engine core `to_dict()['state']`."""
    step = STEP_SHARE * CARD_H
    out: dict[str, tuple[str, np.ndarray]] = {}
    if core["phase"] == "setup":
        for p, (pile, ups) in enumerate(zip(core["piles"], core["piles_up"], strict=True)):
            for i in range(PILE_SHOWN):
                x, y = PILES_AT[p]
                out[f"pile {p} {i}"] = (pile[i] if ups[i] else BACK, card_quad(x, y - i * step))
        return out
    for i, (card, up) in enumerate(zip(core["deck"][:DECK_SHOWN], core["up"][:DECK_SHOWN], strict=True)):
        out[f"deck {i}"] = (card if up else BACK, card_quad(DECK_AT[0], DECK_AT[1] - i * step))
    for k, card in enumerate(core["notes"]):
        out[f"note {card}"] = (card, card_quad(*NOTES_AT[k]))
    if core["score"]:
        out["score"] = (core["score"][-1], card_quad(*SCORE_AT))
    return out


def snapshot(
    core: dict, before: dict | None, frame: int, p: float = 0.95, misread: dict[str, str] | None = None
) -> Snapshot:
    """The table of `core` as a snapshot; `misread` maps a place name to the label read there instead (with
    probability 0.99, the worst kind of error: confident and wrong)."""
    seen = places(core)
    old = places(before) if before is not None else {}
    objects = []
    for name, (label, quad) in seen.items():
        read = (misread or {}).get(name)
        probs = {read: 0.99} if read else {label: p}
        face_up = label != BACK
        sighting = Sighting(probs, quad, face_up=face_up)
        changed = 1.0 if before is None or old.get(name, ("", None))[0] != label else 0.0
        objects.append(TableObject(sighting.log_probs(LABELS), quad, 3, face_up, changed))
    return Snapshot(objects, frame, frame / 30.0, 3, 0.05 if before is not None else 1.0, 1280, 720)


def illegal_explore(state: LootTheLoop) -> str | None:
    """An explore the rules forbid here that would leave the game going with a face-up top card (a table the
    tracker must flag, not apply), or None."""
    for n in range(2, 11):
        if state.is_legal(f"explore {n}"):
            continue
        moved = state.clone()
        moved.force(f"explore {n}")
        if moved.up[0] and not moved.is_over:
            return f"explore {n}"
    return None
