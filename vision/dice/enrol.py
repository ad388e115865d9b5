"""A player's own dice enrolled: one picture per face, and the reader then matches what it sees against those
faces as well as reading it.

A dice folder holds a subfolder per kind, `d20/` and/or `d6/`, with one picture per face named by its value
(`d20/1.jpg` ... `d20/20.jpg`): the die lying with that face up, alone or the most prominent die in the picture, at
any size. Each face is found by the finder and read as on the table (the face finder's corners, the face reader's
features over every turn of the face), at three sizes a little apart, and those features averaged into the face's
prototype. At run time a die's features are compared with its kind's prototypes, and that match is blended with
the reader's own reading (`EnrolledDice.blend`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.dice.crops import FACE_PX, class_of, face_picture
from vision.dice.find import FoundDie

if TYPE_CHECKING:
    from vision.dice.read import DiceReader, Looks

SIDES = {"d6": 6, "d20": 20}
PICTURE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
SCALES = (0.92, 1.0, 1.08)
ENROL_PEAK = 0.1  # a picture shows one die: its strongest mark is taken even when fainter than the tuned cut-off
MATCH_SCALE = 5.0  # centred cosine similarity to the match's odds, exp(MATCH_SCALE * similarity) per face (chosen
# on validation players among 5, 10 and 20 in session 35; again among 0, 2, 5 and 10 by tune_enrol in session 50)


class DiceEnrolError(ValueError):
    """A dice folder that cannot be enrolled; the message names the file or face and what was expected."""


@dataclass(frozen=True)
class EnrolledDice:
    """Per kind, the unit-length prototype of each face (row v - 1 for face v); how strongly a match sways the
    reading (`match_scale`: chosen on validation players by `vision.train.tune_enrol`)."""

    faces: dict[str, np.ndarray]
    match_scale: float = MATCH_SCALE

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as f:
            np.savez(f, **self.faces)

    @classmethod
    def load(cls, path: Path) -> EnrolledDice:
        try:
            with np.load(path) as data:
                faces = {k: data[k].astype(np.float32) for k in data.files}
        except (OSError, ValueError) as err:
            raise DiceEnrolError(f"{path}: not an enrolled dice file ({err}); make one with tabletop enrol") from err
        for kind, protos in faces.items():
            if kind not in SIDES or protos.shape[0] != SIDES[kind]:
                raise DiceEnrolError(f"{path}: entry {kind!r} is not a d6 (6 faces) or a d20 (20 faces)")
        return cls(faces)

    def blend(self, probabilities: np.ndarray, features: np.ndarray) -> np.ndarray:
        """The reader's class probabilities (n x CLASSES) sharpened by the match against the enrolled faces: within
        each enrolled kind, the reader's probabilities times the match's, renormalised to the kind's own share (the
        chance of "no face" and of each kind stay the reader's). A match that agrees with the reader makes it surer;
        a flat one changes nothing. Features are compared after taking away the mean of the kind's faces: the
        reader's features all lie on one side of the origin, so raw cosines tell faces apart by little."""
        out = probabilities.copy()
        for kind, protos in self.faces.items():
            centre = protos.mean(axis=0)
            similarity = _unit(features - centre) @ _unit(protos - centre).T
            match = np.exp(self.match_scale * (similarity - similarity.max(axis=1, keepdims=True)))
            columns = [class_of(kind, v + 1) for v in range(len(protos))]
            joint = out[:, columns] * match
            share = out[:, columns].sum(axis=1, keepdims=True)
            out[:, columns] = share * joint / np.maximum(joint.sum(axis=1, keepdims=True), 1e-12)
        return out


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.maximum(np.linalg.norm(rows, axis=-1, keepdims=True), 1e-9)


def face_pictures(folder: Path) -> dict[str, dict[int, Path]]:
    """The pictures of each kind's faces, checked: a known kind, a face number the kind has, one picture per face,
    every face there."""
    if not folder.is_dir():
        raise DiceEnrolError(f"{folder}: not a folder (expected d20/ and/or d6/ with one picture per face)")
    kinds = {p.name: p for p in sorted(folder.iterdir()) if p.is_dir()}
    unknown = [name for name in kinds if name not in SIDES]
    if unknown:
        raise DiceEnrolError(f"{folder / unknown[0]}: unknown kind of die; expected a folder named d20 or d6")
    if not kinds:
        raise DiceEnrolError(f"{folder}: no d20/ or d6/ folder (one picture per face, named by its value: 1.jpg)")
    out: dict[str, dict[int, Path]] = {}
    for kind, sub in kinds.items():
        faces: dict[int, Path] = {}
        for path in sorted(sub.iterdir()):
            if path.suffix.lower() not in PICTURE_EXTS:
                continue
            if not re.fullmatch(r"\d+", path.stem) or not 1 <= int(path.stem) <= SIDES[kind]:
                raise DiceEnrolError(f"{path}: expected a {kind} face number 1-{SIDES[kind]} as the file's name")
            value = int(path.stem)
            if value in faces:
                raise DiceEnrolError(f"{path}: face {value} of the {kind} is given twice (also {faces[value].name})")
            faces[value] = path
        missing = [v for v in range(1, SIDES[kind] + 1) if v not in faces]
        if missing:
            raise DiceEnrolError(
                f"{sub}: missing face{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of the {kind} "
                f"(one picture per face, named 1-{SIDES[kind]})"
            )
        out[kind] = faces
    return out


