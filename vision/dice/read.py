"""Each found die's top face read, in two small steps as the card reader does (rectify, then classify):

1. the face finder (`models/dice-faces.onnx`) looks at the square around the die (`crops.square`, DIE_SPAN sizes a
   side) and says what lies face up there (no face, a d6's, a d20's) and where that face's corners are; on a
   calibrated table a second one (`models/dice-faces-table.onnx`, where shipped) looks at the die in the table's own
   view instead (`table_view`), where a resting die's top face is a regular polygon at one scale and a cocked one's
   is not;
2. the face reader (`models/dice-reader.onnx`) reads the face warped onto a regular triangle or square
   (`crops.face_picture`), once per turn of the face, and names its value.

Both are trained by `vision.train.dice_net`. The reading's confidence is calibrated (a temperature fitted on
validation dice, `vision.train.tune_dice`), and below the tuned floor the die is reported unread rather than
guessed. ONNX Runtime only."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.dice.crops import (
    CLASSES,
    DIE_SPAN,
    FACE_PX,
    FACE_SIDES,
    FACES,
    KINDS,
    READ_PX,
    face_picture,
    image_from_square,
    normalised_face,
    square,
)
from vision.dice.enrol import EnrolledDice
from vision.dice.find import DEFAULT_PEAK, DiceFinder, FoundDie
from vision.dice.level import LevelFace, LevelFitError, TableCamera, fit_level_face
from vision.dice.table_view import carried, view_of_find, view_picture
from vision.heatmap import cell_of, peaks, sigmoid

if TYPE_CHECKING:
    from vision.recognise.calibration import TableCalibration

FACE_FINDER_FILE = "dice-faces.onnx"
TABLE_FACE_FINDER_FILE = "dice-faces-table.onnx"  # the face finder of the table's view (optional: calibrated tables)
CELL = 8  # the face finder's corner map: a cell every 8 square pixels
READER_FILE = "dice-reader.onnx"
THRESHOLDS_FILE = "dice-thresholds.json"  # {"peak", "temperature", "confidence"}
UNREAD = "DIE"  # the label of a die whose face is not read
MARK = 0.05  # a cell of the corner map whose heat is at least this marks a corner a level face may pass through
KIND_FACES = {k: np.array([j for j, f in enumerate(FACES) if f.startswith(k.upper() + ":")]) for k in FACE_SIDES}


@dataclass(frozen=True)
class DieReading:
    """One die in a frame: its label (`D20:17`, or UNREAD), and how sure the reader is of that label."""

    label: str
    confidence: float
    x: float
    y: float
    size: float
    table_mm: tuple[float, float] | None = None  # the die's centre on the table plane, when the table is calibrated
    zone: str | None = None  # the table layout's zone it lies in (whose roll it is)

    @property
    def value(self) -> int | None:
        return value_of(self.label)

    def to_json(self) -> dict:
        out: dict = {
            "label": self.label,
            "value": self.value,
            "confidence": round(self.confidence, 4),
            "center": [round(self.x, 1), round(self.y, 1)],
            "size_px": round(self.size, 1),
        }
        if self.table_mm is not None:
            out["table_mm"] = [round(v, 1) for v in self.table_mm]
        if self.zone is not None:
            out["zone"] = self.zone
        return out


def value_of(label: str) -> int | None:
    """The face a die's label names (`D20:17` -> 17), None for UNREAD."""
    return int(label.split(":")[1]) if ":" in label else None


def reader_input(crops: np.ndarray) -> np.ndarray:
    """(n, 3, side, side) float32 from (n, side, side, 3) BGR pictures, centred on 0 (both nets take this)."""
    return np.ascontiguousarray((crops.astype(np.float32) / 255.0 - 0.5).transpose(0, 3, 1, 2))


READER_INPUT_KEY = "input"  # the face reader graph's metadata: "normalised" when it reads `crops.normalised_face`


def reads_normalised(reader: Any) -> bool:
    """Whether a face reader (an ONNX session) was trained on normalised faces, as its graph's metadata says: the
    picture it is shown must be made as the one it learnt from, so the graph carries it, not a setting beside it."""
    return reader.get_modelmeta().custom_metadata_map.get(READER_INPUT_KEY) == "normalised"


