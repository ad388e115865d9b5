"""Which recogniser a command gets: the rectified one (corner finder and upright reader) when its models are
present, the previous one (finder boxes and 64 px reader) when asked for, or when an enrolled deck head is given,
since enrolment refits the previous reader's last layer."""

from __future__ import annotations

from pathlib import Path

from vision.recognise.calibration import TableCalibration
from vision.recognise.enrol import DeckHead
from vision.recognise.models import ModelError, models_dir
from vision.recognise.recogniser import Recogniser
from vision.recognise.rectified import CORNER_READER_FILE, CORNERS_FILE, RectifiedRecogniser

KINDS = ("auto", "rectified", "previous")


def load_recogniser(
    models: Path | None = None,
    kind: str = "auto",
    deck: DeckHead | None = None,
    calibration: TableCalibration | None = None,
) -> Recogniser | RectifiedRecogniser:
    if kind not in KINDS:
        raise ModelError(f"recogniser '{kind}': expected one of {', '.join(KINDS)}")
    root = models or models_dir()
    has_rectified = (root / CORNERS_FILE).is_file() and (root / CORNER_READER_FILE).is_file()
    if kind == "rectified" and deck is not None:
        raise ModelError("an enrolled deck (--deck) is read by the previous recogniser: use --recogniser previous")
    if kind == "rectified" or (kind == "auto" and has_rectified and deck is None):
        return RectifiedRecogniser(root, calibration=calibration)
    return Recogniser(root, deck=deck, calibration=calibration)
