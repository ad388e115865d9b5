"""A corner's frame made exact where the frame can say so (its edges straightened against the image's gradients),
and the finder's measured errors replayed onto true corners for the reader's training crops."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.recognise.corners import Corner, handedness, printed_corner
from vision.recognise.edges import straighten
from vision.train.finder_errors import GROSS_DEG, apply_error, corner_errors


def _card_frame(angle_deg: float, width: float = 120.0) -> tuple[np.ndarray, np.ndarray]:
    """A light card (TL, TR, BR, BL) turned by angle_deg on a dark, slightly textured table."""
    rng = np.random.default_rng(0)
    frame = rng.integers(30, 60, (480, 640, 3)).astype(np.uint8)
    t = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    h = width * 88 / 63
    quad = (np.array([[0, 0], [width, 0], [width, h], [0, h]]) - [width / 2, h / 2]) @ rot.T + [320, 240]
    cv2.fillConvexPoly(frame, np.round(quad * 16).astype(np.int32), (235, 235, 235), cv2.LINE_AA, shift=4)
    return frame, quad.astype(np.float32)


def _turn(v: np.ndarray, deg: float) -> np.ndarray:
    t = np.deg2rad(deg)
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) @ v


def _angle(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip(u @ v / np.linalg.norm(u) / np.linalg.norm(v), -1, 1))))


@pytest.mark.parametrize("card_angle", [0.0, 23.0, 141.0])
def test_edges_off_by_up_to_twenty_degrees_are_straightened_onto_the_card_lengths_kept(card_angle):
    frame, quad = _card_frame(card_angle)
    guesses = []
    for k, (da, db) in enumerate([(12.0, -9.0), (-18.0, 5.0), (0.0, 0.0), (7.0, 19.0)]):
        p, a, b = printed_corner(quad, k)
        guesses.append(Corner("up", 0.9, p, _turn(a, da) * 0.9, _turn(b, db) * 1.1))
    fixed = straighten(frame, guesses)
    for k, (guess, c) in enumerate(zip(guesses, fixed, strict=True)):
        _p, a, b = printed_corner(quad, k)
        assert _angle(c.a, a) < 1.5 and _angle(c.b, b) < 1.5, (k, _angle(c.a, a), _angle(c.b, b))
        assert np.isclose(np.linalg.norm(c.a), np.linalg.norm(guess.a), rtol=1e-4)
        assert np.array_equal(c.point, guess.point) and c.score == guess.score
    assert straighten(frame, []) == []


def test_a_blank_frame_leaves_the_finders_edges_roughly_where_they_were():
    """Nothing to straighten against: no edge is turned further than the search allows."""
    frame = np.full((200, 200, 3), 128, np.uint8)
    c = Corner("up", 0.5, np.array([50.0, 50.0], np.float32), np.array([60.0, 0.0]), np.array([0.0, 84.0]))
    (out,) = straighten(frame, [c])
    assert _angle(out.a, c.a) <= 24.0 + 1e-6 and _angle(out.b, c.b) <= 24.0 + 1e-6


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_a_finder_error_replayed_onto_a_true_corner_is_measured_back_as_the_same_error(k):
    """Rows are in the corner's own terms, so one corner's error means the same on any corner of either hand."""
    _frame, quad = _card_frame(37.0, width=90.0)
    rng = np.random.default_rng(k)
    for _ in range(20):
        row = np.array(
            [*rng.normal(0, 0.02, 2), *np.deg2rad(rng.uniform(-20, 20, 2)), *rng.uniform(0.6, 1.3, 2)], np.float32
        )
        p, a, b = apply_error(row, *printed_corner(quad, k))
        visible = np.zeros((1, 4), np.float32)
        visible[0, k] = 1.0
        (measured,) = corner_errors([Corner("up", 1.0, p, a, b)], quad[None], visible)
        assert np.allclose(measured, row, atol=1e-4)


def test_gross_finder_errors_are_left_out_of_the_table():
    _frame, quad = _card_frame(0.0)
    p, a, b = printed_corner(quad, 0)
    visible = np.array([[1.0, 0, 0, 0]], np.float32)
    swapped = Corner("up", 1.0, p, b / np.linalg.norm(b) * np.linalg.norm(a), a / np.linalg.norm(a) * np.linalg.norm(b))
    assert handedness(swapped.a, swapped.b) != handedness(a, b)
    assert corner_errors([swapped], quad[None], visible) == []
    turned = Corner("up", 1.0, p, _turn(a, GROSS_DEG + 5), b)
    assert corner_errors([turned], quad[None], visible) == []
    far = Corner("up", 1.0, p + 0.2 * np.linalg.norm(a), a, b)
    assert corner_errors([far], quad[None], visible) == []
