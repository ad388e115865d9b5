"""Which recogniser a command gets: the rectified one (corner finder and upright reader) when its models are
present, the previous one (finder boxes and 64 px reader) when asked for. An enrolled deck head decides it too: each
is made for one recogniser (the previous reader's refitted layer, or the rectified reader's templates and weights),
so a head enrolled for one recogniser is read by that one, and given to the other is a clear error rather than a
silent fallback to the shipped reading."""

from __future__ import annotations

from pathlib import Path

from vision.recognise.calibration import TableCalibration
from vision.recognise.catalogue import CATALOGUE_GAMES, Catalogue, CatalogueRecogniser, stand_in_catalogue
from vision.recognise.enrol import DeckHead
from vision.recognise.enrol_rectified import RectifiedDeckHead
from vision.recognise.models import ModelError, models_dir
from vision.recognise.recogniser import Recogniser
from vision.recognise.rectified import CORNER_READER_FILE, CORNERS_FILE, RectifiedRecogniser

KINDS = ("auto", "rectified", "previous")


def rectified_present(root: Path) -> bool:
    """Whether the rectified recogniser's two graphs are in this models folder."""
    return (root / CORNERS_FILE).is_file() and (root / CORNER_READER_FILE).is_file()


def load_recogniser(
    models: Path | None = None,
    kind: str = "auto",
    deck: DeckHead | RectifiedDeckHead | None = None,
    calibration: TableCalibration | None = None,
    game: str = "loot-the-loop",
    catalogue: Path | None = None,
) -> Recogniser | RectifiedRecogniser | CatalogueRecogniser:
    """The recogniser `kind` names for `game`'s cards. Only the rectified design reads number cards (LOOP,
    Bag-O-Loot), and no deck is enrolled for them yet. Catalogue cards (Loot Roll, The LOOP) are named against an
    enrolled catalogue (`catalogue`, from tabletop enrol --game G) or, until one is, the shipped stand-ins."""
    if kind not in KINDS:
        raise ModelError(f"recogniser '{kind}': expected one of {', '.join(KINDS)}")
    root = models or models_dir()
    if game in CATALOGUE_GAMES:
        if kind == "previous" or deck is not None:
            raise ModelError(f"{game}'s cards are named by their catalogue: drop --recogniser previous and --deck")
        chosen = Catalogue.load(catalogue) if catalogue else stand_in_catalogue(game, root)
        if chosen.game != game:
            raise ModelError(f"{catalogue}: a catalogue of {chosen.game}'s cards, not {game}'s")
        return CatalogueRecogniser(chosen, root, calibration=calibration)
    if catalogue is not None:
        raise ModelError(f"--catalogue names catalogue cards ({', '.join(CATALOGUE_GAMES)}), not {game}'s")
    if game != "loot-the-loop":
        if kind == "previous" or deck is not None:
            raise ModelError(
                f"{game}'s cards are read by the rectified recogniser alone, without an enrolled deck "
                "(drop --recogniser previous and --deck)"
            )
        try:
            return RectifiedRecogniser(root, calibration=calibration, game=game)
        except ValueError as err:
            raise ModelError(str(err)) from err
    if isinstance(deck, RectifiedDeckHead):
        if kind == "previous":
            raise ModelError(
                f"{deck.source or deck.name}: an enrolled deck for the rectified recogniser: use --recogniser "
                "rectified (or enrol the deck again with --recogniser previous)"
            )
        return RectifiedRecogniser(root, calibration=calibration, deck=deck)
    if kind == "rectified" and deck is not None:
        raise ModelError(
            f"deck head '{deck.name}' was enrolled for the previous recogniser: use --recogniser previous (or enrol "
            "the deck again, for the rectified reader: tabletop enrol DECK_DIR)"
        )
    if kind == "rectified" or (kind == "auto" and rectified_present(root) and deck is None):
        return RectifiedRecogniser(root, calibration=calibration)
    return Recogniser(root, deck=deck, calibration=calibration)
