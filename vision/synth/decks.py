"""Real deck art from Debian's card packages, rendered into deck directories (see DECKS.md).

Why these choices:
- Every card is rendered by librsvg (`rsvg-convert`), the renderer the GNOME package is drawn with, so the art is
  what the designers meant; no Python SVG binding is needed in the product's environment.
- GNOME sheets are cut on aisleriot's own 13 x 5 grid (rows clubs, diamonds, hearts, spades, then black joker,
  red joker, back): one render per deck instead of 55. Because a mis-cut deck would silently teach wrong labels,
  a few probe cards are also rendered alone (every other card hidden by CSS) and must land in their grid cells.
- KDE decks place cards anywhere on the sheet and `rsvg-convert -i` crops `<use>` clones wrongly, so each card is
  rendered alone (others hidden by CSS) at low resolution to find where it is, then the sheet is rendered once at
  full resolution and cut there.
- Each card is cropped to its opaque pixels (the card's edges; rounded corners stay transparent), every card of a
  deck is cut with one common window size so the deck validates, and rendering is oversampled then area-reduced
  so small indices stay sharp.
- A deck is written to a temporary directory and moved into place only when complete, so an interrupted run never
  leaves a directory that validates but is wrong; a directory that validates at the requested height is reused.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.synth.deckdir import FACE_CODES, RANKS, Deck, DeckError, load_deck

GNOME_PACKAGE = "gnome-cards-data"
KDE_PACKAGE = "kdegames-card-data-kf5"
GNOME_DIR = Path("/usr/share/aisleriot/cards")
KDE_DIR = Path("/usr/share/carddecks")
FAMILIES_FILE = Path(__file__).parent / "data" / "deck_families.json"

OVERSAMPLE = 1.25  # render this much larger than the output, then area-reduce
ALPHA_EDGE = 128  # a pixel at least half covered belongs to the card; faint shadows do not
SIZE_SLACK = 0.03  # a card's opaque box may differ this much from the deck's typical card before the deck is refused
LOCATE_HEIGHT = 1200  # sheet height in pixels for finding KDE cards
PROBE_HEIGHT = 400  # sheet height in pixels for the GNOME grid probes

_SVG_RANK = {"A": "1", "J": "jack", "Q": "queen", "K": "king"}
_SVG_SUIT = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}
_GNOME_ROWS = ("C", "D", "H", "S")  # aisleriot's row order; row 4 holds black joker, red joker, back
_GNOME_SPECIALS = {"JOKER": ("joker_black", 0), "JOKER2": ("joker_red", 1), "BACK": ("back", 2)}
_PROBES = ("QH", "AS", "2D", "KC", "JOKER", "JOKER2", "BACK")
_SKIPPED = {
    "gnome-tarocco": "a tarot deck (Tarocco Piemontese), not a standard French 52 + joker deck",
    "gnome-swiss-xvii": "Swiss-suited (roses, bells, acorns, shields), not French-suited",
    "kde-xskat-german": "German-suited (acorns, leaves, hearts, bells)",
}


class MissingPackageError(RuntimeError):
    """A Debian package with the card art is not installed."""


@dataclass(frozen=True)
class DeckSource:
    """One deck's SVG and where each card lives in it (an element id per card code)."""

    name: str
    svg: Path
    package: str
    layout: str  # "sheet": aisleriot 13 x 5 grid; "ids": cards anywhere, found by element id
    ids: dict[str, str]  # card code -> SVG element id


@dataclass(frozen=True)
class RenderResult:
    name: str
    rendered: bool
    reason: str = ""


# ----------------------------------------------------------------------------------------------- discovery


def package_version(package: str) -> str:
    """The installed Debian version of a package ('' when dpkg cannot tell)."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def require_package(directory: Path, package: str) -> None:
    """Raise MissingPackageError naming the apt-get command when a package's art directory is absent."""
    if not directory.is_dir() or not any(directory.rglob("*.svgz")):
        raise MissingPackageError(
            f"no card decks in {directory}: the Debian package '{package}' is missing; "
            f"install it with: apt-get install -y {package}"
        )


