"""Deck directories: the one format every deck design comes in (Debian's decks, a player's own photographs).

A deck directory holds one image per card, named by the card code:

    AS.png 2S.png ... 10S.png JS.png QS.png KS.png   (suits S H D C)
    JOKER.png                                        (optional; JOKER2.png too, where a deck has a second)
    BACK.png

The joker is optional because some real deck designs have none; they still teach the recogniser 52 faces and a
back. A game that needs the joker (Loot the Loop) checks `"JOKER" in deck.codes` itself.

PNG or JPEG, portrait, roughly the 63 x 88 mm shape of a playing card. The pictures need not be one size (a
player's scans and photographs never are, the back and the joker least of all): the deck's card size is the
median picture's, and `Deck.image` returns every card scaled to it. Only the shape must agree: a picture whose
height/width is more than ASPECT_TOLERANCE off the deck's is refused, since scaling it would squash the card.
A file `deck.json` beside them may name the deck and its design family (decks sharing court art are one family,
kept wholly in one of train / validation / test); other files that are not pictures (notes, `Thumbs.db`,
hidden files) are ignored, but a picture not named by a card code (`IMG_1234.jpg`) is refused, as it is
probably a card under the wrong name. Validation reports every problem with the file and what was expected,
so a player photographing their own deck can fix it in one go.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import cv2
import numpy as np

from vision.recognise.labels import BACK, FACE_CODES  # the runtime owns the vocabulary
from vision.recognise.labels import RANKS as RANKS
from vision.recognise.labels import SUITS as SUITS

JOKERS = ("JOKER", "JOKER2")
REQUIRED: tuple[str, ...] = (*FACE_CODES, BACK)
EXTENSIONS = (".png", ".jpg", ".jpeg")
CARD_NAMES = "AS..KS, AH..KH, AD..KD, AC..KC (ranks A 2-10 J Q K), JOKER, JOKER2, BACK"  # for messages
# Pictures in a format the loader does not take: named as a problem rather than silently skipped.
OTHER_IMAGE_EXTENSIONS = (".webp", ".bmp", ".gif", ".tif", ".tiff", ".heic", ".heif")
ASPECT_RANGE = (1.25, 1.70)  # height / width; a poker card is 88 / 63 = 1.40, a bridge card 1.56
# How far a picture's height/width may be from the deck's (relative) before it is refused rather than scaled.
# Hand-cropped photographs of one deck differ by a few percent (a crop a few pixels inside or outside an edge, a
# little perspective left in), and a stretch that small does not change how an index reads. What must be caught
# lies well beyond: a bridge card among poker cards is 11% off (1.56 / 1.40), a photograph not cropped to the
# card 10% or more, a landscape picture about 50%. 6% sits between the two.
ASPECT_TOLERANCE = 0.06
MIN_WIDTH = 60


class DeckError(ValueError):
    """A deck directory that cannot be used; the message lists every problem found."""


@dataclass(frozen=True)
class Deck:
    """A validated deck directory. Images load on first use (a deck is 55 files; most scenes use a few)."""

    name: str
    family: str
    path: Path
    files: dict[str, Path] = field(repr=False)
    size: tuple[int, int]  # width, height in pixels

    @property
    def codes(self) -> tuple[str, ...]:
        """Every card this deck has a picture of, BACK excluded."""
        return tuple(code for code in (*FACE_CODES, *JOKERS) if code in self.files)

    def image(self, code: str) -> np.ndarray:
        """The card as a BGRA image at the deck's `size` (opaque where the file has no alpha)."""
        return self._images[code]

    @cached_property
    def _images(self) -> LazyImages:
        return LazyImages(self.files, self.size)


