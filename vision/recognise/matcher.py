"""Reading an enrolled deck's corners by matching them against the deck's own pictures.

The reader (`corner_reader`) has learnt what indices look like across many decks; an enrolled deck's pictures say
exactly what this deck's look like. Enrolment cuts templates out of every face picture's index corners by the
runtime's own rule (`corners.corner_crop` along the picture's true corner frame, `cut_flat`), at the corner
finder's range of scale errors (ZOOMS; `samples.jitter` errs 8% in scale) and at the card shapes the deck may be
seen at (`card_aspects`). A crop is compared with them by zero-mean normalised cross-correlation on colour (hearts
against spades on a two-colour deck), at half the crop's resolution (`MATCH_BOX`, the card's face only: the table
beyond its edge and rounded corner is masked out, as it is whatever the card lies on):

1. alignment: the crop is aligned to the templates of the face label the reader finds likeliest, over shifts of up
   to 8% of the card's width (quarter resolution, then to one half-resolution pixel) and over every zoom and shape.
   The corner finder's error belongs to the crop, not to a label, so one alignment serves every label; letting each
   template find its own alignment read worse when measured (a wrong card's template finds some place that fits).
2. scores: at that alignment every label's templates are scored; a label's score is its best template's.

The scores only reorder the faces: whether a crop shows an index at all stays the reader's call (matching the
corners without an index and the back as "none" read worse when measured), and crops the reader sees no index in
are not matched (`MATCH_BELOW_NONE`). `combine` turns reader and matcher into one distribution.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np

from vision.recognise.corners import CROP_BOX, READ_H, READ_W, corner_crop, printed_corner
from vision.recognise.labels import NONE, READER_CLASSES, rank_suit

ZOOMS = (0.8, 0.86, 0.93, 1.0, 1.07, 1.15, 1.24)  # template frames scaled by these: the corner finder's scale error
POKER_ASPECT = 88 / 63  # the shape the synthetic engine renders every deck's cards at
SAME_SHAPE = 0.03  # a picture within 3% of the poker shape is matched at its own shape only
MATCH_BOX = (-0.02, -0.02, 0.30, 0.50)  # the region compared, in card widths from the corner (inside CROP_BOX)
SEARCH = 2  # quarter-resolution pixels searched each way: 8 crop pixels, 8% of the card's width
MATCH_BELOW_NONE = 0.5  # crops the reader gives "none" at least this are not matched: the recogniser does not
# read their faces (`rectified.RectifiedThresholds.none_reject`), and "none" stays the most likely reading
FLAT_TABLE = 128  # the grey a flat card picture's transparent corners are laid on
OPAQUE = 200  # a template pixel is card (not table) where every template's alpha is at least this
FACES = np.array([label != NONE for label in READER_CLASSES])


def label_of(code: str) -> str:
    """A picture's READER_CLASSES label: '10H', or 'JOKER' for either joker."""
    rank, suit = rank_suit(code)
    return rank + suit


