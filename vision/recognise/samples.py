"""Reader training samples from a labelled scene: jittered index quads and index-sized quads holding none.

Shared by the training-set builder and by enrolment, so a deck enrolled at home is taught with exactly the crops
the reader was trained on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from vision.recognise.labels import NONE


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
