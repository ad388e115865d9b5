"""A clone token's Paradox Era, read from its colour against the colours this board prints its Eras in.

Why: a clone token is printed in its Paradox Era's colour, and the board prints each Era's sector in that colour
too. The pieces net sees a few centimetres around a token and cannot tell which of seven sectors, most of them far
away, it matches (it named the Era of 19% of held-out tokens). Comparing colours is exact where colour is, and
holds on any board the player registers: the Era colours come from the board's own picture, and from the frame
itself as the current light shows them.

Each Era is scored by a few colour likenesses between the token and the Era's fill (its sector's most common colour
in the board's picture, and the same pixels as this frame shows them); a linear score over them, its weights fitted
on training boards (`vision.train.clone_eras`), and a softmax over the seven Eras give the Paradox Era and how sure
it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.board.rectify import px_per_mm

MODEL_FILE = "the-loop-clone-eras.json"  # {"features": [...], "weights": [...], "clone_peak": cut-off}
TOKEN_MM = 28.0  # a clone token's diameter (the stand-in's; a real one is about this)
INNER = 0.8  # the token's face: this share of its radius (its rim and the board beyond left out)
RING = (0.5, 0.95)  # the token's outer ring, shares of its radius: the back, printed in the Era's colour
HIST_BINS = 16  # per chroma axis (a* and b*), over 0-255
SAMPLE = 2000  # pixels sampled from each sector
FILL_SPREAD = 10.0  # a sector's pixels within this of its most common colour (Lab, each axis) are its fill
FEATURES = (
    "face_hue_vs_fill",  # cosine of the token face's chroma (weighted by chroma) and the fill's, as printed
    "face_hue_vs_lit_fill",  # the same against the fill as this frame shows it
    "ring_hue_vs_fill",
    "ring_hue_vs_lit_fill",
    "face_chroma_near_fill",  # minus the distance between the two chromas (a* b*, /50)
    "face_chroma_near_lit_fill",
    "face_histogram_vs_lit_sector",  # Bhattacharyya coefficient of chroma histograms (weighted by chroma)
    "face_histogram_vs_sector",  # against the whole sector as printed (its texture, band and emblem too)
    "face_lightness_near_lit_fill",  # minus the lightness difference (/50)
)


def lab(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)


def chroma_histogram(pixels: np.ndarray) -> np.ndarray:
    """A smoothed, normalised a*-b* histogram of Lab `pixels` (n, 3), each weighted by its chroma (grey counts
    nothing: it says nothing of an Era)."""
    ab = pixels[:, 1:]
    weight = np.linalg.norm(ab - 128.0, axis=1)
    cells = np.clip(ab * (HIST_BINS / 256.0), 0, HIST_BINS - 1).astype(np.int64)
    h = np.bincount(cells[:, 0] * HIST_BINS + cells[:, 1], weight, HIST_BINS * HIST_BINS)
    h = cv2.GaussianBlur(h.reshape(HIST_BINS, HIST_BINS).astype(np.float32), (5, 5), 1.0)
    return h / (h.sum() + 1e-9)


def hue_of(pixels: np.ndarray) -> np.ndarray:
    """The chroma-weighted mean chroma (a*, b* about grey) of Lab `pixels`."""
    ab = pixels[:, 1:] - 128.0
    weight = np.linalg.norm(ab, axis=1)
    return (ab * (weight / (weight.sum() + 1e-6))[:, None]).sum(axis=0)


def cosines(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The cosine of vector `a` with each of `rows`."""
    return rows @ a / (np.linalg.norm(rows, axis=1) * np.linalg.norm(a) + 1e-6)


