"""A deck directory from photographs of the deck laid out on the table, for enrolment without a scanner.

The player lays the cards face up, none overlapping, in reading order (left to right, row by row, across as many
photographs as it takes): AS 2S ... KS, AH ... KH, AD ... KD, AC ... KC, then the joker if the deck has one, then
one card face down for the back. The finder outlines every card, reading order names them, and each is warped
flat and upright into the deck directory (`vision.synth.deckdir`) that enrolment then learns from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.recognise.crops import card_frame
from vision.recognise.finder import Finder, Found
from vision.recognise.labels import BACK, FACE_CODES

CARD_PX = (250, 350)  # width, height of each picture written: a poker card's shape
MIN_SCORE = 0.5


class LayoutError(ValueError):
    """The photographs do not show the deck as the layout asks."""


@dataclass(frozen=True)
class LayoutResult:
    deck_dir: Path
    codes: tuple[str, ...]
    photos: int


def reading_order(found: Sequence[Found]) -> list[Found]:
    """Rows top to bottom (a new row where the next card starts below half a card's height), each left to right."""
    if not found:
        return []
    heights = [max(np.linalg.norm(f.quad[1] - f.quad[0]), np.linalg.norm(f.quad[2] - f.quad[1])) for f in found]
    gap = 0.5 * float(np.median(heights))
    by_y = sorted(found, key=lambda f: f.quad[:, 1].mean())
    rows: list[list[Found]] = [[by_y[0]]]
    for f in by_y[1:]:
        if f.quad[:, 1].mean() - np.mean([g.quad[:, 1].mean() for g in rows[-1]]) > gap:
            rows.append([])
        rows[-1].append(f)
    return [f for row in rows for f in sorted(row, key=lambda f: f.quad[:, 0].mean())]


def upright(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = CARD_PX) -> np.ndarray:
    """The card warped flat, long side vertical, starting from its top-left-most corner (a 180-degree turn does
    not matter to a standard card: its indices sit in opposite corners)."""
    quad = card_frame(quad)
    w, h = size
    target = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return cv2.warpPerspective(image, cv2.getPerspectiveTransform(quad, target), size, flags=cv2.INTER_AREA)


def layout_deck(photos: Sequence[tuple[str, np.ndarray]], finder: Finder, out_dir: Path, name: str) -> LayoutResult:
    """Reads the laid-out deck from (name, picture) pairs and writes the deck directory."""
    faces: list[tuple[np.ndarray, Found]] = []
    backs: list[tuple[np.ndarray, Found]] = []
    counts = []
    for label, image in photos:
        found = [f for f in finder.find(image) if f.kind in ("card", "back") and f.score >= MIN_SCORE]
        for f in reading_order(found):
            (faces if f.kind == "card" else backs).append((image, f))
        counts.append(f"{label}: {sum(f.kind == 'card' for f in found)}")
    if len(faces) not in (52, 53):
        raise LayoutError(
            f"found {len(faces)} face-up cards in the layout ({', '.join(counts)}), expected 52, or 53 with a "
            "joker: lay every card face up with a gap around it, all in view (tabletop detect --annotate shows "
            "what was found)"
        )
    if len(backs) != 1:
        raise LayoutError(f"found {len(backs)} face-down cards, expected exactly one (for the back picture)")
    codes = [*FACE_CODES, "JOKER"][: len(faces)]
    out_dir.mkdir(parents=True, exist_ok=True)
    for code, (image, f) in zip(codes, faces, strict=True):
        cv2.imwrite(str(out_dir / f"{code}.png"), upright(image, f.quad))
    cv2.imwrite(str(out_dir / f"{BACK}.png"), upright(backs[0][0], backs[0][1].quad))
    (out_dir / "deck.json").write_text(json.dumps({"name": name, "family": f"enrolled-{name}"}))
    return LayoutResult(out_dir, (*codes, BACK), len(photos))