def face_input(reader: Any, pictures: np.ndarray) -> np.ndarray:
    """The face reader's input for (n, FACE_PX, FACE_PX, 3) face pictures, normalised when the reader wants them so."""
    if reads_normalised(reader):
        pictures = np.stack([normalised_face(p) for p in pictures])
    return reader_input(pictures)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def die_squares(frame: np.ndarray, found: list[FoundDie]) -> np.ndarray:
    """The face finder's square around each found die, (n, READ_PX, READ_PX, 3)."""
    if not found:
        return np.zeros((0, READ_PX, READ_PX, 3), np.uint8)
    return np.stack([square(frame, (f.x, f.y), DIE_SPAN * f.size, READ_PX) for f in found])


def die_views(frame: np.ndarray, found: list[FoundDie], camera: TableCamera) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each found die's table view (`table_view.view_of_find`, READ_PX a side, unturned), (n, READ_PX, READ_PX, 3),
    and the map from each view's pixels to the frame's."""
    pictures, to_frames = [], []
    for f in found:
        to_frame = view_of_find(camera, (f.x, f.y), f.size).frame_from_view(camera, READ_PX)
        pictures.append(view_picture(frame, to_frame, READ_PX))
        to_frames.append(to_frame)
    return np.stack(pictures) if pictures else np.zeros((0, READ_PX, READ_PX, 3), np.uint8), to_frames


def corners_from_heat(maps: np.ndarray, count: int) -> np.ndarray:
    """The `count` strongest corners of the face finder's corner map (heat logits and offsets, 3 x cells x cells), in
    square pixels: 3 x 3 peaks, each moved by its cell's offset (fewer when the map has fewer peaks)."""
    found = sorted(peaks(sigmoid(maps[:1]), 0.0, CELL), key=lambda p: -p[3])[:count]
    out = []
    for _c, x, y, _score in found:
        ix, iy = (round(v) for v in cell_of(x, y, CELL))
        out.append((x + CELL * float(maps[1, iy, ix]), y + CELL * float(maps[2, iy, ix])))
    return np.array(out, np.float32).reshape(-1, 2)


def corner_marks(maps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every cell of the face finder's corner map hot enough to mark a corner (MARK), moved by its offset, in square
    pixels, with its heat: what a level face is fitted to."""
    heat = sigmoid(maps[0])
    iy, ix = np.nonzero(heat >= MARK)
    points = np.stack([ix + maps[1, iy, ix], iy + maps[2, iy, ix]], 1) * CELL + (CELL - 1) / 2
    return points.reshape(-1, 2), heat[iy, ix]


@dataclass(frozen=True)
class FacePlace:
    """Where a die's top face lies: the kind of face, its corners in frame pixels (empty: no face to read) and,
    when the table is calibrated, the level face fitted (where the die stands, how well its corners are marked)."""

    kind: str
    corners: np.ndarray
    level: LevelFace | None = None


def face_places(
    kinds: np.ndarray,
    maps: np.ndarray,
    found: list[FoundDie],
    camera: TableCamera | None = None,
    to_frames: list[np.ndarray] | None = None,
) -> list[FacePlace]:
    """Each die's more likely kind of face (by the face finder's kind logits) and that face's corners: with a
    calibrated `camera`, the level face that fits the corner map best (`level.fit_level_face`); else the map's
    strongest peaks (none when it does not hold enough). `to_frames`: each map's picture to the frame (default: the
    die's upright square)."""
    places = []
    if to_frames is None:
        to_frames = [image_from_square((f.x, f.y), DIE_SPAN * f.size, READ_PX) for f in found]
    for kind_logits, corner_map, f, to_frame in zip(kinds, maps, found, to_frames, strict=True):
        kind = "d6" if kind_logits[KINDS.index("d6")] >= kind_logits[KINDS.index("d20")] else "d20"
        if camera is not None:
            marks, heat = corner_marks(corner_map)
            face = fit_level_face(camera, kind, (f.x, f.y), f.size, carried(marks, to_frame), heat, weigh=False)
            places.append(FacePlace(kind, face.corners, face))
            continue
        corners = corners_from_heat(corner_map, FACE_SIDES[kind])
        if len(corners) < FACE_SIDES[kind]:
            places.append(FacePlace(kind, np.zeros((0, 2), np.float32)))
            continue
        places.append(FacePlace(kind, carried(corners, to_frame)))
    return places


