"""Reader training samples from a labelled scene: jittered index boxes and index-sized boxes holding none.

Shared by the training-set builder and by enrolment, so a deck enrolled at home is taught with exactly the crops
the reader was trained on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from vision.recognise.labels import NONE


def jittered_box(rng: np.random.Generator, box: Sequence[float], amount: float = 0.15) -> np.ndarray:
    """A finder never returns the exact box: centre and size wobble by about `amount` of the box."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    cx, cy = (x1 + x2) / 2 + rng.normal(0, amount / 2) * w, (y1 + y2) / 2 + rng.normal(0, amount / 2) * h
    w, h = w * np.exp(rng.normal(0, amount)), h * np.exp(rng.normal(0, amount))
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def overlap(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over the smaller box's area."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return iw * ih / small if small > 0 else 0.0


def negative_boxes(rng: np.random.Generator, meta: dict, count: int) -> Iterator[np.ndarray]:
    """Index-sized boxes that hold no readable index: inside card faces and backs away from the corners, on
    hands and clutter, and on the bare table."""
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
        bw, bh = size * np.exp(rng.normal(0, 0.25, 2))
        if rng.random() < 0.5:
            bw, bh = bh, bw
        box = np.array([centre[0] - bw / 2, centre[1] - bh / 2, centre[0] + bw / 2, centre[1] + bh / 2])
        if any(overlap(box, c) > 0.2 for c in corners) or box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
            continue
        made += 1
        yield box


def index_samples(rng: np.random.Generator, meta: dict, negatives: float = 0.25) -> list[tuple[str, np.ndarray]]:
    """(label, box) for every readable index of a face-up card, jittered, plus about `negatives` as many none."""
    samples: list[tuple[str, np.ndarray]] = []
    for obj in meta["objects"]:
        if obj.get("kind", "card") != "card" or not obj["face_up"]:
            continue
        for corner in obj.get("corners", []):
            if corner["visible"] and corner.get("box") is not None:
                samples.append((obj["code"], jittered_box(rng, corner["box"])))
    n_neg = int(rng.poisson(negatives * max(len(samples), 1)))
    samples += [(NONE, box) for box in negative_boxes(rng, meta, n_neg)]
    return samples