@dataclass(frozen=True)
class EnrolledView:
    """One enrolment picture as the reader saw it: the die it took, its top face as read, and what the reader
    alone makes of that face (a picture of face 7 read as a 1 is likely the wrong file, or the wrong die taken)."""

    kind: str
    value: int  # the face the picture is named for
    path: Path
    die: np.ndarray  # the square around the die taken (READ_PX a side, BGR)
    face: np.ndarray  # its top face warped onto the canonical face (FACE_PX a side; black when none was placed)
    read_as: int | None  # the face the reader alone finds likeliest (None: it sees no face up)
    confidence: float  # its probability

    @property
    def agrees(self) -> bool:
        return self.read_as == self.value


@dataclass(frozen=True)
class Enrolment:
    """Enrolled dice and how each picture was seen (`enrolment_sheet` draws it, `doubts` says what to check)."""

    dice: EnrolledDice
    views: tuple[EnrolledView, ...]

    def doubts(self, sure: float = 0.5) -> list[str]:
        """A line per picture whose face the reader reads, at least `sure`, as another face: that picture may show
        another face, or the die taken may not be the player's."""
        return [
            f"{v.path}: face {v.value} of the {v.kind}, but the reader sees {v.read_as} here "
            f"({100 * v.confidence:.0f}%): is it that face, face up, the die alone?"
            for v in self.views
            if v.read_as is not None and not v.agrees and v.confidence >= sure
        ]


def enrol_dice(folder: Path, reader: DiceReader) -> Enrolment:
    """Prototypes of every face of every kind in the folder (`face_pictures`). Every picture is read before any
    die is looked for, so a bad file is named before the slower work starts."""
    listed = face_pictures(folder)
    images: dict[str, list[np.ndarray]] = {}
    for kind, pictures in listed.items():
        images[kind] = []
        for value in range(1, SIDES[kind] + 1):
            image = cv2.imread(str(pictures[value]), cv2.IMREAD_COLOR)
            if image is None:
                raise DiceEnrolError(f"{pictures[value]}: unreadable picture (expected a JPEG, PNG, BMP or WebP file)")
            images[kind].append(image)
    faces: dict[str, np.ndarray] = {}
    views = []
    for kind, shown in images.items():
        protos = []
        for value, image in enumerate(shown, 1):
            found = reader.finder.find(image, ENROL_PEAK)
            if not found:
                raise DiceEnrolError(f"{listed[kind][value]}: no die found in the picture (face {value} of the {kind})")
            die = max(found, key=lambda f: f.score)
            placed = [FoundDie(die.x, die.y, die.size * scale, die.score) for scale in SCALES]
            seen = reader.look(image, placed)
            protos.append(_unit(_unit(seen.features).mean(axis=0)))
            views.append(_view(kind, value, listed[kind][value], image, die, seen, reader))
        faces[kind] = np.stack(protos).astype(np.float32)
    return Enrolment(EnrolledDice(faces), tuple(views))


def _view(
    kind: str, value: int, path: Path, image: np.ndarray, die: FoundDie, seen: Looks, reader: DiceReader
) -> EnrolledView:
    """How the reader saw one enrolment picture, at the die's own size (the middle of SCALES)."""
    from vision.dice.read import die_squares  # read imports this module

    middle = SCALES.index(1.0)
    corners = seen.corners[middle] if seen.corners else np.zeros((0, 2))
    face = face_picture(image, corners) if len(corners) else np.zeros((FACE_PX, FACE_PX, 3), np.uint8)
    p = reader.calibrated(seen.subset([middle]))[0]
    faces = p[[class_of(kind, v) for v in range(1, SIDES[kind] + 1)]]
    best = int(np.argmax(faces))
    read_as = best + 1 if len(corners) and faces.sum() > p[0] else None
    confidence = float(faces[best] / max(faces.sum(), 1e-9))
    return EnrolledView(kind, value, path, die_squares(image, [die])[0], face, read_as, confidence)


SHEET_PX = 96  # an enrolment sheet's cells: the die's square, and its face magnified beside it


def enrolment_sheet(enrolment: Enrolment) -> np.ndarray:
    """A picture of the enrolment to check by eye: per face, the die taken and its top face as the reader saw it,
    captioned with the face's number and the reader's own reading, red where they disagree; a row per kind."""
    rows = []
    for kind in SIDES:
        views = [v for v in enrolment.views if v.kind == kind]
        if not views:
            continue
        cells = []
        for v in views:
            face = cv2.resize(v.face, (SHEET_PX, SHEET_PX), interpolation=cv2.INTER_NEAREST)
            cell = np.hstack([cv2.resize(v.die, (SHEET_PX, SHEET_PX)), face])
            caption = f"{v.value}: read {v.read_as or '-'} {100 * v.confidence:.0f}%"
            colour = (80, 220, 80) if v.agrees else (60, 60, 255)
            cv2.rectangle(cell, (0, 0), (cell.shape[1] - 1, cell.shape[0] - 1), colour, 2)
            cv2.putText(cell, caption, (4, SHEET_PX - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.putText(cell, caption, (4, SHEET_PX - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
            cells.append(cell)
        per_row = 5
        cells += [np.zeros_like(cells[0])] * (-len(cells) % per_row)
        rows += [np.hstack(cells[i : i + per_row]) for i in range(0, len(cells), per_row)]
    return np.vstack(rows)