def label_of(probabilities: np.ndarray, floor: float) -> tuple[str, float]:
    """The reading one die's class probabilities amount to: its best face when sure enough, else UNREAD with the
    probability that there is no face to read."""
    best = int(probabilities.argmax())
    if best == 0 or probabilities[best] < floor:
        return UNREAD, float(1.0 - probabilities[1:].max())
    return CLASSES[best], float(probabilities[best])


@dataclass(frozen=True)
class DiceSettings:
    """The tuned cut-offs (`vision.train.tune_dice`). Faces fitted level on a calibrated table are placed better
    than faces found free, so their readings get a temperature and floor of their own."""

    peak: float = DEFAULT_PEAK
    temperature: float = 1.0  # the face reader's
    confidence: float = 0.5
    level_temperature: float = 1.0
    level_confidence: float = 0.5
    level_fit: float = 0.0  # a level face marked more weakly than this: the die may lie cocked, its value unread
    # per kind of face: a leaning face fitting better than the level one by more than this, the die lies cocked
    level_lean: Mapping[str, float] = field(default_factory=dict)
    # the finder's peak on a calibrated table, tuned by what the level faces then read (session 49): a find of no
    # die there is mostly left unread, so it costs less than a die missed
    level_peak: float = DEFAULT_PEAK

    @classmethod
    def load(cls, models: Path) -> DiceSettings:
        path = models / THRESHOLDS_FILE
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text())
        temperature, confidence = float(data["temperature"]), float(data["confidence"])
        level = data.get("level", {})
        return cls(
            float(data["peak"]),
            temperature,
            confidence,
            float(level.get("temperature", temperature)),
            float(level.get("confidence", confidence)),
            float(level.get("fit", 0.0)),
            _lean_caps(level.get("lean")),
            float(level.get("peak", data["peak"])),
        )

    def cut(self, level: bool) -> tuple[float, float]:
        """(temperature, confidence floor) for faces fitted level or found free."""
        if level:
            return self.level_temperature, self.level_confidence
        return self.temperature, self.confidence

    def doubted(self, seen: Looks, i: int) -> bool:
        """Whether die i may lie cocked, its value unread whatever the reader says: its level face weakly marked,
        or a leaning face marked better (`level.lean_of`). Faces found free are never doubted so."""
        return seen.fit(i) < self.level_fit or seen.lean(i) > self.level_lean.get(seen.face_kinds[i], math.inf)


def _lean_caps(value: object) -> dict[str, float]:
    """The lean caps as the thresholds file holds them: per kind of face (null: none), or one for every kind."""
    if isinstance(value, dict):
        return {kind: float(cap) if cap is not None else math.inf for kind, cap in value.items()}
    return dict.fromkeys(FACE_SIDES, float(value)) if isinstance(value, int | float) else {}


