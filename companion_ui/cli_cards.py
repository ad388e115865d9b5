"""`tabletop detect` and `tabletop enrol`: the card recogniser on pictures, and teaching it a player's deck.

The parser sits beside the code it calls (`add_card_commands`); `cli.py` only assembles the command groups. As
everywhere in the CLI, the vision packages are imported inside the commands, so `tabletop --help` stays instant.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from companion_ui.cli_base import CliError
from vision.recognise.labels import CATALOGUE_GAMES, GAME_LABELS

RECOGNISERS = ("auto", "rectified", "previous")
CAMERA_GAMES = (*GAME_LABELS, *CATALOGUE_GAMES)  # the games whose cards the camera reads
Progress = Callable[[int, int], None]


def make_recogniser(args: argparse.Namespace, calibrate: bool = True) -> Any:
    """The recogniser `--recogniser`, `--deck` (whose kind picks it) and `--calibration` ask for (the calibration
    left out where `calibrate` is False: a table layout places the cards instead)."""
    from vision.recognise.calibration import CalibrationError, load_calibration
    from vision.recognise.enrol import EnrolError
    from vision.recognise.enrol_rectified import load_deck_head
    from vision.recognise.load import load_recogniser
    from vision.recognise.models import ModelError

    try:
        given = getattr(args, "calibration", None)
        calibration = load_calibration(given) if given and calibrate else None
        deck = load_deck_head(args.deck) if getattr(args, "deck", None) else None
        models = Path(args.models) if args.models else None
        game = getattr(args, "game", "loot-the-loop")
        catalogue = Path(args.catalogue) if getattr(args, "catalogue", None) else None
        return load_recogniser(models, getattr(args, "recogniser", "auto"), deck, calibration, game, catalogue)
    except (CalibrationError, EnrolError, ModelError) as err:
        raise CliError(str(err)) from err


def cmd_detect(args: argparse.Namespace) -> int:
    import cv2

    from vision.recognise.detect import annotate, annotation_path, detect_files, expand_paths, format_text

    paths = expand_paths(args.images)
    if not paths:
        raise CliError(f"no pictures found in {', '.join(args.images)}")
    table = table_source(args)
    recogniser = make_recogniser(args, calibrate=table is None)
    board = board_reader(args)
    dice = dice_reader(args)
    fixed = fixed_calibration(args) if dice is not None and table is None else None
    results, failed = [], 0
    for result, image in detect_files(paths, recogniser, table):
        reading = board.read(image) if board is not None and image is not None else None
        rolled = dice.read(image, result.table or fixed) if dice is not None and image is not None else None
        if result.error is not None:
            failed += 1
            print(f"tabletop detect: {result.error}", file=sys.stderr)
        elif args.annotate and image is not None:
            target = annotation_path(Path(args.annotate), result.path, len(paths) > 1)
            target.parent.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(target), annotate(image, result.detections))
        if args.json:
            entry = with_entries(result.to_json(), args.game)
            if reading is not None:
                entry["board"] = reading.to_json()
            if rolled is not None:
                entry["dice"] = [r.to_json() for r in rolled]
            results.append(entry)
        elif result.error is None:
            print(format_text(result))
            if reading is not None:
                print(format_board(reading))
            if rolled is not None:
                print(format_dice(rolled))
    if args.json:
        print(json.dumps(results, indent=1))
    return 1 if failed else 0


def board_reader(args: argparse.Namespace) -> Any:
    """The LOOP's board reader (registration and cubes per Era) for `--game the-loop`, else None; `--board DIR` is
    the player's board folder, the synthetic stand-in by default."""
    if args.game != "the-loop":
        return None
    from vision.board.layout import BoardLayoutError, load_board
    from vision.board.read import BoardReader
    from vision.recognise.models import ModelError, models_dir

    models = Path(args.models) if args.models else models_dir()
    try:
        return BoardReader(load_board(Path(args.board) if args.board else models / "the-loop-board"), models)
    except (BoardLayoutError, ModelError, ValueError) as err:
        raise CliError(str(err)) from err


