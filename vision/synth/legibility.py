"""How legible a printed index is in a rendered frame: the labeller's measure of what a reader could read.

Occlusion alone (the id map's visible share) does not say whether an index can be read: defocus, motion blur, a
lamp's glare washing the card out, and an index only a few pixels tall leave an index fully in view and unreadable
to anyone. Session 15 (issue 18) found about a third of the visible indices in the scene renderer's frames were such
mush, taught to the reader as if readable and counted in the bench's recall.

The measure compares what the camera made of the index region with the clean card picture, both resampled to the
reader's own scale (READ_PX_PER_WIDTH pixels per card width), through a band-pass (a difference of Gaussians at
the scale of an index's strokes), by normalised cross-correlation over the pixels where the card shows: 1 is the
clean print, 0 nothing of it. Blur, glare, noise, low resolution and the JPEG all lower it; a uniform change of
light does not. It needs the renderer's truth (the card's picture and where it lies), so it belongs to the
labeller, never to the runtime.

LEGIBLE was chosen by looking at validation crops sorted by the measure (session 15): below about 0.6 an index is
a smear no reader can name; above it, the glyph is there. On 200 validation frames (1,647 visible indices, decks
that print an index there) session 13's reader read 22% of the indices below 0.5, 38% at 0.5-0.6, 62% at 0.6-0.7,
76% at 0.7-0.8 and 92% above; 17% of the visible indices were below 0.6.

The measure is taken over the index's visible pixels only, so it says nothing of an index half covered by the next
card of a cascade: its rank may show and its suit not. Session 26 (issue 18) found those were 16% of the bench's
"legible" face-up cards. On 200 validation scenes (907 legible face-up cards, by the most visible of a card's legible
indices) the shipped recogniser named 21-26% of the cards whose index showed less than 85% of its box, 61-67% at
85-98% and 81% of the wholly visible ones, whatever their legibility. INDEX_WHOLE is that break: an index less
visible than this is not legible, whatever the measure says of the part that shows.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.dice.crops import FACE_PX, face_corners, face_picture
from vision.synth.pieces import STANDARD_INDEX

LEGIBLE = 0.6
INDEX_WHOLE = 0.85  # the share of an index's box that must show (the id map) for it to count as legible
# Decks whose courts print no rank in the corner, only a suit pip (looked at, card by card: session 22 found the
# reader could name none of Guyenne's 60 legible court crops, and called 55 of them "no index"): a court's corner
# there says "a court of this suit", never which, so the labellers measure its index as not legible
COURTS_WITHOUT_RANK = frozenset({"gnome-guyenne-classic"})
READ_PX_PER_WIDTH = 100.0  # the reader's crops are cut at about this many pixels per card width
BAND = (0.7, 2.5)  # difference-of-Gaussians sigmas, reader pixels: an index stroke is 2-5 px wide there

Region = tuple[float, float, float, float]  # x0, y0, x1, y1 as fractions of the picture


def corner_region(k: int, top_left: Region = STANDARD_INDEX[0]) -> Region:
    """The index box at printed corner k (TL, TR, BR, BL = 0..3): the top-left box mirrored into that corner."""
    x0, y0, x1, y1 = top_left
    xs = (x0, x1) if k in (0, 3) else (1 - x1, 1 - x0)
    ys = (y0, y1) if k in (0, 1) else (1 - y1, 1 - y0)
    return xs[0], ys[0], xs[1], ys[1]


def rank_printed(deck: str, code: str) -> bool:
    """Whether the corner index of card `code` (QH, JOKER, ...) of deck `deck` names its rank."""
    return not (deck in COURTS_WITHOUT_RANK and code[:1] in "JQK" and code != "JOKER")


def is_legible(legibility: float | None, shown: float = 1.0) -> bool:
    """Whether an index measured this legible, `shown` (0-1) of its box in view, can be read (unmeasured: not known
    to be, so no)."""
    return legibility is not None and legibility >= LEGIBLE and shown >= INDEX_WHOLE


def _band(gray: np.ndarray) -> np.ndarray:
    return cv2.GaussianBlur(gray, (0, 0), BAND[0]) - cv2.GaussianBlur(gray, (0, 0), BAND[1])


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    denominator = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denominator) if denominator > 1e-6 else 0.0


def index_legibility(
    image: np.ndarray, picture: np.ndarray, quad: np.ndarray, region: Region, shows: np.ndarray | None = None
) -> float:
    """Band-passed correlation (-1..1) between an index region as the frame shows it and as printed.

    `image`: the rendered frame (BGR); `picture`: the card's picture (BGRA or BGR, any size); `quad`: where the
    picture's corners (TL, TR, BR, BL) lie in the frame; `region`: the index's box in picture fractions; `shows`:
    an optional boolean mask over the frame of where this card is on top (the id map), so that a covered part of
    the region counts as neither legible nor not (its visible share is the labeller's other rule)."""
    h, w = picture.shape[:2]
    x0, y0, x1, y1 = region
    out_w = max(4, round((x1 - x0) * READ_PX_PER_WIDTH))
    out_h = max(4, round((y1 - y0) * READ_PX_PER_WIDTH * h / w))
    to_frame = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [w, 0], [w, h], [0, h]]), np.asarray(quad, np.float32).reshape(4, 2)
    )
    from_out = np.array([[(x1 - x0) * w / out_w, 0, x0 * w], [0, (y1 - y0) * h / out_h, y0 * h], [0, 0, 1]])
    out_to_frame = to_frame @ from_out
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    seen = cv2.warpPerspective(image, out_to_frame, (out_w, out_h), flags=flags, borderMode=cv2.BORDER_REPLICATE)
    part = picture[int(y0 * h) : max(round(y1 * h), int(y0 * h) + 1), int(x0 * w) : max(round(x1 * w), int(x0 * w) + 1)]
    clean = cv2.resize(part, (out_w, out_h), interpolation=cv2.INTER_AREA)
    keep = clean[..., 3] > 128 if clean.shape[2] == 4 else np.ones((out_h, out_w), bool)
    if shows is not None:
        on_top = cv2.warpPerspective(
            shows.astype(np.uint8), out_to_frame, (out_w, out_h), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP
        )
        keep &= on_top > 0
    if keep.sum() < 16:
        return 0.0
    seen_band = _band(cv2.cvtColor(seen, cv2.COLOR_BGR2GRAY).astype(np.float32))
    clean_band = _band(cv2.cvtColor(clean[..., :3], cv2.COLOR_BGR2GRAY).astype(np.float32))
    return _correlation(seen_band[keep], clean_band[keep])