def svg_ids(svg: Path) -> set[str]:
    """Every element id in an SVG or SVGZ file."""
    raw = svg.read_bytes()
    text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    return {match.decode("utf-8", "replace") for match in re.findall(rb'\sid="([^"]+)"', text)}


def gnome_ids() -> dict[str, str]:
    """Aisleriot's element ids: suit first ('heart_queen'), jokers 'joker_black' / 'joker_red'."""
    ids = {code: f"{_SVG_SUIT[code[-1]]}_{_SVG_RANK.get(code[:-1], code[:-1])}" for code in FACE_CODES}
    ids.update({code: element for code, (element, _) in _GNOME_SPECIALS.items()})
    return ids


def kde_ids(available: set[str]) -> dict[str, str]:
    """KDE's element ids: rank first ('queen_heart'); jokers vary by deck ('joker' or 'black_joker'/'red_joker')."""
    ids = {code: f"{_SVG_RANK.get(code[:-1], code[:-1])}_{_SVG_SUIT[code[-1]]}" for code in FACE_CODES}
    ids["BACK"] = "back"
    jokers = [joker for joker in ("black_joker", "red_joker", "joker") if joker in available]
    for code, joker in zip(("JOKER", "JOKER2"), jokers[:2], strict=False):
        ids[code] = joker
    return ids


def gnome_deck_name(svg: Path) -> str:
    """'gnome-<file stem>'; the Cyrillic-named sheet gets a Latin name so every tool can handle it."""
    stem = {"Атласные": "atlasnye_ru"}.get(svg.stem, svg.stem)
    return f"gnome-{stem}"


def discover_sources(
    gnome_dir: Path = GNOME_DIR, kde_dir: Path = KDE_DIR
) -> tuple[list[DeckSource], list[RenderResult]]:
    """Every French-suited deck the packages hold, and the decks left out with the reason."""
    require_package(gnome_dir, GNOME_PACKAGE)
    require_package(kde_dir, KDE_PACKAGE)
    candidates = [
        DeckSource(gnome_deck_name(svg), svg, GNOME_PACKAGE, "sheet", gnome_ids()) for svg in _svgz(gnome_dir)
    ]
    for folder in sorted(path for path in kde_dir.glob("svg-*") if path.is_dir()):
        svg = _kde_svg(folder)
        if svg is not None:
            candidates.append(DeckSource(f"kde-{folder.name.removeprefix('svg-')}", svg, KDE_PACKAGE, "ids", {}))
    sources, skipped = [], []
    for source in candidates:
        reason = _SKIPPED.get(source.name)
        if reason is None:
            source, reason = _with_ids(source)
        if reason:
            skipped.append(RenderResult(source.name, False, reason))
        else:
            sources.append(source)
    return sources, skipped


