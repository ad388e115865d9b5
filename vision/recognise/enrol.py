"""Enrolling a deck the reader reads poorly: its last layer refitted on crops of that deck, on the CPU, in minutes.

The deck comes as a deck directory (one picture per card, e.g. photographs of the player's own cards, see
`vision.synth.deckdir`). The synthetic engine lays it out in scenes under varied cameras and light, the reader
turns each corner-index crop into its feature vector, and a new last layer is fitted by softmax regression that
starts from the trained layer and is pulled back towards it (so the other decks are not forgotten). Only the
small head is saved; the ONNX graphs stay as shipped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEAD_SUFFIX = ".npz"


class EnrolError(ValueError):
    """A deck head file is missing or does not fit the reader."""


@dataclass(frozen=True)
class DeckHead:
    name: str
    classes: tuple[str, ...]  # column order of weight and bias
    weight: np.ndarray  # (classes, features)
    bias: np.ndarray  # (classes,)

    def logits(self, features: np.ndarray) -> np.ndarray:
        return features @ self.weight.T + self.bias

    def probs(self, features: np.ndarray, order: Sequence[str]) -> np.ndarray:
        """Softmax probabilities with columns in `order` (the reader's class order)."""
        z = self.logits(features)
        z = np.exp(z - z.max(axis=1, keepdims=True))
        p = z / z.sum(axis=1, keepdims=True)
        return p[:, [self.classes.index(c) for c in order]]

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = json.dumps({"name": self.name, "classes": list(self.classes)})
        np.savez_compressed(path, weight=self.weight, bias=self.bias, meta=np.array(meta))
        return path


def load_head(path: str | Path) -> DeckHead:
    path = Path(path)
    if not path.is_file():
        raise EnrolError(f"{path}: no such deck head (enrol the deck first: tabletop enrol DECK_DIR)")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            weight, bias = data["weight"].astype(np.float32), data["bias"].astype(np.float32)
    except (OSError, ValueError, KeyError) as err:
        raise EnrolError(f"{path}: not a deck head file ({err})") from err
    classes = tuple(meta.get("classes", ()))
    if weight.ndim != 2 or weight.shape[0] != len(classes) or bias.shape != (len(classes),):
        raise EnrolError(f"{path}: weight {weight.shape} and bias {bias.shape} do not fit {len(classes)} classes")
    return DeckHead(str(meta.get("name", path.stem)), classes, weight, bias)


def fit_head(
    base: DeckHead,
    features: np.ndarray,
    labels: Sequence[str],
    steps: int = 300,
    pull: float = 1e-3,
    lr: float = 0.01,
    name: str | None = None,
) -> DeckHead:
    """Softmax regression from the base layer (Adam, full batch), with an L2 pull of strength `pull` back to it."""
    y = np.array([base.classes.index(c) for c in labels])
    x = features.astype(np.float32)
    w, b = base.weight.astype(np.float32).copy(), base.bias.astype(np.float32).copy()
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    onehot = np.eye(len(base.classes), dtype=np.float32)[y]
    for t in range(1, steps + 1):
        z = x @ w.T + b
        z = np.exp(z - z.max(axis=1, keepdims=True))
        p = z / z.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(x)
        grads = [g.T @ x + pull * (w - base.weight), g.sum(axis=0)]
        for k, (param, grad) in enumerate(zip((w, b), grads, strict=True)):
            m[k] = 0.9 * m[k] + 0.1 * grad
            v[k] = 0.999 * v[k] + 0.001 * grad * grad
            param -= lr * (m[k] / (1 - 0.9**t)) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
    return DeckHead(name or base.name, base.classes, w, b)


PULLS = (1e-2, 1e-1, 1.0)  # candidate pulls back to the base layer, weakest first
CHECK_EVERY = 5  # every fifth enrolment scene is held out: it chooses the fit and says what enrolment gained
TEMPERATURES = np.geomspace(0.5, 4.0, 25)


def tempered(head: DeckHead, temperature: float) -> DeckHead:
    return DeckHead(head.name, head.classes, head.weight / temperature, head.bias / temperature)


def calibrate(head: DeckHead, features: np.ndarray, labels: Sequence[str]) -> DeckHead:
    """The temperature that makes the head's probabilities honest on held-out crops (least log loss). A head
    fitted on a few hundred crops is surer of itself than it should be, and the recogniser's thresholds, tuned
    for the base layer, would then let its wrong readings through instead of reporting UNKNOWN."""
    y = np.array([head.classes.index(c) for c in labels])

    def log_loss(t: float) -> float:
        z = head.logits(features) / t
        z = z - z.max(axis=1, keepdims=True)
        return float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y)), y]))

    return tempered(head, float(min(TEMPERATURES, key=log_loss)))