@dataclass(frozen=True)
class Looks:
    """What the two nets made of some dice: per die, the probability of each reader class (CLASSES: no face, then
    every face of both kinds), the face reader's logits for its face (averaged over the face's turns; FACES
    order) and the features they came from."""

    kinds: np.ndarray  # (n, len(KINDS)) the face finder's probabilities
    face_kinds: list[str]  # the kind of face each die was read as
    logits: np.ndarray  # (n, len(FACES))
    features: np.ndarray  # (n, F)
    levels: tuple[LevelFace | None, ...] = ()  # each die's level face, where the table is calibrated
    corners: tuple[np.ndarray, ...] = ()  # each die's top-face corners in the frame as read (none: no face placed)

    def subset(self, keep: list[int]) -> Looks:
        """The looks of the dice picked (by index)."""
        return Looks(
            self.kinds[keep],
            [self.face_kinds[i] for i in keep],
            self.logits[keep],
            self.features[keep],
            tuple(self.levels[i] for i in keep) if self.levels else (),
            tuple(self.corners[i] for i in keep) if self.corners else (),
        )

    @property
    def level(self) -> bool:
        """Whether the faces were fitted level (on a calibrated table)."""
        return any(face is not None for face in self.levels)

    def level_face(self, i: int) -> LevelFace | None:
        """Die i's level face; None when its face was not fitted level."""
        return self.levels[i] if self.levels else None

    def fit(self, i: int) -> float:
        """How well die i's level face is marked (1 when its face was not fitted level: nothing to doubt)."""
        face = self.level_face(i)
        return face.score if face is not None else 1.0

    def lean(self, i: int) -> float:
        """How much better a leaning face than die i's level face is marked (0 when its face was not fitted level);
        weighed here when the fit left it for later."""
        face = self.level_face(i)
        lean = face.weighed().lean if face is not None else 0.0
        return 0.0 if math.isnan(lean) else lean  # a face with nothing to weigh it on shows no lean

    def probabilities(self, temperature: float) -> np.ndarray:
        """(n, len(CLASSES)): no face as the face finder says; a face of the kind it was read as shares that kind's
        probability by the face reader's calibrated reading; the other kind's faces share theirs evenly."""
        out = np.zeros((len(self.face_kinds), len(CLASSES)), np.float32)
        out[:, 0] = self.kinds[:, 0]
        for i, kind in enumerate(self.face_kinds):
            for other, columns in KIND_FACES.items():
                share = self.kinds[i, KINDS.index(other)]
                if other == kind:
                    out[i, 1 + columns] = share * softmax(self.logits[i : i + 1, columns], temperature)[0]
                else:
                    out[i, 1 + columns] = share / len(columns)
        return out


def look(
    faces: Any,
    reader: Any,
    frame: np.ndarray,
    found: list[FoundDie],
    camera: TableCamera | None = None,
    table_faces: Any = None,
) -> Looks:
    """Both nets (ONNX sessions) over the found dice of a frame. With `camera`, each top face is fitted level, and
    with `table_faces` (the table view's face finder) too, the face is looked for in each die's table view."""
    if not found:
        return read_faces(reader, frame, np.zeros((0, len(KINDS)), np.float32), [])
    if camera is not None and table_faces is not None:
        pictures, to_frames = die_views(frame, found, camera)
        kind_logits, maps = table_faces.run(None, {"x": reader_input(pictures)})
        return read_faces(reader, frame, softmax(kind_logits), face_places(kind_logits, maps, found, camera, to_frames))
    kind_logits, maps = faces.run(None, {"x": reader_input(die_squares(frame, found))})
    return read_faces(reader, frame, softmax(kind_logits), face_places(kind_logits, maps, found, camera))


def read_faces(reader: Any, frame: np.ndarray, kinds: np.ndarray, places: list[FacePlace]) -> Looks:
    """The face reader (an ONNX session) over faces placed in the frame, every turn of each; a place with no
    corners has no face to warp and counts as "no face", whatever `kinds` (n x KINDS) said."""
    if not places:
        return Looks(np.zeros((0, len(KINDS)), np.float32), [], np.zeros((0, len(FACES)), np.float32), np.zeros((0, 0)))
    kinds = kinds.copy()
    pictures, owner = [], []
    for i, place in enumerate(places):
        corners = place.corners
        if len(corners) == 0:
            kinds[i] = np.eye(len(KINDS))[0]
        for turn in range(len(corners)):
            pictures.append(face_picture(frame, corners, turn))
            owner.append(i)
    if not pictures:
        pictures.append(np.zeros((FACE_PX, FACE_PX, 3), np.uint8))
        owner.append(-1)
    logits, features = reader.run(None, {"x": face_input(reader, np.stack(pictures))})
    who = np.array(owner)
    mean_logits = np.stack([_mean_of(logits, who == i) for i in range(len(places))])
    mean_features = np.stack([_mean_of(features, who == i) for i in range(len(places))])
    return Looks(
        kinds,
        [p.kind for p in places],
        mean_logits,
        mean_features,
        tuple(p.level for p in places),
        tuple(p.corners for p in places),
    )


