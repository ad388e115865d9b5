"""The corner finder's measured errors, replayed onto true corners for the reader's training crops: a row means the
same error on any corner of either hand, and gross errors stay out of the table."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.recognise.bench_stages import GROSS_TURN_DEG
from vision.recognise.corners import READ_H, READ_W, Corner, corner_crops, handedness, printed_corner
from vision.train.finder_errors import apply_error, corner_errors


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
    turned = Corner("up", 1.0, p, _turn(a, GROSS_TURN_DEG + 5), b)
    assert corner_errors([turned], quad[None], visible) == []
    far = Corner("up", 1.0, p + 0.2 * np.linalg.norm(a), a, b)
    assert corner_errors([far], quad[None], visible) == []


def test_an_exported_finder_is_put_back_into_the_net_exactly(tmp_path) -> None:
    """The shipped finder's graph (batch norms folded by the exporter) becomes a trainable net again: the net with
    the graph's weights computes what the graph does, and its batch norms stay frozen while it is fine-tuned."""
    torch = pytest.importorskip("torch")  # the training environment's test (scripts/setup-train.sh)
    import onnxruntime as ort
    from torch import nn

    from vision.train.budget import export_onnx
    from vision.train.corner_net import CornerNet, freeze_batch_norms, from_onnx

    torch.manual_seed(0)
    trained = CornerNet()
    with torch.no_grad():  # batch norms that are not the identity, as after training
        for m in trained.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    graph = tmp_path / "finder.onnx"
    export_onnx(trained.eval(), torch.zeros(1, 3, 64, 96), graph, ["images"], ["corners"], {})
    net = from_onnx(CornerNet(), graph)
    x = torch.rand(1, 3, 64, 96)
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"images": x.numpy()})[0]
    with torch.no_grad():
        assert np.abs(net.eval()(x).numpy() - expected).max() < 1e-3
    net.train()
    freeze_batch_norms(net)
    assert all(not m.training for m in net.modules() if isinstance(m, nn.BatchNorm2d))


def test_a_large_corner_mostly_off_the_frame_is_cut_without_error():
    """A phone close-up's corner whose reading region lies almost wholly outside the frame leaves a sliver too thin
    to shrink by area (OpenCV refuses an empty size); it is read as it is, the frame's edge repeated."""
    frame = np.full((720, 1280, 3), 90, np.uint8)
    # the region spans x = 1276 ... 1876 (CROP_BOX: -0.05 to 0.35 card widths), 15 frame pixels per crop pixel
    point, a, b = np.array([[1351.0, 300.0]]), np.array([[1500.0, 0.0]]), np.array([[0.0, 2100.0]])
    crops = corner_crops(frame, point, a, b)
    assert crops.shape == (1, READ_H, READ_W, 3)
    assert (crops == 90).all()
