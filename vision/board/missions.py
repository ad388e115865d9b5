"""The mission tiles on The LOOP's board: what lies on each Era's mission spot (nothing, a tile face down, or a
face-up mission by its code) and how many progress cubes of each colour stand on its slots.

Every spot is read on its own small view, cut upright out of the frame along the board's registration at about
1 px/mm with a margin round it (a tile is laid by hand, a few mm off its spot). What lies there is the picture
that best matches the view: each mission's face and the tiles' shared back in four turns, found by normalised
correlation anywhere in the margin; but first, a view whose middle the board's own print of the spot explains (fitted
to the view's light) is an empty spot, and a view no picture fits well is covered (a hand), read as nothing rather
than as a guess. A face-up tile's slots
are then known exactly (the catalogue says where they are printed): whether a slot holds a cube is read from how its
middle departs from the tile's own picture fitted to the view's light (a logistic regression on a dozen such
measures, `SlotModel`), and the cube's colour is the colour its middle shows. Geometry and colour, and a dozen
learnt weights.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.board.rectify import difference, in_light
from vision.recognise.models import ModelError

BACK = "BACK_MISSION"  # the name of the tiles' shared back in the piece set and in readings
MISSIONS_FILE = "the-loop-missions.npz"  # the stand-in tiles (synthetic design 0) until a player enrols theirs
SLOTS_FILE = "the-loop-mission-slots.json"  # the slot model (`SlotModel`)
TILE_PX = 60  # a tile's side in the reader's view: 60 mm at 1 px/mm
SPOT_PX = 63  # the printed spot's side in the view (1.5 mm wider than a tile each side)
MARGIN_PX = 14  # view beyond the spot on each side: a tile laid off its spot, a registration a few mm out
REACH_PX = 8  # a tile's centre is searched this far (px, about mm) about the spot's
EMPTY_INSET_PX = 6  # an empty spot is matched on its print this far inside its outline
# an empty spot: the median departure (B, G, R summed) of its middle from the board's print in the view's light
EMPTY_RESIDUAL = 20.0
MIN_SCORE = 0.3  # a view no face fits better than this is covered (chosen on training designs' scenes)
# a spot's view is the one last read unless CHANGED_PX of its half-resolution pixels (a quarter of a cube's top is
# about 5) moved more than CHANGED_LEVELS in some channel: noise and a flicker of light move none that far
CHANGED_LEVELS = 25
CHANGED_PX = 5
MATCH_SCALE = 0.5  # identity is matched at half the view's resolution: print detail, not texture, tells tiles apart
SLOT_CORE = 0.5  # the share of a slot's side, about its centre, that is read (a neighbour leaning in covers less)
COLOURS = ("red", "green")  # progress cubes: rift and energy
FORMAT = 1


@dataclass(frozen=True)
class MissionTiles:
    """One upright picture per mission face and one of the back, each at TILE_PX, with each face's slots."""

    codes: tuple[str, ...]
    fronts: np.ndarray  # (k, TILE_PX, TILE_PX, 3) uint8 BGR
    back: np.ndarray  # (TILE_PX, TILE_PX, 3)
    slots: tuple[np.ndarray, ...]  # per face: (n, 4) x0, y0, x1, y1 of its printed cube slots, tile fractions
    source: str = ""

    def save(self, path: Path) -> Path:
        meta = {"format": FORMAT, "codes": list(self.codes), "source": self.source}
        meta["slots"] = [s.round(5).tolist() for s in self.slots]
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, fronts=self.fronts, back=self.back, meta=json.dumps(meta))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> MissionTiles:
        if not path.is_file():
            raise ModelError(f"{path}: no mission tiles file (the stand-in is models/{MISSIONS_FILE})")
        try:
            with np.load(path) as data:
                meta = json.loads(str(data["meta"]))
                fronts, back = data["fronts"], data["back"]
        except (OSError, KeyError, ValueError) as err:
            raise ModelError(f"{path}: not a mission tiles file ({err})") from err
        side = (TILE_PX, TILE_PX, 3)
        if meta.get("format") != FORMAT or fronts.shape[1:] != side or back.shape != side:
            raise ModelError(f"{path}: a mission tiles file of another format ({TILE_PX} px tiles expected)")
        slots = tuple(np.asarray(s, np.float64).reshape(-1, 4) for s in meta["slots"])
        if len(slots) != len(fronts) or len(meta["codes"]) != len(fronts):
            raise ModelError(f"{path}: {len(fronts)} faces but {len(meta['codes'])} codes, {len(slots)} slot lists")
        return cls(tuple(meta["codes"]), fronts, back, slots, meta.get("source", ""))