@dataclass(frozen=True)
class EraFills:
    """Each Era on one board: a sample of its sector's pixels and of its fill's (flat indices into the cut; a few
    thousand tell a colour as well as all of them, at a fraction of the time a frame), the fill's colour as
    printed, and the sector's chroma histogram as printed."""

    sector: dict[str, np.ndarray]  # Era -> flat indices of a sample of its sector's pixels
    fill: dict[str, np.ndarray]  # Era -> which of those sampled pixels are its fill (bool)
    printed: dict[str, np.ndarray]  # Era -> Lab colour of the fill in the board's picture
    histogram: dict[str, np.ndarray]  # Era -> the sector's chroma histogram in the board's picture

    @classmethod
    def of(cls, reference: np.ndarray, masks: Mapping[str, np.ndarray]) -> EraFills:
        ref = lab(reference).reshape(-1, 3)
        sector, fill, printed, histogram = {}, {}, {}, {}
        for era, mask in masks.items():
            where = np.flatnonzero(mask)
            if not len(where):
                raise ValueError(f"Era {era!r} has no pixels on the cut")
            where = where[:: max(len(where) // SAMPLE, 1)]
            pixels = ref[where]
            q = (pixels // 8).astype(np.int64)
            keys = q[:, 0] * 1024 + q[:, 1] * 32 + q[:, 2]
            common = pixels[keys == np.bincount(keys).argmax()].mean(axis=0)
            near = np.abs(pixels - common).max(axis=1) < FILL_SPREAD
            sector[era], fill[era] = where, near
            printed[era], histogram[era] = pixels[near].mean(axis=0), chroma_histogram(pixels)
        return cls(sector, fill, printed, histogram)


def lab_at(cut: np.ndarray, where: np.ndarray) -> np.ndarray:
    """(n, 3) Lab of the BGR cut's pixels at flat indices `where`."""
    pixels = cut.reshape(-1, 3)[where]
    return cv2.cvtColor(pixels[:, None, :], cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)


@dataclass(frozen=True)
class LitEras:
    """The Eras as one cut shows them: their fill's colour (the median over the fill's pixels, so a hand or a token
    over part of a sector is outvoted) and each sector's chroma histogram."""

    colour: dict[str, np.ndarray]
    histogram: dict[str, np.ndarray]

    @classmethod
    def of(cls, cut: np.ndarray, fills: EraFills) -> LitEras:
        # every sector's sampled pixels converted at once (a fill's pixels are some of its sector's)
        eras = list(fills.sector)
        ends = np.cumsum([len(fills.sector[era]) for era in eras])
        pixels = lab_at(cut, np.concatenate([fills.sector[era] for era in eras]))
        sectors = dict(zip(eras, np.split(pixels, ends[:-1]), strict=True))
        colour, histogram = {}, {}
        for era in eras:
            fill = sectors[era][fills.fill[era]]
            colour[era] = np.median(fill, axis=0) if len(fill) else fills.printed[era]
            histogram[era] = chroma_histogram(sectors[era])
        return cls(colour, histogram)


def token_pixels(cut: np.ndarray, x: float, y: float, inner: float, outer: float) -> np.ndarray:
    """The Lab pixels of the BGR cut between `inner` and `outer` shares of a token's radius about (x, y)."""
    h, w = cut.shape[:2]
    radius = TOKEN_MM / 2 * px_per_mm(w)
    reach = int(np.ceil(outer * radius)) + 1
    x0, y0 = max(int(x) - reach, 0), max(int(y) - reach, 0)
    x1, y1 = min(int(x) + reach + 1, w), min(int(y) + reach + 1, h)
    if x0 >= x1 or y0 >= y1:
        return np.zeros((0, 3), np.float32)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    d2 = (xx - x) ** 2 + (yy - y) ** 2
    inside = (d2 >= (inner * radius) ** 2) & (d2 < (outer * radius) ** 2)
    return lab(np.ascontiguousarray(cut[y0:y1, x0:x1]))[inside]


def era_features(cut: np.ndarray, x: float, y: float, fills: EraFills, lit: LitEras) -> np.ndarray:
    """(Eras, len(FEATURES)) colour likenesses between the token centred at (x, y) on the BGR cut and each Era's
    fill, as printed and as this cut shows it."""
    face = token_pixels(cut, x, y, 0.0, INNER)
    ring = token_pixels(cut, x, y, *RING)
    if len(face) < 8 or len(ring) < 8:
        return np.zeros((len(fills.printed), len(FEATURES)), np.float32)
    face_hue, ring_hue, face_hist = hue_of(face), hue_of(ring), chroma_histogram(face)
    printed = np.stack(list(fills.printed.values()))
    shown = np.stack([lit.colour[era] for era in fills.printed])
    printed_ab, shown_ab = printed[:, 1:] - 128.0, shown[:, 1:] - 128.0
    return np.stack(
        [
            cosines(face_hue, printed_ab),
            cosines(face_hue, shown_ab),
            cosines(ring_hue, printed_ab),
            cosines(ring_hue, shown_ab),
            -np.linalg.norm(printed_ab - face_hue, axis=1) / 50,
            -np.linalg.norm(shown_ab - face_hue, axis=1) / 50,
            [float(np.sqrt(face_hist * lit.histogram[era]).sum()) for era in fills.printed],
            [float(np.sqrt(face_hist * fills.histogram[era]).sum()) for era in fills.printed],
            -np.abs(float(face[:, 0].mean()) - shown[:, 0]) / 50,
        ],
        axis=1,
    ).astype(np.float32)


@dataclass(frozen=True)
class ParadoxReader:
    """The fitted weights of the colour likenesses (`FEATURES`), and the cut-off at which the strongest of the
    pieces net's clone maps is a token (`cubes.find_pieces`), tuned with them."""

    weights: np.ndarray
    clone_peak: float

    @classmethod
    def load(cls, path: Path) -> ParadoxReader:
        from vision.recognise.models import ModelError

        try:
            tuned = json.loads(path.read_text())
            names, weights = list(tuned["features"]), np.array(tuned["weights"], np.float64)
            clone_peak = float(tuned["clone_peak"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ModelError(f"{path}: expected JSON with features, weights and clone_peak ({e})") from e
        if names != list(FEATURES) or weights.shape != (len(FEATURES),):
            raise ModelError(f"{path}: its features {names} are not this build's {list(FEATURES)}")
        if not 0 < clone_peak < 1:
            raise ModelError(f"{path}: clone_peak {clone_peak} is not a probability")
        return cls(weights, clone_peak)

    def relabel(
        self, found: list[tuple[str, float, float, float]], cut: np.ndarray, fills: EraFills
    ) -> list[tuple[str, float, float, float]]:
        """`found` pieces (label, x, y on `cut`, score) with each clone token's label given the Era its colour
        names; the rest as they are."""
        tokens = [(x, y) for label, x, y, _ in found if label.startswith("CLONE:")]
        eras = iter(self.read(cut, fills, tokens))
        return [(f"CLONE:{next(eras)[0]}" if label.startswith("CLONE:") else label, *rest) for label, *rest in found]

    def read(self, cut: np.ndarray, fills: EraFills, tokens: list[tuple[float, float]]) -> list[tuple[str, float]]:
        """(Paradox Era, probability) of each token at (x, y) on `cut` (BGR, the ring cut the fills were made on)."""
        if not tokens:
            return []
        lit = LitEras.of(cut, fills)
        eras = list(fills.printed)
        out = []
        for x, y in tokens:
            scores = era_features(cut, x, y, fills, lit) @ self.weights
            p = np.exp(scores - scores.max())
            p /= p.sum()
            best = int(p.argmax())
            out.append((eras[best], float(p[best])))
        return out
