"""Reader training samples from a labelled scene: for the previous reader, jittered index quads and index-sized
quads holding none; for the rectified reader, which printed corners are seen well enough to teach, what each one
shows, and the corner finder's typical errors to cut them with.

Shared by the training-set builders and by enrolment, so a deck enrolled at home is taught with exactly the crops
the reader was trained on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from vision.recognise.labels import BACK, NONE, rank_suit


def jittered_quad(
    rng: np.random.Generator, quad: np.ndarray, amount: float = 0.15, turn_deg: float = 4.0
) -> np.ndarray:
    """A finder never returns the exact region: its centre, size and angle wobble by about `amount` of the
    region (and a few degrees)."""
    quad = np.asarray(quad, np.float64)
    centre = quad.mean(axis=0)
    size = np.ptp(quad, axis=0).max()
    shift = rng.normal(0, amount / 2, 2) * size
    angle = np.radians(rng.normal(0, turn_deg))
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    scale = np.exp(rng.normal(0, amount))
    return ((quad - centre) @ rot.T * scale + centre + shift).astype(np.float32)


def overlap(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over the smaller box's area."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return iw * ih / small if small > 0 else 0.0


def negative_quads(rng: np.random.Generator, meta: dict, count: int) -> Iterator[np.ndarray]:
    """Index-sized regions at any angle that hold no readable index: inside card faces and backs away from the
    corners, on hands and clutter, and on the bare table."""
    w, h = meta["width"], meta["height"]
    cards = [o for o in meta["objects"] if o.get("kind", "card") == "card"]
    sizes = [np.subtract(c["box"][2:], c["box"][:2]) for o in cards for c in o.get("corners", []) if c.get("box")]
    size = np.median(sizes, axis=0) if sizes else np.array([16.0, 32.0])
    seen = [c for o in cards if o["face_up"] for c in o.get("corners", []) if c["visible_fraction"] > 0]
    corners = [c["box"] for c in seen if c.get("box")]
    made = tries = 0
    while made < count and tries < 50 * count:
        tries += 1
        if cards and rng.random() < 0.7:
            quad = np.array(cards[int(rng.integers(len(cards)))]["quad"])
            a, b = rng.uniform(0.15, 0.85, 2)
            centre = (quad[0] * (1 - a) + quad[1] * a) * (1 - b) + (quad[3] * (1 - a) + quad[2] * a) * b
        else:
            centre = rng.uniform([0, 0], [w, h])
        bw, bh = np.sort(size * np.exp(rng.normal(0, 0.25, 2)))
        angle = rng.uniform(0, np.pi)
        ux, uy = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
        quad = np.array([centre + (sx * bw * ux + sy * bh * uy) / 2 for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
        box = (*quad.min(axis=0), *quad.max(axis=0))
        if any(overlap(box, c) > 0.2 for c in corners) or box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
            continue
        made += 1
        yield quad.astype(np.float32)


def index_samples(rng: np.random.Generator, meta: dict, negatives: float = 0.25) -> list[tuple[str, np.ndarray]]:
    """(label, quad) for every readable index of a face-up card, jittered, plus about `negatives` as many none."""
    samples: list[tuple[str, np.ndarray]] = []
    for obj in meta["objects"]:
        if obj.get("kind", "card") != "card" or not obj["face_up"]:
            continue
        for corner in obj.get("corners", []):
            if corner["visible"] and corner.get("box") is not None:
                samples.append((obj["code"], jittered_quad(rng, np.array(corner["quad"]))))
    n_neg = int(rng.poisson(negatives * max(len(samples), 1)))
    samples += [(NONE, quad) for quad in negative_quads(rng, meta, n_neg)]
    return samples


# ----- the rectified reader's corners ------------------------------------------------------------------------------

CORNER_SEEN = 0.6  # a corner (and an index) this visible is taught; the labeller's rule
INDEX_HIDDEN = 0.1  # an index at most this visible is gone, and its corner is taught as showing none


def jitter(rng: np.random.Generator, p: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """The corner finder's typical errors: a few percent of the card's width in place, scale and angle."""
    width = float(np.linalg.norm(a))
    turn = np.deg2rad(rng.normal(0, 3))
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    zoom = float(np.exp(rng.normal(0, 0.08)))
    return p + rng.normal(0, 0.03, 2) * width, (a @ rot.T) * zoom, (b @ rot.T) * zoom


def index_shown(corner_visible: Sequence[float], index_visible: Sequence[float], k: int) -> float:
    """How much of printed corner k's index shows: the labeller measures the top-left index and its half-turn twin;
    the other two corners' indices (four-index decks) are as visible as their corners."""
    return float(index_visible[k // 2] if k in (0, 2) else corner_visible[k])


def seen_corners(
    face_up: bool, corner_visible: Sequence[float], index_visible: Sequence[float], index_corners: Sequence[int]
) -> list[tuple[int, bool]]:
    """(printed corner 0..3, whether it shows an index) for every corner of a card seen well enough to teach.
    `index_visible` is how much of the top-left index and of its half-turn twin shows (`index_shown`). An index
    partly hidden (10-60%) is left out, taught
    neither as read nor as none, since either answer would teach the reader a guess."""
    out = []
    for k in range(4):
        if corner_visible[k] < CORNER_SEEN:
            continue
        shown = index_shown(corner_visible, index_visible, k)
        has_index = bool(face_up) and k in index_corners
        if has_index and shown < CORNER_SEEN:
            if shown > INDEX_HIDDEN:
                continue
            has_index = False
        out.append((k, has_index))
    return out


def corner_label(code: str, has_index: bool) -> tuple[str, str]:
    """(rank class, suit or '') a corner crop is taught: none where no index is printed or the side is a back."""
    if not has_index or code.startswith(BACK):
        return NONE, ""
    return rank_suit(code)