def mission_tiles_of_piece_set(folder: Path) -> MissionTiles:
    """A synthetic piece set's mission tiles, with their slots where the art module prints them."""
    from games.the_loop.catalogue import load_catalogue
    from vision.recognise.catalogue import opaque
    from vision.synth.art.the_loop import mission_slot_boxes
    from vision.synth.pieces import load_piece_set

    pieces = load_piece_set(folder)
    missions = {c: m for c, m in load_catalogue().missions.items() if c in pieces.pieces}
    if not missions or BACK not in pieces.pieces:
        raise ModelError(f"{folder}: a piece set without mission tiles (expected {BACK} and M01...)")
    codes = tuple(sorted(missions))

    def shrunk(code: str) -> np.ndarray:
        return cv2.resize(opaque(pieces.image(code)), (TILE_PX, TILE_PX), interpolation=cv2.INTER_AREA)

    slots = tuple(np.array(mission_slot_boxes(len(missions[c].slots)), np.float64) for c in codes)
    return MissionTiles(codes, np.stack([shrunk(c) for c in codes]), shrunk(BACK), slots, str(folder))


@dataclass(frozen=True)
class SpotReading:
    era: str
    tile: str | None  # a mission's code (face up), BACK (face down), None (empty, or not seen)
    progress: dict[str, int]  # progress cubes by colour (face-up tiles only)
    confidence: float  # 0-1: how far the reading stands above the best one saying otherwise
    x: float  # the spot's centre, frame pixels
    y: float
    seen: bool = True  # False: something covers the spot, and what lies there is not said

    def to_json(self) -> dict:
        return {
            "seen": self.seen,
            "tile": self.tile,
            "progress": dict(self.progress),
            "confidence": round(self.confidence, 3),
            "center": [round(self.x, 1), round(self.y, 1)],
        }


def turned_box(box: np.ndarray, turns: int) -> np.ndarray:
    """A box (x0, y0, x1, y1, fractions of a square) where it lands when the square turns as np.rot90 turns it
    `turns` times: each turn takes (x, y) to (y, 1 - x)."""
    x0, y0, x1, y1 = box
    for _ in range(turns % 4):
        x0, y0, x1, y1 = y0, 1 - x1, y1, 1 - x0
    return np.array([x0, y0, x1, y1])


@dataclass(frozen=True)
class _Candidate:
    tile: str
    turns: int
    score: float
    at: tuple[int, int]  # top-left of the picture in the view, full resolution