@dataclass(frozen=True)
class HeadChoice:
    head: DeckHead
    pull: float | None  # None: no refit read the held-out crops better than the base layer, which is kept
    held_out_before: float
    held_out_after: float


def choose_head(
    base: DeckHead, features: np.ndarray, labels: Sequence[str], held_out: np.ndarray, name: str
) -> HeadChoice:
    """Fits a head per pull on the crops not held out and keeps the one that reads the held-out crops best,
    calibrated on them; or the base layer when none beats it, so enrolling never makes a deck read worse. With a
    few dozen crops per card a weak pull fits the enrolment scenes and nothing else: held-out scenes decide."""
    labels = np.asarray(labels)
    fit_x, fit_y = features[~held_out], list(labels[~held_out])
    check_x, check_y = features[held_out], labels[held_out]
    base_right = reads_right(base, check_x, check_y)
    before = float(base_right.mean()) if len(check_y) else 0.0
    best: tuple[float, float | None, DeckHead] = (before, None, base)
    for pull in PULLS:
        head = fit_head(base, fit_x, fit_y, pull=pull, name=name)
        right = reads_right(head, check_x, check_y)
        if clearly_better(right, base_right) and right.mean() > best[0]:
            best = (float(right.mean()), pull, head)
    score, pull, head = best
    if pull is not None:
        head = calibrate(head, check_x, list(check_y))
    return HeadChoice(head, pull, before, score)


def reads_right(head: DeckHead, features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.array(head.classes)[head.logits(features).argmax(1)] == labels


def clearly_better(right: np.ndarray, base_right: np.ndarray) -> bool:
    """McNemar's sign test at about 2 sigma on the crops the two heads disagree on: a refit must win by more
    than chance, because a lucky draw of held-out crops would otherwise ship a head that is merely different."""
    wins = int(np.sum(right & ~base_right))
    losses = int(np.sum(~right & base_right))
    return wins - losses > 2 * np.sqrt(wins + losses)


@dataclass(frozen=True)
class EnrolResult:
    choice: HeadChoice
    crops: int
    scenes: int
    seconds: float

    @property
    def head(self) -> DeckHead:
        return self.choice.head


def enrol(
    deck_dir: str | Path,
    reader: object,
    base: DeckHead,
    scenes: int = 200,
    seed: int = 1000,
    progress: Callable[[int, int], None] | None = None,
) -> EnrolResult:
    """Renders `scenes` scenes of the deck, reads every index crop's features, fits and chooses the head."""
    from vision.recognise.reader import Reader
    from vision.recognise.samples import index_samples
    from vision.synth.backgrounds import load_table_textures
    from vision.synth.components import load_component
    from vision.synth.export import scene_for

    if not isinstance(reader, Reader):
        raise TypeError("enrol needs a vision.recognise.reader.Reader")
    if scenes < CHECK_EVERY:
        raise EnrolError(f"enrolment needs at least {CHECK_EVERY} scenes (one is held out to check the fit)")
    start = time.perf_counter()
    deck = load_component(deck_dir)
    backgrounds = load_table_textures()
    feats, labels, held_out = [], [], []
    for i in range(scenes):
        scene = scene_for(i, seed, [deck], backgrounds, (1280, 720))
        rng = np.random.default_rng([seed, i, 1])
        samples = index_samples(rng, scene.to_dict())
        if samples:
            reading = reader.read(scene.image, [quad for _, quad in samples])
            if reading.features is None:
                raise EnrolError(f"{reader.path}: this reader exports no features; re-export it to enrol decks")
            feats.append(reading.features)
            labels += [label for label, _ in samples]
            held_out += [i % CHECK_EVERY == CHECK_EVERY - 1] * len(samples)
        if progress:
            progress(i + 1, scenes)
    if not labels:
        raise EnrolError(f"{deck_dir}: no readable index in {scenes} rendered scenes of this deck")
    choice = choose_head(base, np.concatenate(feats), labels, np.array(held_out), Path(deck_dir).name)
    return EnrolResult(choice, len(labels), scenes, time.perf_counter() - start)