class LazyImages(dict[str, np.ndarray]):
    """Pictures read on first use (a deck is 55 files, a piece set up to 130; most scenes use a few), each scaled
    to `size` (width, height) when one is given."""

    def __init__(self, files: Mapping[str, Path], size: tuple[int, int] | None = None) -> None:
        super().__init__()
        self._files = files
        self._size = size

    def __missing__(self, code: str) -> np.ndarray:
        if code not in self._files:
            raise KeyError(f"no picture for '{code}' (expected a file {code}.png beside the others)")
        image = read_bgra(self._files[code], self._size)
        self[code] = image
        return image


def read_bgra(path: Path, size: tuple[int, int] | None = None) -> np.ndarray:
    """Read an image as BGRA uint8, scaled to `size` (width, height) if given, or raise DeckError naming the file."""
    data = np.fromfile(str(path), dtype=np.uint8) if path.is_file() else np.empty(0, np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_UNCHANGED) if data.size else None
    if image is None:
        raise DeckError(f"{path}: not an image (expected a PNG or JPEG picture of one card)")
    if image.dtype != np.uint8:
        image = (image / 257).astype(np.uint8) if image.dtype == np.uint16 else image.astype(np.uint8)
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGRA)
    elif image.shape[2] == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    if size is not None and (image.shape[1], image.shape[0]) != tuple(size):
        image = resize_bgra(image, size)
    return image