def dice_reader(args: argparse.Namespace) -> Any:
    """The dice finder and reader for `--game loot-roll` (with `--dice FILE`, the player's enrolled dice), else
    None."""
    if args.game != "loot-roll":
        if getattr(args, "dice", None):
            raise CliError("--dice: enrolled dice are read with --game loot-roll")
        return None
    from vision.dice.enrol import DiceEnrolError, EnrolledDice
    from vision.dice.read import DiceReader
    from vision.recognise.models import ModelError, models_dir

    try:
        enrolled = EnrolledDice.load(Path(args.dice)) if getattr(args, "dice", None) else None
        return DiceReader(Path(args.models) if args.models else models_dir(), enrolled)
    except (ModelError, DiceEnrolError) as err:
        raise CliError(str(err)) from err


def fixed_calibration(args: argparse.Namespace) -> Any:
    """`--calibration FILE` without a layout: the one table plane every picture shares, else None."""
    from vision.recognise.calibration import CalibrationError, load_calibration

    if not getattr(args, "calibration", None):
        return None
    try:
        return load_calibration(args.calibration)
    except CalibrationError as err:
        raise CliError(str(err)) from err


def enrol_dice_folder(args: argparse.Namespace) -> int:
    """`enrol --dice DIR`: the player's dice, one picture per face, saved for `detect --dice`, with a sheet of how
    each picture was seen beside it (DIR.dice.png) and a line for each picture the reader reads as another face."""
    import cv2

    from vision.dice.enrol import DiceEnrolError, enrol_dice, enrolment_sheet
    from vision.dice.read import DiceReader
    from vision.recognise.models import ModelError, models_dir

    if not args.deck_dir:
        raise CliError("enrol --dice: give the dice folder (d20/ and/or d6/, one picture per face: 1.jpg ...)")
    folder = Path(args.deck_dir)
    out = Path(args.out) if args.out else folder.with_suffix(".dice.npz")
    try:
        enrolment = enrol_dice(folder, DiceReader(Path(args.models) if args.models else models_dir()))
    except (DiceEnrolError, ModelError) as err:
        raise CliError(str(err)) from err
    enrolment.dice.save(out)
    sheet = out.with_suffix(".png")
    cv2.imwrite(str(sheet), enrolment_sheet(enrolment))
    kinds = ", ".join(f"{kind} ({len(faces)} faces)" for kind, faces in enrolment.dice.faces.items())
    print(f"enrolled {kinds} from {folder}; read them with: tabletop detect --game loot-roll --dice {out} PICTURES")
    doubts = enrolment.doubts()
    print(f"how each picture was seen: {sheet}" + (" (check these: the reader reads another face)" if doubts else ""))
    for line in doubts:
        print(f"  {line}")
    return 0


def format_dice(readings: list[Any]) -> str:
    """The dice of one picture: each one's face (or that it shows none to read) and where it lies."""
    if not readings:
        return "  dice: none found"
    rows = [
        f"  die at ({r.x:.0f}, {r.y:.0f})"
        + (f", {r.table_mm[0]:.0f},{r.table_mm[1]:.0f} mm" if r.table_mm else "")
        + (f" in {r.zone}" if r.zone else "")
        + ": "
        + (
            f"{r.label} ({100 * r.confidence:.1f}%)"
            if r.value is not None
            else "no face to read (cocked, moving or hidden)"
        )
        for r in readings
    ]
    return "  dice:\n" + "\n".join(rows)