def cut_flat(
    picture: np.ndarray, k: int, zoom: float = 1.0, aspect: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Printed corner k (0..3: TL, TR, BR, BL) of a card picture cut as the runtime cuts a corner, its frame scaled by
    `zoom` and the picture stretched to height/width `aspect` first (None: its own): (READ_H, READ_W, 3) BGR with
    the picture's transparent corners and the space beyond its edges laid on grey, and (READ_H, READ_W) alpha."""
    if aspect is not None:
        w = picture.shape[1]
        picture = cv2.resize(picture, (w, round(w * aspect)), interpolation=cv2.INTER_AREA)
    if picture.shape[2] == 3:
        picture = np.dstack([picture, np.full(picture.shape[:2], 255, np.uint8)])
    h, w = picture.shape[:2]
    m = round(0.15 * w)  # beyond CROP_BOX's reach at any zoom
    padded = cv2.copyMakeBorder(picture, m, m, m, m, cv2.BORDER_CONSTANT, value=(0, 0, 0, 0))
    alpha = padded[..., 3:4].astype(np.float32) / 255.0
    image = (padded[..., :3].astype(np.float32) * alpha + FLAT_TABLE * (1 - alpha)).astype(np.uint8)
    quad = np.array([[m, m], [w + m, m], [w + m, h + m], [m, h + m]], np.float32)
    p, a, b = printed_corner(quad, k)
    a, b = a * zoom, b * zoom
    return corner_crop(image, p, a, b), corner_crop(padded[..., 3], p, a, b)


def card_aspects(size: tuple[int, int]) -> tuple[float | None, ...]:
    """The shapes to cut a deck's templates at, from its pictures' (width, height): their own (None), and the poker
    shape too where they are not poker-shaped. A card is seen at its own shape by a camera, but the synthetic
    engine that enrolment and the bench render with draws every deck at the poker shape."""
    own = size[1] / size[0]
    return (None,) if abs(own / POKER_ASPECT - 1) <= SAME_SHAPE else (None, POKER_ASPECT)


def cut_templates(
    pictures: Mapping[str, np.ndarray], index_corners: Sequence[int], aspects: Sequence[float | None]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every face picture's index corners at every zoom and shape: templates (poses, slots, READ_H/2, READ_W/2, 3)
    uint8 at half resolution, poses being ZOOMS for each aspect; each slot's label (a picture's code read as a
    READER_CLASSES label); and how opaque each template pixel is on every template (the card's face, not the table)."""
    slots = [(label_of(code), k) for code in pictures for k in index_corners]
    poses = [(zoom, aspect) for aspect in aspects for zoom in ZOOMS]
    crops = np.zeros((len(poses), len(slots), READ_H, READ_W, 3), np.uint8)
    alpha = np.full((READ_H, READ_W), 255, np.uint8)
    codes = [code for code in pictures for _ in index_corners]
    for z, (zoom, aspect) in enumerate(poses):
        for j, (code, (_, k)) in enumerate(zip(codes, slots, strict=True)):
            crops[z, j], a = cut_flat(pictures[code], k, zoom, aspect)
            alpha = np.minimum(alpha, a)
    half = halve(crops.reshape(-1, READ_H, READ_W, 3).astype(np.float32))
    templates = np.round(half).astype(np.uint8).reshape(len(poses), len(slots), READ_H // 2, READ_W // 2, 3)
    opaque = np.round(halve(alpha[None, :, :, None].astype(np.float32))[0, :, :, 0]).astype(np.uint8)
    return templates, np.array([label for label, _ in slots]), opaque


def halve(x: np.ndarray) -> np.ndarray:
    """(n, h, w, c) float32 -> (n, h/2, w/2, c), each pixel the mean of four: one resize of the stacked crops."""
    n, h, w, c = x.shape
    if n == 0:
        return np.zeros((0, h // 2, w // 2, c), np.float32)
    y = cv2.resize(x.reshape(n * h, w, c), (w // 2, n * h // 2), interpolation=cv2.INTER_AREA)
    return y.reshape(n, h // 2, w // 2, c)


def box_pixels(scale: int) -> tuple[int, int, int, int]:
    """MATCH_BOX in pixels (x0, y0, x1, y1) of the crop shrunk `scale` times."""
    per = READ_W / (CROP_BOX[2] - CROP_BOX[0]) / scale
    x0, y0, x1, y1 = (round((v - CROP_BOX[i % 2]) * per) for i, v in enumerate(MATCH_BOX))
    return x0, y0, x1, y1


class Level:
    """One resolution of the match: the box, the card-face mask, and the templates as unit vectors (zero-mean per
    channel on the mask, zero off it, in (channel, row, column) order: the order of a window of the crop)."""

    def __init__(self, images: np.ndarray, opaque: np.ndarray, scale: int) -> None:
        self.box = x0, y0, x1, y1 = box_pixels(scale)
        self.mask = opaque[y0:y1, x0:x1] >= OPAQUE
        self.pixels = int(self.mask.sum())
        self.on_mask = np.tile(self.mask.ravel(), images.shape[-1]).astype(np.float32)  # (c * h * w,)
        t = images[..., y0:y1, x0:x1, :].astype(np.float32)
        t = np.moveaxis(t, -1, -3).copy()  # (..., c, h, w)
        inside = t[..., self.mask]
        t[..., self.mask] = inside - inside.mean(axis=-1, keepdims=True)
        t[..., ~self.mask] = 0.0
        t = t.reshape(*t.shape[:-3], -1)
        self.vectors = t / np.maximum(np.linalg.norm(t, axis=-1, keepdims=True), 1e-6)

    def windows(self, images: np.ndarray, reach: int) -> np.ndarray:
        """(n, 2 reach + 1, 2 reach + 1, c, h, w): the box shifted by up to `reach` pixels each way (a view: only
        the windows indexed out of it are copied)."""
        x0, y0, x1, y1 = self.box
        padded = np.pad(images, ((0, 0), (reach, reach), (reach, reach), (0, 0)), mode="edge")
        region = padded[:, y0 : y1 + 2 * reach, x0 : x1 + 2 * reach]
        return np.lib.stride_tricks.sliding_window_view(region, (y1 - y0, x1 - x0), axis=(1, 2))

    def spread(self, rows: np.ndarray) -> np.ndarray:
        """Each window's centred norm over the mask: the denominator of its correlation with any template. Summed
        by einsum, not by a matrix product: BLAS would spread this thin product over threads that, on a busy
        two-core machine, cost more than the sums."""
        sums = np.einsum("mcp,p->mc", rows.reshape(len(rows), -1, self.mask.size), self.mask.ravel().astype(np.float32))
        energy = np.einsum("md,d->m", rows * rows, self.on_mask)
        return np.sqrt(np.maximum(energy - (sums * sums).sum(axis=1) / self.pixels, 1e-3))


class DeckMatcher:
    """An enrolled deck's templates (`cut_templates`), ready to score corner crops."""

    def __init__(self, templates: np.ndarray, labels: np.ndarray, opaque: np.ndarray) -> None:
        self.templates, self.labels, self.opaque = templates, np.asarray(labels), opaque
        poses, slots = templates.shape[:2]
        self.half = Level(templates, opaque, 2)
        small = halve(templates.reshape(-1, *templates.shape[2:]).astype(np.float32))
        self.quarter = Level(small.reshape(poses, slots, *small.shape[1:]), opaque_of(opaque), 4)
        self.columns = np.array([READER_CLASSES.index(label) for label in self.labels])
        self.known = np.zeros(len(READER_CLASSES), bool)
        self.known[self.columns] = True
        # each label's templates at every pose (pose-major), as the matrices a crop is aligned with
        slots_of = {int(c): np.nonzero(self.columns == c)[0] for c in np.unique(self.columns)}
        self.aligners = {
            c: tuple(level.vectors[:, s].reshape(-1, level.vectors.shape[-1]).T for level in (self.quarter, self.half))
            for c, s in slots_of.items()
        }
        self.by_pose = np.ascontiguousarray(self.half.vectors.transpose(0, 2, 1))  # (poses, d, slots)

    def scores(self, crops: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """(n, READER_CLASSES) correlations of upright crops (n, READ_H, READ_W, 3) with each label's best template,
        every crop aligned on the templates of the deck's label the reader's `probs` find likeliest; -1 for labels
        the deck has no template of (none, and a joker the deck lacks)."""
        n = len(crops)
        out = np.full((n, len(READER_CLASSES)), -1.0, np.float32)
        if n == 0:
            return out
        align = np.where(self.known, probs, -1.0).argmax(axis=1)
        half = halve(crops.astype(np.float32))
        coarse = self.quarter.windows(halve(half), SEARCH)
        grid = coarse.shape[1]
        coarse = coarse.reshape(n, grid * grid, -1)
        coarse_spread = self.quarter.spread(coarse.reshape(n * grid * grid, -1)).reshape(n, grid * grid, 1)
        fine = self.half.windows(half, 2 * SEARCH + 1)  # reaches every quarter-resolution shift, and a pixel more
        steps = np.array([(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)])
        best = np.zeros((n, self.half.vectors.shape[-1]), np.float32)
        best_spread = np.ones(n, np.float32)
        best_pose = np.zeros(n, int)
        for column in np.unique(align):  # 1. alignment, the crops aligned on one label at a time
            rows = np.nonzero(align == column)[0]
            on_quarter, on_half = self.aligners[int(column)]
            per_shift = on_quarter.shape[1]  # this label's templates at every pose
            # every quarter-resolution shift and pose, then the nine half-resolution shifts around the best one
            found = (coarse[rows] @ on_quarter) / coarse_spread[rows]
            sy, sx = np.divmod(found.reshape(len(rows), -1).argmax(axis=1) // per_shift, grid)
            ys = 1 + 2 * sy[:, None] + steps[:, 0]
            xs = 1 + 2 * sx[:, None] + steps[:, 1]
            near = fine[rows[:, None], ys, xs].reshape(len(rows) * len(steps), -1)
            spread = self.half.spread(near)
            found = (near.reshape(len(rows), len(steps), -1) @ on_half).reshape(len(rows), -1) / spread.reshape(
                len(rows), -1
            ).repeat(per_shift, axis=1)
            step, template = np.divmod(found.argmax(axis=1), per_shift)
            pick = np.arange(len(rows)) * len(steps) + step
            best[rows], best_spread[rows] = near[pick], spread[pick]
            best_pose[rows] = template // (per_shift // self.templates.shape[0])
        slots = np.empty((n, self.by_pose.shape[2]), np.float32)
        for pose in np.unique(best_pose):  # 2. every template at each crop's alignment
            rows = best_pose == pose
            slots[rows] = (best[rows][:, None] @ self.by_pose[pose])[:, 0] / best_spread[rows][:, None]
        for column in self.aligners:
            out[:, column] = slots[:, self.columns == column].max(axis=1)
        return out


def opaque_of(opaque: np.ndarray) -> np.ndarray:
    """The opacity map at half its resolution, a pixel as opaque as the least opaque of its four."""
    h, w = opaque.shape
    return opaque.reshape(h // 2, 2, w // 2, 2).min(axis=(1, 3))


def combine(probs: np.ndarray, scores: np.ndarray, weight: float, temperature: float) -> np.ndarray:
    """The reader's (n, READER_CLASSES) probabilities with the matcher's scores: the faces' log-probabilities plus
    `weight` times their scores, softened by `temperature`, share what the reader leaves to faces (1 - p(none))."""
    out = probs.copy()
    if weight == 0 and temperature == 1:
        return out
    logits = (np.log(np.clip(probs[:, FACES], 1e-6, 1.0)) + weight * scores[:, FACES]) / temperature
    logits -= logits.max(axis=1, keepdims=True)
    faces = np.exp(logits)
    faces /= faces.sum(axis=1, keepdims=True)
    out[:, FACES] = faces * (1.0 - probs[:, ~FACES])
    return out