def _svgz(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.svgz"))


def _kde_svg(folder: Path) -> Path | None:
    desktop = folder / "index.desktop"
    if desktop.is_file():
        match = re.search(r"^SVG=(.+)$", desktop.read_text(errors="replace"), re.MULTILINE)
        if match and (folder / match.group(1).strip()).is_file():
            return folder / match.group(1).strip()
    found = _svgz(folder)
    return found[0] if found else None


def _with_ids(source: DeckSource) -> tuple[DeckSource, str]:
    available = svg_ids(source.svg)
    ids = gnome_ids() if source.layout == "sheet" else kde_ids(available)
    if source.layout == "sheet" and "joker_red" not in available:
        ids.pop("JOKER2")
    missing = sorted(code for code, element in ids.items() if element not in available)
    if missing:
        return source, f"no artwork for {', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}"
    return DeckSource(source.name, source.svg, source.package, source.layout, ids), ""


# ----------------------------------------------------------------------------------------------- rendering


def rsvg(svg: Path, height: int, hidden: Iterable[str] = ()) -> np.ndarray:
    """Render a whole SVG sheet `height` pixels high as BGRA, with the given element ids hidden."""
    with tempfile.TemporaryDirectory() as tmp:
        css = Path(tmp) / "hide.css"
        selectors = ",".join(f'[id="{element}"]' for element in hidden)
        css.write_text(f"{selectors} {{ display: none !important; }}\n" if selectors else "\n")
        done = subprocess.run(
            ["rsvg-convert", "-u", "-a", "-h", str(height), "-s", str(css), str(svg)],
            capture_output=True,
            check=False,
        )
    image = cv2.imdecode(np.frombuffer(done.stdout, np.uint8), cv2.IMREAD_UNCHANGED) if done.stdout else None
    if done.returncode != 0 or image is None or image.ndim != 3 or image.shape[2] != 4:
        raise DeckError(f"rsvg-convert could not render {svg.name}: {done.stderr.decode(errors='replace').strip()}")
    return image


def opaque_box(image: np.ndarray, background: np.ndarray | None = None) -> tuple[int, int, int, int] | None:
    """(x, y, width, height) of the pixels at least half opaque (and not opaque in `background`), or None."""
    mask = image[:, :, 3] >= ALPHA_EDGE
    if background is not None:
        mask &= background[:, :, 3] < ALPHA_EDGE
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


def stray_art(source: DeckSource, height: int) -> np.ndarray:
    """The sheet with every card hidden: art that belongs to no card (spare backs, templates)."""
    return rsvg(source.svg, height, source.ids.values())


def _touches(background: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether art of no card is drawn inside the box (its one-pixel rim excluded: neighbours' edges bleed there)."""
    x, y, w, h = box
    return bool((background[y + 1 : y + h - 1, x + 1 : x + w - 1, 3] >= ALPHA_EDGE).any())


def sheet_cell(code: str) -> tuple[int, int]:
    """(column, row) of a card in aisleriot's 13 x 5 grid."""
    if code in _GNOME_SPECIALS:
        return _GNOME_SPECIALS[code][1], 4
    return RANKS.index(code[:-1]), _GNOME_ROWS.index(code[-1])


def locate_alone(source: DeckSource, code: str, height: int, background: np.ndarray) -> tuple[int, int, int, int]:
    """Where one card is on the sheet: rendered with every other card hidden, art of no card discounted.

    Refuses a card that shares its place with art of no card, since cutting it from the sheet would keep that art.
    """
    others = [element for other, element in source.ids.items() if other != code]
    box = opaque_box(rsvg(source.svg, height, others), background)
    if box is None:
        raise DeckError(f"card {code} ('{source.ids[code]}') renders as nothing")
    if _touches(background, box):
        raise DeckError(f"artwork that belongs to no card overlaps {code}")
    return box


def gnome_boxes(source: DeckSource, sheet: np.ndarray) -> dict[str, tuple[int, int, int, int]]:
    """Each card's opaque box inside its grid cell, after probes confirm the grid holds the named cards."""
    background = stray_art(source, PROBE_HEIGHT)
    for code in (probe for probe in _PROBES if probe in source.ids):
        box = locate_alone(source, code, PROBE_HEIGHT, background)
        small_w = PROBE_HEIGHT * sheet.shape[1] / sheet.shape[0]
        if _cell_of(box, small_w / 13, PROBE_HEIGHT / 5) != sheet_cell(code):
            raise DeckError(f"card {code} ('{source.ids[code]}') is not in its aisleriot grid cell {sheet_cell(code)}")
    cell_w, cell_h = sheet.shape[1] / 13, sheet.shape[0] / 5
    small = PROBE_HEIGHT / sheet.shape[0]
    boxes = {}
    for code in source.ids:
        col, row = sheet_cell(code)
        inner = (int(col * cell_w * small) + 1, int(row * cell_h * small) + 1, int(cell_w * small) - 2)
        if _touches(background, (*inner, int(cell_h * small) - 2)):
            raise DeckError(f"artwork that belongs to no card lies in the grid cell of {code}")
        x0, y0 = round(col * cell_w), round(row * cell_h)
        box = opaque_box(sheet[y0 : round((row + 1) * cell_h), x0 : round((col + 1) * cell_w)])
        if box is None:
            raise DeckError(f"card {code}: its grid cell is empty")
        boxes[code] = (box[0] + x0, box[1] + y0, box[2], box[3])
    return boxes


def kde_boxes(source: DeckSource) -> dict[str, tuple[int, int, int, int]]:
    """Each card's opaque box on a LOCATE_HEIGHT sheet, each card rendered alone; refuses overlapping cards."""
    background = stray_art(source, LOCATE_HEIGHT)
    boxes = {code: locate_alone(source, code, LOCATE_HEIGHT, background) for code in source.ids}
    for code, box in boxes.items():
        clash = [other for other, box2 in boxes.items() if other != code and _overlap(box, box2, 2)]
        if clash:
            raise DeckError(f"cards {code} and {clash[0]} overlap on the sheet, so they cannot be cut apart")
    return boxes


def _cell_of(box: tuple[int, int, int, int], cell_w: float, cell_h: float) -> tuple[int, int]:
    x, y, w, h = box
    return int((x + w / 2) // cell_w), int((y + h / 2) // cell_h)


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int], margin: int) -> bool:
    return (a[0] - margin < b[0] + b[2] and b[0] < a[0] + a[2] + margin and a[1] - margin < b[1] + b[3]) and b[1] < a[
        1
    ] + a[3] + margin


def common_window(boxes: dict[str, tuple[int, int, int, int]]) -> tuple[int, int]:
    """The deck's card size: the median box; a card far from it means a mis-cut, and the deck is refused."""
    width = int(np.median([box[2] for box in boxes.values()]))
    height = int(np.median([box[3] for box in boxes.values()]))
    odd = [
        f"{code} {box[2]}x{box[3]}"
        for code, box in boxes.items()
        if abs(box[2] - width) > SIZE_SLACK * width + 1 or abs(box[3] - height) > SIZE_SLACK * height + 1
    ]
    if odd:
        raise DeckError(f"cards of unequal size ({', '.join(odd[:4])}; most are {width}x{height})")
    return width, height


def cut_card(sheet: np.ndarray, box: tuple[int, int, int, int], window: tuple[int, int], out_h: int) -> np.ndarray:
    """The window-sized crop centred on the card's box, area-reduced to `out_h` pixels high."""
    win_w, win_h = window
    x = round(box[0] + (box[2] - win_w) / 2)
    y = round(box[1] + (box[3] - win_h) / 2)
    padded = cv2.copyMakeBorder(sheet, win_h, win_h, win_w, win_w, cv2.BORDER_CONSTANT, value=(0, 0, 0, 0))
    crop = padded[y + win_h : y + 2 * win_h, x + win_w : x + 2 * win_w]
    out_w = round(out_h * win_w / win_h)
    return cv2.resize(_premultiplied(crop), (out_w, out_h), interpolation=cv2.INTER_AREA)


def _premultiplied(image: np.ndarray) -> np.ndarray:
    """Zero the colour of transparent pixels so resizing does not pull dark fringes into the card edges."""
    clean = image.copy()
    clean[image[:, :, 3] == 0] = 0
    return clean


def render_source(source: DeckSource, out_dir: Path, card_height: int) -> RenderResult:
    """Render one deck into out_dir/<name>/, or say why it cannot be; a complete existing one is kept."""
    target = out_dir / source.name
    if _cached(target, card_height):
        return RenderResult(source.name, False, "cached")
    try:
        cards = _render_cards(source, card_height)
    except DeckError as err:
        return RenderResult(source.name, False, str(err))
    staging = out_dir / f".tmp-{source.name}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for code, image in cards.items():
        cv2.imwrite(str(staging / f"{code}.png"), image)
    (staging / "deck.json").write_text(json.dumps(deck_meta(source), indent=2, ensure_ascii=False) + "\n")
    try:
        load_deck(staging)
    except DeckError as err:
        shutil.rmtree(staging)
        return RenderResult(source.name, False, str(err).replace(f"deck '{staging}': ", ""))
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return RenderResult(source.name, True)


def _render_cards(source: DeckSource, card_height: int) -> dict[str, np.ndarray]:
    if source.layout == "sheet":
        sheet = rsvg(source.svg, round(5 * card_height * OVERSAMPLE / 0.92))
        boxes = gnome_boxes(source, sheet)
    else:
        located = kde_boxes(source)
        scale = card_height * OVERSAMPLE / np.median([box[3] for box in located.values()])
        sheet = rsvg(source.svg, round(LOCATE_HEIGHT * scale))
        boxes = {code: _refine(sheet, box, sheet.shape[0] / LOCATE_HEIGHT) for code, box in located.items()}
    window = common_window(boxes)
    cards = {code: cut_card(sheet, box, window, card_height) for code, box in boxes.items()}
    if "JOKER" in cards and "JOKER2" in cards and _same_picture(cards["JOKER"], cards["JOKER2"]):
        del cards["JOKER2"]
    return cards


def _refine(sheet: np.ndarray, box: tuple[int, int, int, int], scale: float) -> tuple[int, int, int, int]:
    """The card's exact box at full resolution, searched around its low-resolution box (cards are 2+ px apart)."""
    pad = int(np.ceil(scale))
    x0, y0 = max(0, int(box[0] * scale) - pad), max(0, int(box[1] * scale) - pad)
    x1, y1 = int((box[0] + box[2]) * scale) + pad + 1, int((box[1] + box[3]) * scale) + pad + 1
    found = opaque_box(sheet[y0:y1, x0:x1])
    if found is None:
        raise DeckError("a card vanished at full resolution")
    return found[0] + x0, found[1] + y0, found[2], found[3]


def _same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and float(np.mean(cv2.absdiff(a, b))) < 1.0


def _cached(target: Path, card_height: int) -> bool:
    try:
        deck = load_deck(target)
    except DeckError:
        return False
    return deck.size[1] == card_height and (target / "deck.json").is_file()


def deck_meta(source: DeckSource) -> dict[str, str]:
    """deck.json: name, family, source package and version, licence where the package's copyright file says."""
    families = load_families()
    meta = {
        "name": source.name,
        "family": families["families"].get(source.name, source.name),
        "source": f"debian:{source.package} {package_version(source.package)}",
    }
    license_text = families["licenses"].get(source.name) or families["licenses"].get(source.package)
    if license_text:
        meta["license"] = license_text
    return meta


def load_families(path: Path = FAMILIES_FILE) -> dict[str, dict[str, str]]:
    """The families file: {"families": {deck: family}, "licenses": {deck or package: licence}}."""
    return json.loads(path.read_text())


def _render_job(job: tuple[DeckSource, Path, int]) -> RenderResult:
    return render_source(*job)


def render_debian_decks(
    out_dir: str | Path,
    card_height: int = 350,
    only: Sequence[str] | None = None,
    progress: bool = True,
    workers: int = 2,
    gnome_dir: str | Path = GNOME_DIR,
    kde_dir: str | Path = KDE_DIR,
) -> list[Deck]:
    """Render every usable French-suited Debian deck (or those named in `only`) and return them validated.

    Decks that cannot be rendered completely are reported on stdout and left out; the rest go on.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sources, skipped = discover_sources(Path(gnome_dir), Path(kde_dir))
    if only is not None:
        unknown = sorted(set(only) - {source.name for source in sources} - {skip.name for skip in skipped})
        if unknown:
            raise ValueError(f"unknown deck names {unknown}; known: {sorted(s.name for s in sources)}")
        sources = [source for source in sources if source.name in only]
        skipped = [skip for skip in skipped if skip.name in only]
    jobs = [(source, out, card_height) for source in sources]
    with Pool(max(1, min(workers, len(jobs)))) as pool:
        results = list(
            tqdm(pool.imap(_render_job, jobs), total=len(jobs), desc="decks", unit="deck", disable=not progress)
        )
    for result in [*skipped, *results]:
        if not result.rendered and result.reason != "cached":
            print(f"skipped deck {result.name}: {result.reason}")
    return [load_deck(out / result.name) for result in results if result.rendered or result.reason == "cached"]


# ----------------------------------------------------------------------------------------------- families, sheets


def split_families(
    decks: Sequence[Deck], fractions: dict[str, float] | None = None, seed: int = 0
) -> dict[str, list[Deck]]:
    """Assign whole families to splits, so no court art is seen in training and again in validation or test.

    Families are shuffled by seed and dealt greedily to the split furthest below its share of decks; with at least
    as many families as splits, each split first gets one family so none is empty.
    """
    shares = fractions or {"train": 0.7, "val": 0.15, "test": 0.15}
    total = sum(shares.values())
    names = sorted({deck.family for deck in decks})
    random.Random(seed).shuffle(names)
    sizes = {family: sum(deck.family == family for deck in decks) for family in names}
    assigned: dict[str, list[str]] = {split: [] for split in shares}
    counts = dict.fromkeys(shares, 0)
    positive = [split for split in shares if shares[split] > 0]
    queue = list(names)
    if len(names) >= len(positive):
        for split in sorted(positive, key=lambda s: shares[s]):
            family = queue.pop()
            assigned[split].append(family)
            counts[split] += sizes[family]
    for family in queue:
        split = min(positive, key=lambda s: (counts[s] - shares[s] / total * len(decks)) / shares[s])
        assigned[split].append(family)
        counts[split] += sizes[family]
    return {split: [deck for deck in decks if deck.family in set(assigned[split])] for split in shares}


def deck_sheet(deck: Deck, out_png: str | Path, codes: Sequence[str] | None = None, card_height: int = 120) -> Path:
    """A contact sheet: the deck's cards in suit rows on green, labelled by code, for checking a render by eye."""
    chosen = list(codes) if codes is not None else [*deck.codes, "BACK"]
    per_row = 13
    card_w = round(card_height * deck.size[0] / deck.size[1])
    label_h, gap = 16, 4
    rows = (len(chosen) + per_row - 1) // per_row
    canvas = np.full(
        (rows * (card_height + label_h + gap) + gap, per_row * (card_w + gap) + gap, 3), (40, 110, 40), np.uint8
    )
    for index, code in enumerate(chosen):
        row, col = divmod(index, per_row)
        x, y = gap + col * (card_w + gap), gap + row * (card_height + label_h + gap)
        card = cv2.resize(deck.image(code), (card_w, card_height), interpolation=cv2.INTER_AREA).astype(np.float32)
        alpha = card[:, :, 3:] / 255.0
        area = canvas[y : y + card_height, x : x + card_w].astype(np.float32)
        canvas[y : y + card_height, x : x + card_w] = (card[:, :, :3] * alpha + area * (1 - alpha)).astype(np.uint8)
        cv2.putText(canvas, code, (x + 2, y + card_height + 12), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1)
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), canvas)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m vision.synth.decks OUT_DIR [--height N] [--sheets DIR] [--only NAME ...]`."""
    import argparse

    parser = argparse.ArgumentParser(description="Render Debian's card decks into deck directories.")
    parser.add_argument("out_dir")
    parser.add_argument("--height", type=int, default=350)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--sheets", help="also write a contact sheet per deck into this directory")
    args = parser.parse_args(argv)
    decks = render_debian_decks(args.out_dir, args.height, args.only, workers=args.workers)
    for deck in decks:
        if args.sheets:
            deck_sheet(deck, Path(args.sheets) / f"{deck.name}.png")
    print(f"{len(decks)} decks in {args.out_dir}")


if __name__ == "__main__":
    main()