FACE_INNER = 0.85  # a die face's legibility is measured this far out from its centre (its edges are the die's, not
# the numeral's)


def face_legibility(
    image: np.ndarray,
    clean: np.ndarray,
    offset: tuple[int, int],
    corners: np.ndarray,
    shows: np.ndarray | None = None,
) -> float:
    """Band-passed correlation (-1..1) between a die's top face as the frame shows it and as the renderer drew it
    before the camera's effects, both warped onto the face reader's canonical face (`vision.dice.crops`).

    `clean`: the die's own picture (BGR, any dtype) whose top-left pixel lies at `offset` in the frame; `corners`:
    the top face's corners in the frame; `shows`: an optional mask over `clean` of where the die is on top, so that
    a covered part counts as neither legible nor not."""
    corners = np.asarray(corners, np.float32).reshape(-1, 2)
    local = corners - np.asarray(offset, np.float32)
    seen = face_picture(image, corners).astype(np.float32)
    drawn = face_picture(np.ascontiguousarray(clean, np.float32), local)
    canonical = face_corners(len(corners))
    inner = canonical.mean(axis=0) + FACE_INNER * (canonical - canonical.mean(axis=0))
    keep = np.zeros((FACE_PX, FACE_PX), np.uint8)
    cv2.fillPoly(keep, [np.round(inner * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
    keep = keep > 0
    if shows is not None:
        keep &= face_picture(shows.astype(np.float32), local) > 0.5
    if keep.sum() < 16:
        return 0.0
    seen_band = _band(cv2.cvtColor(seen, cv2.COLOR_BGR2GRAY))
    drawn_band = _band(cv2.cvtColor(drawn, cv2.COLOR_BGR2GRAY))
    return _correlation(seen_band[keep], drawn_band[keep])
