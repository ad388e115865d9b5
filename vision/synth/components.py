"""Every game's components in one place: render many procedural designs, and load decks or piece sets from disk.

Loot the Loop plays with real printed decks (Debian's designs, or a player's photographs), so its components are
deck directories. The other four games have no installable art, so each has a generator under `vision/synth/art/`
that draws a whole set in one *design* (fonts, palette, borders, motifs, wear) chosen by an integer; each design is
its own family, and family splits keep a design wholly in train, validation or test.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from multiprocessing import Pool
from pathlib import Path

from tqdm import tqdm

from vision.synth.deckdir import Deck, DeckError, load_deck, load_decks
from vision.synth.pieces import PieceSet, PieceSetError, load_piece_set

GENERATORS: dict[str, str] = {
    "loop": "vision.synth.art.loop_cards",
    "bag-o-loot": "vision.synth.art.bag_o_loot",
    "loot-roll": "vision.synth.art.loot_roll",
    "the-loop": "vision.synth.art.the_loop",
}
DEFAULT_PX_PER_MM = 4.0


def generator(game: str) -> Callable[..., PieceSet]:
    """The `render_set(out_dir, design, px_per_mm)` of a game's art module."""
    if game not in GENERATORS:
        raise ValueError(
            f"no procedural art for '{game}'; games with art: {', '.join(GENERATORS)} "
            "(Loot the Loop uses real decks: 'tabletop synth decks')"
        )
    return importlib.import_module(GENERATORS[game]).render_set


def design_dir(out: Path, game: str, design: int) -> Path:
    return out / f"{game}-design-{design:03d}"


def design_folders(root: Path, split: str, game: str | None = None) -> list[Path]:
    """The design folders under `root` (`<game>-design-NNN`, holding pieces.json) whose design number falls in
    `split` (`art.common.design_split`), of `game` only where given."""
    from vision.synth.art.common import design_split

    name = re.escape(game) if game else r"[a-z-]+"
    found = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        match = re.fullmatch(rf"{name}-design-(\d+)", folder.name)
        if match and (folder / "pieces.json").is_file() and design_split(int(match.group(1))) == split:
            found.append(folder)
    return found


def split_design_names(root: Path, split: str, game: str, designs: int = 20) -> list[str]:
    """The names of `game`'s design folders under `root` in `split`; none is an error that says how to make them."""
    names = [p.name for p in design_folders(root, split, game)]
    if not names:
        raise FileNotFoundError(
            f"{root}: no {split} designs of {game} (tabletop synth pieces --game {game} --designs {designs} --out "
            f"{root})"
        )
    return names


def _render_one(job: tuple[str, str, int, float]) -> str:
    game, out, design, px_per_mm = job
    folder = design_dir(Path(out), game, design)
    generator(game)(folder, design, px_per_mm)
    return str(folder)


def render_designs(
    game: str,
    out_dir: str | Path,
    designs: Sequence[int],
    px_per_mm: float = DEFAULT_PX_PER_MM,
    workers: int = 2,
    progress: bool = True,
) -> list[PieceSet]:
    """Render the given designs of a game's components, skipping any already on disk and valid (resumable)."""
    generator(game)  # fail fast on an unknown game
    out = Path(out_dir)
    done = {d: s for d in designs if (s := _existing(design_dir(out, game, d))) is not None}
    jobs = [(game, str(out), d, px_per_mm) for d in designs if d not in done]
    bar = tqdm(total=len(jobs), desc=f"art {game}", unit="design", disable=not progress)
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            _render_one(job)
            bar.update()
    else:
        with Pool(workers) as pool:
            for _ in pool.imap_unordered(_render_one, jobs):
                bar.update()
    bar.close()
    return [done[d] if d in done else load_piece_set(design_dir(out, game, d)) for d in designs]


def _existing(folder: Path) -> PieceSet | None:
    """A design already on disk and valid (validation reads every picture, so its result is kept)."""
    try:
        return load_piece_set(folder)
    except PieceSetError:
        return None


def load_component(path: str | Path) -> Deck | PieceSet:
    """One folder: a piece set when it has pieces.json, else a deck directory; validated either way."""
    root = Path(path)
    return load_piece_set(root) if (root / "pieces.json").is_file() else load_deck(root)


def load_components(path: str | Path) -> list[Deck | PieceSet]:
    """A deck directory, a piece set, or a folder of either (all of one kind), validated; errors name the file."""
    root = Path(path)
    if (root / "pieces.json").is_file():
        return [load_component(root)]
    if root.is_dir():
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
        if folders and all((f / "pieces.json").is_file() for f in folders):
            return [load_piece_set(f) for f in folders]
    try:
        return list(load_decks(root))
    except DeckError as err:
        raise DeckError(
            f"{err} (a component folder is a deck directory, a piece set with pieces.json, or a folder of either)"
        ) from err