def resize_bgra(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Scale a BGRA picture to `size` (width, height): area averaging when it shrinks, bicubic when it grows.
    Where the picture has transparency its colours are premultiplied by alpha while scaling, so the transparent
    rounded corners of a card do not bleed a dark fringe into its edge."""
    shrinking = size[0] * size[1] < image.shape[0] * image.shape[1]
    interpolation = cv2.INTER_AREA if shrinking else cv2.INTER_CUBIC
    alpha = image[..., 3:]
    if alpha.min() == 255:
        return cv2.resize(image, size, interpolation=interpolation)
    premultiplied = image.astype(np.float32)
    premultiplied[..., :3] *= premultiplied[..., 3:] / 255.0
    scaled = np.clip(cv2.resize(premultiplied, size, interpolation=interpolation), 0.0, 255.0)
    a = scaled[..., 3:]
    scaled[..., :3] = np.where(a > 0, scaled[..., :3] * 255.0 / np.maximum(a, 1e-3), 0.0)
    return np.clip(scaled + 0.5, 0, 255).astype(np.uint8)


def load_deck(path: str | Path) -> Deck:
    """Validate a deck directory and return it; a DeckError lists every problem with its file."""
    root = Path(path)
    if not root.is_dir():
        raise DeckError(f"{root}: not a directory (a deck directory holds AS.png ... KC.png, BACK.png, JOKER.png)")
    files, problems = _card_files(root)
    missing = [code for code in REQUIRED if code not in files]
    if missing:
        problems.insert(0, f"missing {_listing(missing)} (each card needs a file named by its code, e.g. QH.png)")
    sizes: dict[str, tuple[int, int]] = {}
    for code, file in files.items():
        try:
            image = read_bgra(file)
        except DeckError as err:
            problems.append(str(err).replace(f"{file}: ", f"{file.name}: "))
            continue
        sizes[code] = (image.shape[1], image.shape[0])
    size = _common_size(sizes)
    if size is not None:
        problems += _size_problems(sizes, size, files)
    if problems:
        raise DeckError(f"deck '{root}': " + "; ".join(problems))
    assert size is not None
    name, family = _identity(root)
    return Deck(name=name, family=family, path=root, files=files, size=size)


def _card_files(root: Path) -> tuple[dict[str, Path], list[str]]:
    """The picture of each card, and the problems with the pictures that are none: a picture not named by a card
    code, two pictures of one card, a card in a format that is not read. Other files (deck.json, notes, Thumbs.db)
    and hidden ones (.DS_Store, the ._AS.png copies macOS leaves on USB sticks) are not pictures of cards."""
    files: dict[str, Path] = {}
    stray: list[str] = []
    problems: list[str] = []
    for file in sorted(root.iterdir()):
        suffix = file.suffix.lower()
        if file.name.startswith(".") or not file.is_file() or suffix not in (*EXTENSIONS, *OTHER_IMAGE_EXTENSIONS):
            continue
        code = file.stem.upper()
        if code not in (*FACE_CODES, *JOKERS, BACK):
            stray.append(file.name)
        elif suffix not in EXTENSIONS:
            problems.append(f"{file.name}: not PNG or JPEG (save it as {code}.png)")
        elif code in files:
            problems.append(f"{files[code].name} and {file.name} are both {code} (keep one)")
        else:
            files[code] = file
    if stray:
        problems.append(
            f"{_listing(stray)} {'is' if len(stray) == 1 else 'are'} not named by a card code; expected pictures "
            f"named {CARD_NAMES} (.png or .jpg): rename each to the card it shows, or move it out"
        )
    return files, problems


def _common_size(sizes: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    if not sizes:
        return None
    values = sorted(sizes.values())
    return values[len(values) // 2]


def _size_problems(sizes: dict[str, tuple[int, int]], size: tuple[int, int], files: dict[str, Path]) -> list[str]:
    """Pictures of any size are scaled to the deck's; what is refused is a shape unlike the deck's (or a deck whose
    shape is not a card's), and pictures too small to read."""
    width, height = size
    aspect = height / width
    problems = []
    odd = [
        f"{files[code].name} is {w}x{h} (height/width {h / w:.2f})"
        for code, (w, h) in sizes.items()
        if abs((h / w) / aspect - 1) > ASPECT_TOLERANCE
    ]
    if odd:
        problems.append(
            f"{_listing(odd)}, but the deck's cards are {width}x{height} (height/width {aspect:.2f}): a picture may "
            f"be any size, but its shape must be the cards' within {ASPECT_TOLERANCE:.0%} (crop it to the card's edges)"
        )
    if not ASPECT_RANGE[0] <= aspect <= ASPECT_RANGE[1]:
        problems.append(
            f"cards are {width}x{height} (height/width {aspect:.2f}); expected portrait cards with height/width "
            f"{ASPECT_RANGE[0]}-{ASPECT_RANGE[1]} (a poker card is 1.40): crop each photo to the card's edges"
        )
    if width < MIN_WIDTH:
        problems.append(f"cards are only {width} pixels wide; expected at least {MIN_WIDTH} so the indices can be read")
    else:
        small = [f"{files[code].name} is {w}x{h}" for code, (w, h) in sizes.items() if w < MIN_WIDTH]
        if small:
            problems.append(
                f"{_listing(small)}: expected at least {MIN_WIDTH} pixels wide so the indices can be read "
                f"(the deck's cards are {width}x{height})"
            )
    return problems


def _identity(root: Path) -> tuple[str, str]:
    meta = root / "deck.json"
    if not meta.is_file():
        return root.name, root.name
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DeckError(f"{meta}: not readable JSON ({err})") from err
    if not isinstance(data, dict):
        raise DeckError(f"{meta}: expected an object with 'name' and 'family'")
    name = data.get("name", root.name)
    family = data.get("family", name)
    if not isinstance(name, str) or not isinstance(family, str):
        raise DeckError(f"{meta}: 'name' and 'family' must be strings")
    return name, family


def _listing(items: list[str], most: int = 8) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def load_decks(path: str | Path) -> list[Deck]:
    """A deck directory, or a folder of them (every subfolder must be a valid deck; hidden ones are skipped)."""
    root = Path(path)
    if not root.is_dir():
        raise DeckError(f"{root}: not a directory (give a deck directory or a folder of deck directories)")
    if any(root.glob("*.png")) or any(root.glob("*.jpg")):
        return [load_deck(root)]
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise DeckError(f"{root}: holds no deck directories (render some with 'tabletop synth decks')")
    return [load_deck(folder) for folder in folders]
