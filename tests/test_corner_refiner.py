"""The corner refiner's geometry (issue 18, session 17): the patch it reads, the terms it is taught in, and the way
its answer becomes a corner frame again. The net itself is measured by the stage bench, not here."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.recognise.corner_refiner import (
    PATCH,
    PATCH_SPAN,
    PatchCutter,
    frame_targets,
    frame_terms,
    ordered_edges,
    patch_axes,
    refined_frame,
)
from vision.recognise.corners import handedness
from vision.train.refiner_data import turned_batch


def random_frame(rng: np.random.Generator, right: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    angle = rng.uniform(-np.pi, np.pi)
    width = rng.uniform(40, 200)
    a = np.array([np.cos(angle), np.sin(angle)]) * width
    b = np.array([-np.sin(angle), np.cos(angle)]) * width * 1.4 * (1 if right else -1)
    return rng.uniform(100, 500, 2), a, b


@pytest.mark.parametrize("right", [True, False])
def test_the_patch_turns_the_corners_inside_down_and_right_without_mirroring(right: bool) -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        _, a, b = random_frame(rng, right)
        x, y = patch_axes(a, b)
        assert np.isclose(x[0] * y[1] - x[1] * y[0], 1.0)  # a rotation, never a mirror
        inside = a / np.linalg.norm(a) + b / np.linalg.norm(b)
        local = np.array([inside @ x, inside @ y])
        assert np.allclose(local / np.linalg.norm(local), [2**-0.5, 2**-0.5], atol=1e-6)


@pytest.mark.parametrize("right", [True, False])
def test_a_frame_in_the_patchs_terms_comes_back_exactly(right: bool) -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        found = random_frame(rng, right)
        turn = rng.normal(0, 0.3)
        rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
        true = (found[0] + rng.normal(0, 3, 2), rot @ found[1] * 1.1, rot @ found[2] * 0.9)
        terms = frame_targets(found, true)
        back = refined_frame(*found, terms)
        for got, want in zip(back, true, strict=True):
            assert np.allclose(got, want, atol=1e-3)


def test_edges_are_taught_clockwise_and_the_short_one_apart() -> None:
    rng = np.random.default_rng(3)
    frames = [random_frame(rng, bool(k % 2)) for k in range(40)]
    terms = np.stack([frame_targets(f, f) for f in frames])
    target, right = ordered_edges(terms)
    assert np.array_equal(right.astype(bool), [handedness(f[1], f[2]) > 0 for f in frames])
    e_x, e_y = target[:, 0:2], target[:, 2:4]
    assert (e_x[:, 0] * e_y[:, 1] - e_x[:, 1] * e_y[:, 0] > 0).all()  # e_y is e_x turned clockwise on screen
    sure = np.concatenate([target, np.where(right > 0, 9.0, -9.0)[:, None]], axis=1)
    assert np.allclose(frame_terms(sure, ~right.astype(bool)), terms)  # a sure net is taken over the finder
    unsure = sure.copy()
    unsure[:, 8] = 0.0
    assert np.allclose(frame_terms(unsure, right.astype(bool)), terms)  # an unsure one leaves it to the finder
    swapped = frame_terms(unsure, ~right.astype(bool))
    assert np.allclose(swapped[:, 0:2], terms[:, 2:4]) and np.allclose(swapped[:, 2:4], terms[:, 0:2])


def test_the_patch_shows_the_card_in_its_lower_right_quarter() -> None:
    image = np.full((400, 400, 3), 40, np.uint8)
    angle = np.deg2rad(25)
    a = np.array([np.cos(angle), np.sin(angle)]) * 100
    b = np.array([-np.sin(angle), np.cos(angle)]) * 140
    p = np.array([150.0, 100.0])
    cv2.fillConvexPoly(image, np.round([p, p + a, p + a + b, p + b]).astype(np.int32), (230, 230, 230))
    patch = PatchCutter(image).cut(p, a, b).astype(float)
    half = PATCH // 2
    inside = patch[half + 3 :, half + 3 :].mean()
    outside = [
        patch[: half - 3, : half - 3].mean(),
        patch[: half - 3, half + 3 :].mean(),
        patch[half + 3 :, : half - 3].mean(),
    ]
    assert patch.shape == (PATCH, PATCH) and inside > 200 and max(outside) < 120
    assert PATCH_SPAN * 100 / PATCH < 3  # a card 100 px wide is read at 40 px a card width


def test_a_quarter_turn_of_the_patch_turns_its_targets_alike() -> None:
    image = np.zeros((400, 400, 3), np.uint8)
    p, a, b = np.array([200.0, 200.0]), np.array([60.0, 10.0]), np.array([-14.0, 84.0])
    dot = p + np.array([8.0, -5.0])
    cv2.circle(image, (round(float(dot[0])), round(float(dot[1]))), 2, (255, 255, 255), -1)
    patch = PatchCutter(image).cut(p, a, b)
    terms = frame_targets((p, a, b), (dot, a, b))
    rng = np.random.default_rng(0)
    for _ in range(40):  # a tenth of each batch is turned: try until every turn has shown
        turned, targets = turned_batch(patch[None], terms[None], rng)
        seen = np.argwhere(turned[0] > turned[0].max() * 0.6).mean(axis=0)
        offset = (np.array([seen[1], seen[0]]) - (PATCH - 1) / 2) * PATCH_SPAN / PATCH  # card widths
        assert np.allclose(offset, targets[0, 6:8], atol=0.03)
