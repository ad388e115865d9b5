"""The labeller's legibility of a printed index: high for a clean print at any light, low once the camera smears
it, and the bench's recall over legible cards counts only those."""

from __future__ import annotations

import cv2
import numpy as np

from vision.synth.legibility import INDEX_WHOLE, LEGIBLE, corner_region, index_legibility, is_legible


def card_picture() -> np.ndarray:
    """A 250 x 350 BGRA card with a bold index at the top left (and its twin at the bottom right)."""
    card = np.full((350, 250, 4), 255, np.uint8)
    cv2.putText(card, "K", (8, 48), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (0, 0, 0, 255), 4)
    cv2.circle(card, (26, 70), 10, (0, 0, 200, 255), -1)
    card[:] = np.where(card[..., 3:4] == 0, 255, card)
    card[..., 3] = 255
    card[-80:, -50:] = card[:80, :50][::-1, ::-1]
    return card


def on_table(card: np.ndarray, width: int, angle: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    """The card laid on a grey table at `width` px, turned by `angle` degrees: the frame and the card's quad."""
    h, w = card.shape[:2]
    height = width * h / w
    t = np.radians(angle)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    quad = (np.array([[0, 0], [width, 0], [width, height], [0, height]]) - [width / 2, height / 2]) @ rot.T
    quad = (quad + np.array([320, 240])).astype(np.float32)
    m = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), quad)
    frame = np.full((480, 640, 3), 90, np.uint8)
    warped = cv2.warpPerspective(card, m, (640, 480), flags=cv2.INTER_AREA, borderValue=(0, 0, 0, 0))
    alpha = warped[..., 3:4] / 255.0
    return (frame * (1 - alpha) + warped[..., :3] * alpha).astype(np.uint8), quad


def test_a_clean_index_is_legible_at_either_printed_corner_and_in_any_light() -> None:
    card = card_picture()
    frame, quad = on_table(card, 160)
    for k in (0, 2):
        assert index_legibility(frame, card, quad, corner_region(k)) > 0.85
    dim = (frame.astype(np.float32) * 0.55 + 20).astype(np.uint8)  # a uniform change of light is no loss
    assert index_legibility(dim, card, quad, corner_region(0)) > 0.85


def test_blur_glare_and_a_tiny_card_make_an_index_illegible() -> None:
    card = card_picture()
    frame, quad = on_table(card, 160)
    smeared = cv2.GaussianBlur(frame, (0, 0), 5)
    noise = np.random.default_rng(0).normal(0, 4, frame.shape)
    washed = np.clip(frame.astype(np.float32) * 0.01 + 250 + noise, 0, 255).astype(np.uint8)  # glare, sensor noise
    tiny_frame, tiny_quad = on_table(card, 30)
    assert index_legibility(smeared, card, quad, corner_region(0)) < LEGIBLE
    assert index_legibility(washed, card, quad, corner_region(0)) < LEGIBLE
    assert index_legibility(tiny_frame, card, tiny_quad, corner_region(0)) < LEGIBLE
    # legibility falls as the blur grows
    values = [index_legibility(cv2.GaussianBlur(frame, (0, 0), s), card, quad, corner_region(0)) for s in (1, 2, 4)]
    assert values[0] > values[1] > values[2]


def test_the_covered_part_of_a_region_is_left_out_when_the_id_map_is_given() -> None:
    card = card_picture()
    frame, quad = on_table(card, 160, angle=0.0)
    x0, y0 = quad[0].astype(int)
    covered = frame.copy()
    covered[y0 + 30 : y0 + 60, x0 : x0 + 40] = (30, 140, 30)  # something lies over the lower half of the index
    shows = np.ones(frame.shape[:2], bool)
    shows[y0 + 30 : y0 + 60, x0 : x0 + 40] = False
    assert index_legibility(covered, card, quad, corner_region(0)) < index_legibility(
        covered, card, quad, corner_region(0), shows
    )


def test_regions_mirror_the_top_left_box_into_each_corner() -> None:
    assert corner_region(0) == (0.0, 0.0, 0.18, 0.25)
    assert np.allclose(corner_region(2), (0.82, 0.75, 1.0, 1.0))
    assert np.allclose(corner_region(1), (0.82, 0.0, 1.0, 0.25))
    assert np.allclose(corner_region(3), (0.0, 0.75, 0.18, 1.0))


def test_only_the_courts_of_a_deck_that_prints_no_rank_there_have_an_unnamed_rank() -> None:
    from vision.synth.legibility import COURTS_WITHOUT_RANK, rank_printed

    (guyenne,) = COURTS_WITHOUT_RANK
    assert [rank_printed(guyenne, c) for c in ("JS", "QH", "KD", "JOKER", "7D", "AS")] == [0, 0, 0, 1, 1, 1]
    assert all(rank_printed("gnome-paris", c) for c in ("JS", "QH", "KD"))


def test_an_index_is_legible_only_when_its_box_shows_almost_whole() -> None:
    """The measure covers the visible pixels only; a cascade's next card over the suit leaves the rank sharp and the
    card unnamed, so the share in view is a rule of its own (INDEX_WHOLE, session 26)."""
    assert is_legible(0.9) and is_legible(0.9, 1.0) and is_legible(0.9, INDEX_WHOLE)
    assert not is_legible(0.9, 0.7)
    assert not is_legible(0.5, 1.0) and not is_legible(None, 1.0)
