"""Piece sets: the one format every flat game component comes in, standard decks included.

A piece set is a folder of pictures plus a `pieces.json` that says what each picture is in the physical world:

    {"format": 1, "game": "loop", "name": "loop-classic", "family": "loop-classic",
     "pieces": {"7r":   {"kind": "card", "w_mm": 63, "h_mm": 88, "back": "BACK",
                         "index": [[0.04, 0.03, 0.22, 0.2], [0.78, 0.8, 0.96, 0.97]]},
                "BACK": {"kind": "card", "w_mm": 63, "h_mm": 88, "back": null}}}

- A piece's **code** is the string its game engine uses (`7r` for LOOP, `12` or `L` for Bag-O-Loot, a catalogue id
  for Loot Roll, `A07` or `ren2` for The LOOP), so a recogniser's label is directly an engine identifier.
- `kind` is one of KINDS; `w_mm`, `h_mm` its printed size; `back` names the picture of its other side (several
  pieces share one back picture), or null for a piece that is the same both sides or never turned over.
- `index` lists the regions (fractions of the picture: x0, y0, x1, y1) where the piece prints what it is small
  enough to be read when the rest is covered: the corner indices of a card. Detection labels are drawn from them.
- Pictures are `<code>.png` (RGBA: alpha is the silhouette, so round tokens and shaped tiles are exact) or JPEG,
  at any resolution whose aspect matches `w_mm / h_mm`.

A standard deck directory (`deckdir.py`) is a piece set too: `from_deck` adapts it, so the scene engine has one
path for every game's components.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from vision.synth.deckdir import BACK, JOKERS, Deck, DeckError, LazyImages, read_bgra

FORMAT = 1
KINDS = ("card", "tile", "token", "board")
GAMES = ("loot-the-loop", "loop", "bag-o-loot", "loot-roll", "the-loop")
ASPECT_TOLERANCE = 0.04
MIN_PIXELS_PER_MM = 1.0
CARD_W_MM = 63.0
CARD_H_MM = 88.0
# A standard card's two corner indices (rank over suit), top-left and its 180-degree twin; a back's corners are
# labelled too, since a detector finds face-down cards by their corners as well.
STANDARD_INDEX = ((0.0, 0.0, 0.18, 0.25), (0.82, 0.75, 1.0, 1.0))


class PieceSetError(DeckError):
    """A piece set that cannot be used; the message names the file, the field and what was expected."""


@dataclass(frozen=True)
class PieceInfo:
    code: str
    kind: str
    size_mm: tuple[float, float]  # printed width, height
    back: str | None  # picture name of the other side; None when there is no distinct back
    index: tuple[tuple[float, float, float, float], ...] = ()  # corner-index regions, fractions of the picture
    label: str = ""  # the class a recogniser reports when it differs from the code (a second joker is a 'JOKER')


@dataclass(frozen=True)
class PieceSet:
    """A validated piece set. Pictures load on first use and are cached per process."""

    name: str
    family: str
    game: str
    path: Path
    pieces: Mapping[str, PieceInfo]
    files: Mapping[str, Path] = field(repr=False)
    size: tuple[int, int] | None = field(default=None, repr=False)  # every picture scaled to this (a deck's)

    @property
    def codes(self) -> tuple[str, ...]:
        """Every piece that can lie on the table, backs (pictures only named as some piece's back) excluded."""
        backs = {info.back for info in self.pieces.values() if info.back}
        return tuple(code for code in self.pieces if code not in backs or self.pieces[code].back is not None)

    def image(self, name: str) -> np.ndarray:
        """A picture (a piece's face or a back) as BGRA uint8."""
        return self._images[name]

    def label(self, name: str) -> str:
        """The class name for a picture: a piece's label, else its code; backs are their own class."""
        info = self.pieces.get(name)
        return (info.label or name) if info else name

    def side(self, code: str, face_up: bool) -> str:
        """The picture seen from above: the face, or the back when it is face down and has one."""
        back = self.pieces[code].back
        return code if face_up or back is None else back

    @cached_property
    def _images(self) -> dict[str, np.ndarray]:
        return LazyImages(self.files, self.size)


def from_deck(deck: Deck, game: str = "loot-the-loop") -> PieceSet:
    """A standard deck directory seen as a piece set: 63 x 88 mm cards sharing one back, indices in two corners."""
    size = (CARD_W_MM, CARD_H_MM)
    pieces = {
        code: PieceInfo(code, "card", size, BACK, STANDARD_INDEX, "JOKER" if code in JOKERS else "")
        for code in deck.codes
    }
    pieces[BACK] = PieceInfo(BACK, "card", size, None, STANDARD_INDEX)
    return PieceSet(deck.name, deck.family, game, deck.path, pieces, dict(deck.files), deck.size)


_ADAPTED: dict[Path, PieceSet] = {}


def as_piece_set(components: Deck | PieceSet) -> PieceSet:
    """Scenes take decks and piece sets alike; a deck is adapted once per process."""
    if isinstance(components, PieceSet):
        return components
    if components.path not in _ADAPTED:
        _ADAPTED[components.path] = from_deck(components)
    return _ADAPTED[components.path]


# ----------------------------------------------------------------------------------------------------- loading


def load_piece_set(path: str | Path) -> PieceSet:
    """Validate a piece-set folder; a PieceSetError lists every problem, each with its file and field."""
    root = Path(path)
    meta = root / "pieces.json"
    if not root.is_dir():
        raise PieceSetError(f"{root}: not a directory (a piece set holds pieces.json and one picture per piece)")
    if not meta.is_file():
        raise PieceSetError(f"{meta}: missing (it lists every piece with its kind, size in mm and back)")
    try:
        data = json.loads(meta.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PieceSetError(f"{meta}: not readable JSON ({err})") from err
    problems: list[str] = []
    if not isinstance(data, dict):
        raise PieceSetError(f"{meta}: expected an object with 'game', 'name', 'family' and 'pieces'")
    if data.get("format", FORMAT) != FORMAT:
        problems.append(f"'format' is {data.get('format')!r}; expected {FORMAT}")
    game = data.get("game")
    if game not in GAMES:
        problems.append(f"'game' is {game!r}; expected one of {', '.join(GAMES)}")
    name = data.get("name", root.name)
    family = data.get("family", name)
    if not isinstance(name, str) or not isinstance(family, str):
        problems.append("'name' and 'family' must be strings")
    raw = data.get("pieces")
    if not isinstance(raw, dict) or not raw:
        problems.append("'pieces' must be a non-empty object mapping each code to its kind, w_mm, h_mm and back")
        raw = {}
    pieces: dict[str, PieceInfo] = {}
    for code, entry in raw.items():
        info = _piece(str(code), entry, problems)
        if info is not None:
            pieces[info.code] = info
    for info in pieces.values():
        if info.back is not None and info.back not in pieces:
            problems.append(f"pieces.{info.code}.back: '{info.back}' is not a piece in this set (add its entry)")
    files = _picture_files(root)
    for code, info in pieces.items():
        problems += _picture_problems(code, info, files)
    if problems:
        raise PieceSetError(f"piece set '{meta}': " + "; ".join(problems))
    return PieceSet(str(name), str(family), str(game), root, pieces, {c: files[c] for c in pieces})


def _piece(code: str, entry: object, problems: list[str]) -> PieceInfo | None:
    where = f"pieces.{code}"
    if not isinstance(entry, dict):
        problems.append(f"{where}: expected an object with kind, w_mm, h_mm, back")
        return None
    kind, w, h, back = entry.get("kind"), entry.get("w_mm"), entry.get("h_mm"), entry.get("back")
    before = len(problems)
    if kind not in KINDS:
        problems.append(f"{where}.kind is {kind!r}; expected one of {', '.join(KINDS)}")
    for key, value in (("w_mm", w), ("h_mm", h)):
        if not isinstance(value, int | float) or isinstance(value, bool) or not 3 <= value <= 1000:
            problems.append(f"{where}.{key} is {value!r}; expected a size in millimetres, 3-1000")
    if back is not None and not isinstance(back, str):
        problems.append(f"{where}.back is {back!r}; expected a piece code or null")
    index = _regions(entry.get("index", []), f"{where}.index", problems)
    label = entry.get("label", "")
    if not isinstance(label, str):
        problems.append(f"{where}.label is {label!r}; expected the class name as a string")
    if len(problems) > before:
        return None
    return PieceInfo(code, str(kind), (float(w), float(h)), back, index, label)  # type: ignore[arg-type]


def _regions(value: object, where: str, problems: list[str]) -> tuple[tuple[float, float, float, float], ...]:
    ok = isinstance(value, list) and all(
        isinstance(r, list)
        and len(r) == 4
        and all(isinstance(v, int | float) and 0 <= v <= 1 for v in r)
        and r[0] < r[2]
        and r[1] < r[3]
        for r in value
    )
    if not ok:
        problems.append(f"{where} is {value!r}; expected a list of [x0, y0, x1, y1] fractions with x0 < x1, y0 < y1")
        return ()
    return tuple((float(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in value)  # type: ignore[union-attr]


def _picture_files(root: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for file in sorted(root.iterdir()):
        if file.suffix.lower() in (".png", ".jpg", ".jpeg") and file.stem not in files:
            files[file.stem] = file
    return files


def _picture_problems(code: str, info: PieceInfo, files: Mapping[str, Path]) -> list[str]:
    if code not in files:
        return [f"pieces.{code}: no picture {code}.png (each piece needs one, named by its code)"]
    try:
        image = read_bgra(files[code])
    except DeckError as err:
        return [str(err)]
    h_px, w_px = image.shape[:2]
    w_mm, h_mm = info.size_mm
    problems = []
    if abs((h_px / w_px) / (h_mm / w_mm) - 1) > ASPECT_TOLERANCE:
        problems.append(
            f"{files[code].name} is {w_px}x{h_px}, but pieces.{code} is {w_mm:g}x{h_mm:g} mm "
            f"(expected the same shape: height/width {h_mm / w_mm:.2f}, not {h_px / w_px:.2f})"
        )
    if w_px / w_mm < MIN_PIXELS_PER_MM:
        problems.append(
            f"{files[code].name} is only {w_px} pixels for {w_mm:g} mm; expected at least {MIN_PIXELS_PER_MM:g} px/mm"
        )
    return problems


def write_piece_set(
    root: str | Path,
    game: str,
    name: str,
    family: str,
    pieces: Sequence[PieceInfo],
    pictures: Mapping[str, np.ndarray],
) -> PieceSet:
    """Write pictures (BGR or BGRA) and pieces.json, then load the folder back, so a generator cannot write a set
    that the loader would refuse."""
    import cv2

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for code, picture in pictures.items():
        if not cv2.imwrite(str(root / f"{code}.png"), picture):
            raise PieceSetError(f"{root / code}.png: could not be written")
    entries = {
        p.code: {
            "kind": p.kind,
            "w_mm": round(p.size_mm[0], 2),
            "h_mm": round(p.size_mm[1], 2),
            "back": p.back,
            **({"index": [[round(v, 4) for v in r] for r in p.index]} if p.index else {}),
            **({"label": p.label} if p.label else {}),
        }
        for p in pieces
    }
    document = {"format": FORMAT, "game": game, "name": name, "family": family, "pieces": entries}
    (root / "pieces.json").write_text(json.dumps(document, indent=1) + "\n")
    return load_piece_set(root)