def _mean_of(rows: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """The mean of the picked rows (a die's looks), zeros when none is picked (a die with no face to warp)."""
    return rows[pick].mean(axis=0) if pick.any() else np.zeros(rows.shape[1], rows.dtype)


class DiceReader:
    """Finds and reads every die of a frame; with `enrolled`, a player's own dice are matched against their
    enrolled faces too (`enrol.EnrolledDice.blend`)."""

    def __init__(self, models: Path, enrolled: EnrolledDice | None = None) -> None:
        from vision.recognise.models import session

        self.settings = DiceSettings.load(models)
        self.finder = DiceFinder(models, self.settings.peak)
        self.faces = session(models / FACE_FINDER_FILE)
        table_faces = models / TABLE_FACE_FINDER_FILE
        self.table_faces = session(table_faces) if table_faces.is_file() else None
        self.session = session(models / READER_FILE)
        self.enrolled = enrolled

    def look(self, frame: np.ndarray, found: list[FoundDie], camera: TableCamera | None = None) -> Looks:
        return look(self.faces, self.session, frame, found, camera, self.table_faces)

    def probabilities(
        self, frame: np.ndarray, found: list[FoundDie], table: TableCalibration | None = None
    ) -> np.ndarray:
        """(n, len(CLASSES)) for dice found (or placed) in the frame."""
        return self.calibrated(self.look(frame, found, table_camera(table, frame)))

    def calibrated(self, seen: Looks) -> np.ndarray:
        """(n, len(CLASSES)): the looks' probabilities at the tuned temperature, blended with the enrolled dice."""
        probabilities = seen.probabilities(self.settings.cut(seen.level)[0])
        if self.enrolled is None or len(probabilities) == 0:
            return probabilities
        return self.enrolled.blend(probabilities, seen.features)

    def decide(self, seen: Looks, probabilities: np.ndarray, i: int, floor: float) -> tuple[str, float, bool]:
        """Die i's label and confidence, and whether it was doubted as cocked: a die the floor would read is left
        unread when its face may lean (the lean is weighed only for a die to be read)."""
        label, confidence = label_of(probabilities, floor)
        if label != UNREAD and self.settings.doubted(seen, i):
            return (*label_of(probabilities, math.inf), True)
        return label, confidence, False

    def find(self, frame: np.ndarray, camera: TableCamera | None) -> list[FoundDie]:
        """The dice `read` looks at: found at the calibrated path's peak when the table's camera is known."""
        return self.finder.find(frame, self.settings.level_peak if camera is not None else None)

    def read(self, frame: np.ndarray, table: TableCalibration | None = None) -> list[DieReading]:
        """Every die of the frame. With the `table` calibrated, each top face is fitted level
        (`level.fit_level_face`) and each die is placed on the table, with the layout's zone it lies in."""
        camera = table_camera(table, frame)
        found = self.find(frame, camera)
        seen = self.look(frame, found, camera)
        out = []
        _, floor = self.settings.cut(seen.level)
        for i, (f, p) in enumerate(zip(found, self.calibrated(seen), strict=True)):
            label, confidence, _ = self.decide(seen, p, i, floor)
            reading = DieReading(label, confidence, f.x, f.y, f.size)
            if table is not None:
                level = seen.level_face(i)
                foot = level.foot_mm if level is not None else table.to_table(np.array([[f.x, f.y]]))[0]
                where, zone = table.where(np.asarray(foot))
                reading = replace(reading, table_mm=where, zone=zone)
            out.append(reading)
        return out


def table_camera(table: TableCalibration | None, frame: np.ndarray) -> TableCamera | None:
    """The camera a table calibration implies for frames of this size; None without a calibration, or when the
    calibration implies no camera that sees the table (the faces are then found as without one)."""
    if table is None:
        return None
    try:
        return TableCamera.from_homography(np.linalg.inv(table.homography), (frame.shape[1], frame.shape[0]))
    except (LevelFitError, np.linalg.LinAlgError):
        return None