def format_board(reading: Any) -> str:
    """The board's cubes and pieces as one line per Era, or why it was not read."""
    if not reading.found:
        return f"  board: {reading.note}"
    rows = []
    spots = {m.era: m for m in reading.missions}
    for e in reading.eras:
        cubes = ", ".join(f"{n} {colour}" for colour, n in e.counts.items() if n) or "no cubes"
        pieces = [p.label for p in reading.pieces if p.era == e.era]
        if e.era in spots:
            pieces.append(_mission_spot_text(spots[e.era]))
        rows.append(f"  {e.era}: {cubes}" + (f"; {', '.join(pieces)}" if pieces else ""))
    elsewhere = [p.label for p in reading.pieces if p.era is None]
    if elsewhere:
        rows.append(f"  between Eras: {', '.join(elsewhere)}")
    return "  board found; cubes and pieces per Era:\n" + "\n".join(rows)


def _mission_spot_text(spot: Any) -> str:
    """A mission spot's reading in words: "mission M03 (1 red, 2 green)", "mission face down", "no mission"."""
    from vision.board.missions import BACK

    if not spot.seen:
        return "mission spot covered"
    if spot.tile is None:
        return "no mission"
    if spot.tile == BACK:
        return "mission face down"
    cubes = ", ".join(f"{n} {colour}" for colour, n in spot.progress.items() if n) or "no progress"
    return f"mission {spot.tile} ({cubes})"


def catalogue_entries(game: str) -> dict[str, dict[str, Any]]:
    """What the rules engine's catalogue says of each card the camera may name (Loot Roll: its kind, price, rarity,
    slot, survivability, value; The LOOP: an artifact's Origin Era and dimension). Backs and cards it does not list
    (The LOOP's Dr. Foo cards, the fight and flight cards) have none. As JSON values (tuples as lists)."""
    entries: dict[str, dict[str, Any]] = {}
    if game == "loot-roll":
        from games.loot_roll.catalogue import load_catalogue

        catalogue = load_catalogue()
        sections = (
            ("ability", catalogue.abilities, ("name", "price", "text")),
            ("loot", catalogue.loot, ("name", "rarity", "slot", "survivability", "value", "text")),
            ("monster", catalogue.monsters, ("name", "survivability", "loot", "text")),
        )
        for kind, cards, fields in sections:
            for code, card in cards.items():
                entries[code] = {"kind": kind, **{f: getattr(card, f) for f in fields}}
    elif game == "the-loop":
        from games.the_loop.catalogue import load_catalogue as load_the_loop

        for code, artifact in load_the_loop().artifacts.items():
            entries[code] = {
                "kind": "artifact",
                "name": artifact.name,
                "era": artifact.era,
                "dimension": artifact.dimension,
            }
    return json.loads(json.dumps(entries))


def with_entries(result: dict[str, Any], game: str) -> dict[str, Any]:
    """A picture's detect JSON with each catalogue card's `entry` (`catalogue_entries`) beside its label."""
    if game not in CATALOGUE_GAMES:
        return result
    entries = catalogue_entries(game)
    for detection in result.get("detections", []):
        if detection["label"] in entries:
            detection["entry"] = entries[detection["label"]]
    return result


def table_source(args: argparse.Namespace) -> Any:
    """With `--layout`, what places each picture's cards on the table: a mat's markers found in the picture itself,
    or, for a layout without markers (zones drawn by hand), the fixed `--calibration`. None without `--layout`."""
    if not getattr(args, "layout", None):
        return None
    from vision.recognise.calibration import CalibrationError, TableCalibration, load_calibration
    from vision.table.markers import MIN_MARKERS, MatTracker
    from vision.table.mat import LayoutError, load_layout

    try:
        layout = load_layout(args.layout)
    except LayoutError as err:
        raise CliError(str(err)) from err
    if not layout.markers:
        if not args.calibration:
            raise CliError(
                f"{args.layout}: this layout has no mat markers; give --calibration FILE too (four points of the "
                "table in the picture and where they lie in mm, or a homography)"
            )
        try:
            fixed = TableCalibration(load_calibration(args.calibration).homography, layout)
        except CalibrationError as err:
            raise CliError(str(err)) from err
        return lambda _image: (fixed, None)

    def from_markers(image: Any) -> tuple[Any, str | None]:
        tracker = MatTracker(layout)
        status = tracker.update(image)
        if tracker.calibration is None:
            return None, f"{status.markers} of the mat's markers in view, {MIN_MARKERS} needed: no table positions"
        return tracker.calibration, None

    return from_markers