class MissionReader:
    """Reads every mission spot of one board (its picture, the spots' corners in its fractions) against one set of
    mission tiles."""

    def __init__(
        self, board_picture: np.ndarray, spots: Mapping[str, np.ndarray], tiles: MissionTiles, slot_model: SlotModel
    ) -> None:
        self.spots = {era: np.asarray(q, np.float64) for era, q in spots.items()}
        self.tiles = tiles
        self.slot_model = slot_model
        self._last: dict[str, tuple[np.ndarray, SpotReading]] = {}  # per spot: the view last read, its reading
        self.view_px = SPOT_PX + 2 * MARGIN_PX
        picture = board_picture[..., :3]
        size = np.array([picture.shape[1], picture.shape[0]], np.float64)
        # the board's own print of each spot, cut as a frame's view is (from the picture's pixels)
        self.empty = {era: self._cut(picture, q * size) for era, q in self.spots.items()}
        self.empty_small = {era: _small(v) for era, v in self.empty.items()}
        pictures = [*tiles.fronts, tiles.back]
        names = [*tiles.codes, BACK]
        # (name, turns, picture at full and at match resolution) of every face in every turn
        self.faces = [
            (name, k, turned, _small(turned))
            for name, picture in zip(names, pictures, strict=True)
            for k in range(4)
            for turned in [np.ascontiguousarray(np.rot90(picture, k))]
        ]
        # the small faces as rows (channel by channel), each channel less its mean, each row of unit length: one
        # product with a view's raw windows correlates every face at every place at once (TM_CCOEFF_NORMED, summed
        # channels; a face's zero means make the windows' own means drop out of the product)
        self.face_rows = np.stack([_unit_rows(face[None].astype(np.float32))[0] for _, _, _, face in self.faces])

    def _cut(self, image: np.ndarray, corners: np.ndarray) -> np.ndarray:
        """The spot whose corners lie at `corners` (image pixels) cut upright with its margin (`view_px` square)."""
        m, s = MARGIN_PX, SPOT_PX
        target = np.array([[m, m], [m + s, m], [m + s, m + s], [m, m + s]], np.float32)
        to_view = cv2.getPerspectiveTransform(corners.reshape(4, 2).astype(np.float32), target)
        return cv2.warpPerspective(image, to_view, (self.view_px, self.view_px), flags=cv2.INTER_AREA)

    def view(self, frame: np.ndarray, frame_from_board: np.ndarray, era: str) -> np.ndarray:
        """The spot of `era` cut upright out of `frame` with its margin (`view_px` square)."""
        return self._cut(frame, self.frame_quad(era, frame_from_board))

    def forget(self) -> None:
        """Every spot is read afresh next time (another table, or a board moved)."""
        self._last.clear()

    def frame_quad(self, era: str, frame_from_board: np.ndarray) -> np.ndarray:
        """The spot's corners in frame pixels."""
        return cv2.perspectiveTransform(self.spots[era].reshape(-1, 1, 2), frame_from_board).reshape(-1, 2)

    def read(self, frame: np.ndarray, frame_from_board: np.ndarray) -> list[SpotReading]:
        """Every spot's reading; a spot whose view leaves the frame is not read (it is left out). A spot whose view
        is the one it last read (`CHANGED_PX`, `CHANGED_LEVELS`) keeps that reading: on a live table a mission changes
        a few times a game, and reading every spot again every frame would cost half a frame's time."""
        h, w = frame.shape[:2]
        out = []
        for era in self.spots:
            corners = self.frame_quad(era, frame_from_board)
            if not ((corners >= 0).all() and (corners[:, 0] < w).all() and (corners[:, 1] < h).all()):
                continue
            view = self._cut(frame, corners)
            small = _small(view)
            seen = small.astype(np.int16)
            last = self._last.get(era)
            if last is not None and int((np.abs(seen - last[0]).max(axis=2) > CHANGED_LEVELS).sum()) < CHANGED_PX:
                reading = replace(last[1], x=float(corners[:, 0].mean()), y=float(corners[:, 1].mean()))
            else:
                reading = self.read_view(era, view, small, *corners.mean(axis=0))
            self._last[era] = (seen, reading)
            out.append(reading)
        return out

    def candidates(self, view: np.ndarray) -> list[_Candidate]:
        """Every picture's best fit anywhere in the view, best first."""
        return self._ranked(_small(view))

    def _ranked(self, small: np.ndarray) -> list[_Candidate]:
        """`candidates` of the view at match resolution (`_small`)."""
        # the window a tile of TILE_PX lies in when its centre is within REACH_PX of the spot's
        lo = round((MARGIN_PX + (SPOT_PX - TILE_PX) / 2 - REACH_PX) * MATCH_SCALE)
        hi = round((MARGIN_PX + (SPOT_PX + TILE_PX) / 2 + REACH_PX) * MATCH_SCALE)
        region = np.ascontiguousarray(small[lo:hi, lo:hi], np.float32)
        side = self.faces[0][3].shape[0]
        windows = np.lib.stride_tricks.sliding_window_view(region, (side, side), axis=(0, 1))  # (y, x, 3, s, s)
        places = windows.shape[:2]
        # (faces, places)
        fits = (self.face_rows @ windows.reshape(-1, 3 * side * side).T) / _window_norms(region, side)
        best = fits.argmax(axis=1)
        out = []
        for (name, k, _, _), place, score in zip(self.faces, best, fits[np.arange(len(best)), best], strict=True):
            y, x = divmod(int(place), places[1])
            out.append(
                _Candidate(name, k, float(score), (round((x + lo) / MATCH_SCALE), round((y + lo) / MATCH_SCALE)))
            )
        return sorted(out, key=lambda c: -c.score)

    def empty_residual(self, era: str, small: np.ndarray) -> float:
        """How far the spot's middle departs from the board's own print there (median, B, G, R summed), on the view
        at match resolution (`_small`)."""
        inner = slice(
            round((MARGIN_PX + EMPTY_INSET_PX) * MATCH_SCALE),
            round((MARGIN_PX + SPOT_PX - EMPTY_INSET_PX) * MATCH_SCALE),
        )
        return float(np.median(difference(small, self.empty_small[era])[inner, inner]))

    def read_view(self, era: str, view: np.ndarray, small: np.ndarray, x: float, y: float) -> SpotReading:
        """One spot's reading from its view, and the view at match resolution (made once for the whole reading)."""
        none = dict.fromkeys(COLOURS, 0)
        residual = self.empty_residual(era, small)
        if residual <= EMPTY_RESIDUAL:
            return SpotReading(era, None, none, 1.0 - residual / EMPTY_RESIDUAL / 2, float(x), float(y))
        ranked = self._ranked(small)
        best = ranked[0]
        if best.score < MIN_SCORE:
            return SpotReading(era, None, none, 0.0, float(x), float(y), seen=False)
        other = next((c for c in ranked[1:] if c.tile != best.tile), best)
        progress = self.progress(view, best) if best.tile != BACK else none
        confidence = float(np.clip((best.score - other.score) * 4, 0, 1))
        return SpotReading(era, best.tile, progress, confidence, float(x), float(y))

    def fitted_face(self, view: np.ndarray, fit: _Candidate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the face as the view shows it, its picture in the view's light, its slots turned as it lies): the face's
        place refined at full resolution about the coarse fit."""
        index = self.tiles.codes.index(str(fit.tile))
        picture = next(p for name, k, p, _ in self.faces if name == fit.tile and k == fit.turns)
        x0, y0 = _refine(view, picture, fit.at)
        seen = view[y0 : y0 + TILE_PX, x0 : x0 + TILE_PX].astype(np.float32)
        boxes = np.array([turned_box(box, fit.turns) for box in self.tiles.slots[index]])
        return seen, in_light(seen, picture), boxes

    def progress(self, view: np.ndarray, fit: _Candidate) -> dict[str, int]:
        """Cubes on the fitted face's slots, by colour: each slot that `slot_model` says holds a cube counts in the
        colour its core shows (redder or greener)."""
        seen, expected, boxes = self.fitted_face(view, fit)
        counts = dict.fromkeys(COLOURS, 0)
        features, colours = slot_features(seen, expected, boxes)
        for filled, colour in zip(self.slot_model.filled(features), colours, strict=True):
            if filled:
                counts["red" if colour[2] > colour[1] else "green"] += 1
        return counts


SLOT_FEATURES = (
    "departure",  # |mean colour of the core - of the fitted print there|, B, G, R summed
    "contrast",  # the fitted face's mean departure from its own mean colour: how sharp and bright the view is
    "saturation",  # the core's mean colour: its largest channel less its smallest
    "print_saturation",  # ... of the fitted print's core
    "lightness",  # the core's mean over B, G, R
    "print_lightness",
    "median_departure",  # the median over the core's pixels of their departure
    "log_departure",
    "log_contrast",
    "log_median_departure",
    "saturation_gain",  # saturation less the print's
    "lightness_gain",
)


def slot_features(seen: np.ndarray, expected: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(features (slots, SLOT_FEATURES), each core's mean colour (slots, 3) BGR) of the slots `boxes` (tile
    fractions, as the face lies) of a face as the view shows it (`seen`) and its picture in the view's light."""
    side = seen.shape[0]
    contrast = float(np.abs(expected - expected.reshape(-1, 3).mean(axis=0)).sum(axis=2).mean())
    rows, colours = [], []
    for bx0, by0, bx1, by1 in boxes * side:
        cx, cy, half = (bx0 + bx1) / 2, (by0 + by1) / 2, (bx1 - bx0) * SLOT_CORE / 2
        core = (slice(round(cy - half), round(cy + half) + 1), slice(round(cx - half), round(cx + half) + 1))
        here, printed = seen[core].reshape(-1, 3), expected[core].reshape(-1, 3)
        colour, print_colour = here.mean(axis=0), printed.mean(axis=0)
        departure = float(np.abs(colour - print_colour).sum())
        median = float(np.median(np.abs(here - printed).sum(axis=1)))
        saturation, print_saturation = float(np.ptp(colour)), float(np.ptp(print_colour))
        lightness, print_lightness = float(colour.mean()), float(print_colour.mean())
        rows.append(
            (
                departure,
                contrast,
                saturation,
                print_saturation,
                lightness,
                print_lightness,
                median,
                np.log1p(departure),
                np.log1p(contrast),
                np.log1p(median),
                saturation - print_saturation,
                lightness - print_lightness,
            )
        )
        colours.append(colour)
    return np.array(rows, np.float64).reshape(-1, len(SLOT_FEATURES)), np.array(colours).reshape(-1, 3)


@dataclass(frozen=True)
class SlotModel:
    """A logistic regression on `SLOT_FEATURES` (standardised): whether a slot holds a cube. Fitted on training
    designs' scenes by `vision.train.mission_slots`; numpy at run time."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def filled(self, features: np.ndarray) -> np.ndarray:
        return ((features - self.mean) / self.scale) @ self.weights + self.bias > 0

    def to_json(self) -> dict:
        return {
            "features": list(SLOT_FEATURES),
            "mean": self.mean.round(6).tolist(),
            "scale": self.scale.round(6).tolist(),
            "weights": self.weights.round(6).tolist(),
            "bias": round(self.bias, 6),
        }

    @classmethod
    def load(cls, path: Path) -> SlotModel:
        try:
            data = json.loads(Path(path).read_text())
            names = list(data["features"])
            values = [np.asarray(data[k], np.float64) for k in ("mean", "scale", "weights")]
            bias = float(data["bias"])
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ModelError(f"{path}: expected JSON with features, mean, scale, weights and bias ({err})") from err
        if names != list(SLOT_FEATURES) or any(v.shape != (len(SLOT_FEATURES),) for v in values):
            raise ModelError(f"{path}: its features {names} are not this build's {list(SLOT_FEATURES)}")
        if (values[1] <= 0).any():
            raise ModelError(f"{path}: 'scale' must be positive")
        return cls(*values, bias)


def _unit_rows(patches: np.ndarray) -> np.ndarray:
    """(n, h, w, 3) patches as rows (n, 3 * h * w, channel by channel): each channel less its own mean, the row of
    unit length."""
    centred = patches - patches.mean(axis=(1, 2), keepdims=True)
    rows = centred.transpose(0, 3, 1, 2).reshape(len(patches), -1)
    return rows / (np.linalg.norm(rows, axis=1, keepdims=True) + 1e-6)


def _window_norms(region: np.ndarray, side: int) -> np.ndarray:
    """The length of every `side` square window of `region` (h, w, 3 float32), each channel less its own mean, as
    a row (top-left places in row order): from integral images, so no window is centred one by one."""
    total, squares = cv2.integral2(region, sdepth=cv2.CV_64F)

    def box(integral: np.ndarray) -> np.ndarray:
        return integral[side:, side:] - integral[:-side, side:] - integral[side:, :-side] + integral[:-side, :-side]

    sums = box(total)
    spread = (box(squares) - sums * sums / (side * side)).sum(axis=2).reshape(-1)
    # a flat window (a black or blown-out patch) fits nothing: its product with a face is rounding error
    return np.where(spread > 1.0, np.sqrt(np.maximum(spread, 1.0)), np.inf).astype(np.float32)


def _small(image: np.ndarray) -> np.ndarray:
    return cv2.resize(image, None, fx=MATCH_SCALE, fy=MATCH_SCALE, interpolation=cv2.INTER_AREA)


def _refine(view: np.ndarray, picture: np.ndarray, at: tuple[int, int], reach: int = 3) -> tuple[int, int]:
    """The picture's top-left in the view, searched `reach` px about the coarse fit at full resolution."""
    limit = view.shape[0] - picture.shape[0]
    x0, y0 = (int(np.clip(v - reach, 0, limit)) for v in at)
    x1, y1 = (int(np.clip(v + reach, 0, limit)) for v in at)
    window = view[y0 : y1 + picture.shape[0], x0 : x1 + picture.shape[1]]
    _, _, _, (dx, dy) = cv2.minMaxLoc(cv2.matchTemplate(window, picture, cv2.TM_CCOEFF_NORMED))
    return x0 + dx, y0 + dy