def layout_to_deck(args: argparse.Namespace, models: Path) -> Path:
    """The deck directory read from photographs of the laid-out deck (`vision.recognise.layout`)."""
    from vision.recognise.detect import read_image
    from vision.recognise.finder import Finder
    from vision.recognise.layout import LayoutError, layout_deck
    from vision.recognise.models import FINDER_FILE, ModelError

    photos = []
    for path in args.layout:
        try:
            photos.append((path, read_image(Path(path))))
        except ValueError as err:
            raise CliError(f"{path}: {err}") from err
    name = args.name or "my-deck"
    target = Path(args.deck_out) if args.deck_out else Path("out/enrolled") / name
    try:
        result = layout_deck(photos, Finder(models / FINDER_FILE), target, name)
    except (LayoutError, ModelError) as err:
        raise CliError(str(err)) from err
    print(f"Read {len(result.codes)} cards from {result.photos} photographs into {result.deck_dir}")
    return result.deck_dir


def cmd_enrol(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from vision.recognise.enrol import EnrolError
    from vision.recognise.load import rectified_present
    from vision.recognise.models import ModelError, models_dir
    from vision.synth.deckdir import DeckError

    if args.dice:
        return enrol_dice_folder(args)
    if args.game in CATALOGUE_GAMES:
        return enrol_catalogue_cards(args)
    if args.game != "loot-the-loop":
        raise CliError(
            f"{args.game}'s number cards are read without enrolment for now (enrol standard decks, or "
            f"{' and '.join(CATALOGUE_GAMES)} catalogue cards)"
        )
    if args.scenes < 1:
        raise CliError(f"--scenes must be at least 1, got {args.scenes}")
    if args.adapt < 0:
        raise CliError(f"--adapt must be minutes of training (0: none), got {args.adapt}")
    if bool(args.deck_dir) == bool(args.layout):
        raise CliError("give a deck directory, or --layout with photographs of the laid-out deck (not both)")
    root = Path(args.models) if args.models else models_dir()
    kind = args.recogniser
    if kind == "auto":
        kind = "rectified" if rectified_present(root) else "previous"
    deck_dir = Path(args.deck_dir) if args.deck_dir else layout_to_deck(args, root)
    out = Path(args.out) if args.out else deck_dir.with_suffix(".deck.npz")
    if args.adapt and kind != "rectified":
        raise CliError("--adapt fine-tunes the rectified reader; the previous recogniser's enrolment refits its head")
    enrol_deck = partial(enrol_for_rectified, adapt=args.adapt) if kind == "rectified" else enrol_for_previous
    bar = tqdm(total=args.scenes, desc="enrol", unit="scene")
    try:
        result, crops, note = enrol_deck(deck_dir, root, args.scenes, lambda i, n: bar.update(i - bar.n))
    except (EnrolError, ModelError, DeckError, FileNotFoundError) as err:
        raise CliError(str(err)) from err
    finally:
        bar.close()
    result.head.save(out)
    before, after = 100 * result.held_out_before, 100 * result.held_out_after
    gain = (
        f"reads held-out scenes' {result.held_out_what} {before:.1f}% -> {after:.1f}% right"
        if result.adopted
        else f"{result.tried} read held-out scenes no better than the shipped reader ({before:.1f}% of their "
        f"{result.held_out_what}), so the deck file keeps its reading"
    )
    shipped = getattr(result, "held_out_shipped", None)
    if shipped is not None and result.head.reader_graph:
        gain = (
            f"the reader adapted to the deck reads held-out scenes' {result.held_out_what} {before:.1f}% right "
            f"(the shipped reader {100 * shipped:.1f}%), {after:.1f}% with its pictures matched"
        )
    print(
        f"Enrolled {deck_dir} for the {kind} recogniser: {result.crops} {crops}{note} from {result.scenes} scenes "
        f"in {result.seconds:.0f} s; {gain}. Use it with: tabletop detect --deck {out} ..."
    )
    return 0


def enrol_catalogue_cards(args: argparse.Namespace) -> int:
    """`enrol --game loot-roll|the-loop DIR`: one picture per card, named by its code, into a catalogue file."""
    from vision.recognise.catalogue import CatalogueError, enrol_catalogue, stand_in_catalogue
    from vision.recognise.models import ModelError

    if not args.deck_dir or args.layout:
        raise CliError(f"give a folder of pictures of {args.game}'s cards, one per card named by its code")
    folder = Path(args.deck_dir)
    models = Path(args.models) if args.models else None
    try:
        expected = stand_in_catalogue(args.game, models).codes
        catalogue = enrol_catalogue(folder, args.game, expected)
    except (CatalogueError, ModelError) as err:
        raise CliError(str(err)) from err
    out = Path(args.out) if args.out else folder.with_suffix(".catalogue.npz")
    catalogue.save(out)
    print(
        f"Enrolled {len(catalogue.codes)} {args.game} cards from {folder}. "
        f"Use it with: tabletop detect --game {args.game} --catalogue {out} ..."
    )
    return 0


def enrol_for_previous(deck_dir: Path, root: Path, scenes: int, progress: Progress) -> tuple[Any, str, str]:
    """The previous reader's enrolment (its 54-way last layer refitted), what its crops are, and nothing to add."""
    from vision.recognise.enrol import enrol, load_head
    from vision.recognise.models import READER_FILE, READER_HEAD_FILE
    from vision.recognise.reader import Reader

    reader = Reader(root / READER_FILE)
    result = enrol(deck_dir, reader, load_head(root / READER_HEAD_FILE), scenes, progress=progress)
    return result, "index crops", ""


def enrol_for_rectified(
    deck_dir: Path, root: Path, scenes: int, progress: Progress, adapt: float = 0.0
) -> tuple[Any, str, str]:
    """The rectified reader's enrolment (the deck's pictures matched; with `adapt` minutes, the reader first
    fine-tuned on the deck), what its crops are, and the index corners found."""
    from vision.recognise.corner_reader import CornerReader
    from vision.recognise.enrol_rectified import adapt_and_enrol, corner_names, enrol_rectified
    from vision.recognise.rectified import CORNER_READER_FILE

    if adapt:
        result = adapt_and_enrol(deck_dir, root, adapt, scenes, progress=progress, say=tqdm_say)
    else:
        result = enrol_rectified(deck_dir, CornerReader(root / CORNER_READER_FILE), scenes, progress=progress)
    corners = corner_names(result.head.index_corners)
    note = f" ({result.index_crops} showing an index; index corners: {corners})"
    return result, "corner crops", note


def tqdm_say(message: str) -> None:
    """A line printed above the enrolment's progress bar, not through it."""
    from tqdm import tqdm

    tqdm.write(message)


def add_card_commands(sub: Any) -> None:
    """The detect and enrol subcommands, on the CLI's subparsers."""
    p = sub.add_parser("detect", help="find and read the playing cards in pictures (JSON with --json)")
    p.add_argument("images", nargs="+", help="picture files or folders of pictures")
    p.add_argument("--json", action="store_true", help="one JSON object per picture, as a list")
    p.add_argument("--annotate", metavar="OUT", help="write each picture with its cards drawn (a file, or a folder)")
    p.add_argument("--calibration", metavar="FILE", help="table calibration JSON: adds each card's table position")
    p.add_argument(
        "--layout",
        metavar="FILE",
        help="table layout JSON (a mat's, from tabletop mat, or zones drawn by hand): adds each card's table "
        "position and zone; a mat is found by its markers in each picture",
    )
    p.add_argument(
        "--deck", metavar="FILE", help="an enrolled deck's head (from tabletop enrol): read by the recogniser it fits"
    )
    p.add_argument(
        "--game",
        default="loot-the-loop",
        choices=CAMERA_GAMES,
        help="whose cards to read: a standard deck (loot-the-loop, the default), LOOP's and Bag-O-Loot's number "
        "cards, or Loot Roll's and The LOOP's catalogue cards; labels are that game's own codes (7r, 12, L, "
        "dragon-egg, A01)",
    )
    p.add_argument(
        "--catalogue",
        metavar="FILE",
        help="--game loot-roll|the-loop: your cards' catalogue (from tabletop enrol --game G DIR); default: the "
        "synthetic stand-in cards",
    )
    p.add_argument(
        "--board",
        metavar="DIR",
        help="--game the-loop: your board's folder (board.json and its picture; vision/board/layout.py says the "
        "format); default: the synthetic stand-in board. The cubes on its Eras are counted",
    )
    p.add_argument(
        "--dice",
        metavar="FILE",
        help="--game loot-roll: your enrolled dice (tabletop enrol --dice DIR); every die is read with or without it",
    )
    models_and_recogniser(
        p,
        "rectified: corner finder and upright reader (the default when its models are present, or when --deck was "
        "enrolled for it); previous: finder boxes and 64 px reader (the default for a --deck enrolled for it)",
    )
    p.set_defaults(func=cmd_detect)

    p = sub.add_parser("enrol", help="teach the card reader your deck, from a deck directory")
    p.add_argument(
        "deck_dir",
        nargs="?",
        help="deck directory: one picture per card (AS.png ... KC.png, BACK.png); with --game loot-roll|the-loop, "
        "one picture per catalogue card named by its code (dragon-egg.png, BACK_MONSTER.png)",
    )
    p.add_argument(
        "--game",
        default="loot-the-loop",
        choices=("loot-the-loop", *CATALOGUE_GAMES),
        help="whose cards: a standard deck (the default), or Loot Roll's or The LOOP's catalogue cards",
    )
    p.add_argument(
        "--layout",
        nargs="+",
        metavar="PHOTO",
        help="photographs of the deck laid out face up in "
        "order (AS..KS, AH..KH, AD..KD, AC..KC, joker, then one card face down), none overlapping",
    )
    p.add_argument(
        "--dice",
        action="store_true",
        help="DECK_DIR is a folder of your dice instead: d20/ and/or d6/, one picture per face named by its value "
        "(1.jpg ... 20.jpg), the die lying with that face up; written to DIR.dice.npz for detect --dice",
    )
    p.add_argument("--name", help="--layout: the deck's name (default my-deck)")
    p.add_argument("--deck-out", metavar="DIR", help="--layout: where to write the deck directory (out/enrolled/NAME)")
    p.add_argument("--scenes", type=int, default=200, help="synthetic scenes of the deck to learn from (default 200)")
    p.add_argument(
        "--adapt",
        type=float,
        default=0.0,
        metavar="MINUTES",
        help="experimental: also fine-tune the reader on your deck for this many minutes (10 is a good start; needs "
        "the training environment, scripts/setup-train.sh); kept only where it reads held-out scenes of the deck "
        "clearly better",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="where to write the deck head (default: DECK_DIR.deck.npz; catalogues: DIR.catalogue.npz)",
    )
    models_and_recogniser(
        p,
        "whose reader to enrol the deck for: rectified (the default when its models are present) or previous; "
        "detect --deck then picks that recogniser",
    )
    p.set_defaults(func=cmd_enrol)


def models_and_recogniser(p: argparse.ArgumentParser, recogniser_help: str) -> None:
    """--models and --recogniser, which detect and enrol share (with what --recogniser means to each)."""
    p.add_argument("--models", metavar="DIR", help="folder with the ONNX models (default: models/)")
    p.add_argument("--recogniser", choices=RECOGNISERS, default="auto", help=recogniser_help)
