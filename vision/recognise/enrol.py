"""Enrolling a deck the reader reads poorly: its last layer refitted on crops of that deck, on the CPU, in minutes.

The deck comes as a deck directory (one picture per card, e.g. photographs of the player's own cards, see
`vision.synth.deckdir`). The synthetic engine lays it out in scenes under varied cameras and light, the reader
turns each corner-index crop into its feature vector, and a new last layer is fitted by softmax regression that
starts from the trained layer and is pulled back towards it (so the other decks are not forgotten). Only the
small head is saved; the ONNX graphs stay as shipped.

This module holds the previous reader's enrolment and what both readers' enrolments share (the head file, the
held-out scenes, the temperatures, the rendered scenes); `enrol_rectified` holds the rectified reader's, which
matches the deck's own pictures instead of refitting a layer.
"""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

HEAD_SUFFIX = ".npz"
PREVIOUS_KIND = "previous"  # a head file's "kind": which recogniser's reader it refits (files from before say none)
RECTIFIED_KIND = "rectified"


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
        meta = json.dumps({"kind": PREVIOUS_KIND, "name": self.name, "classes": list(self.classes)})
        np.savez_compressed(path, weight=self.weight, bias=self.bias, meta=np.array(meta))
        return path

    def checked(self, where: str) -> DeckHead:
        """Itself, or an EnrolError naming `where` when its arrays do not fit its classes (a corrupt file)."""
        n = len(self.classes)
        if self.weight.ndim != 2 or self.weight.shape[0] != n or self.bias.shape != (n,):
            raise EnrolError(f"{where}: weight {self.weight.shape} and bias {self.bias.shape} do not fit {n} classes")
        return self


def read_head_file(
    path: str | Path, arrays: Sequence[str], meta: bool = True, what: str = "deck head"
) -> tuple[dict[str, Any], dict]:
    """A head file's JSON meta (empty where `meta` is False: the shipped heads have none) and the named float32
    arrays, or an EnrolError that names the file and what it should have held: a deck head is a file a player
    carries around, so a wrong or damaged one must say so rather than fail deep inside the reader."""
    path = Path(path)
    if not path.is_file():
        raise EnrolError(f"{path}: no such {what} (enrol the deck first: tabletop enrol DECK_DIR)")
    wanted = ["meta", *arrays] if meta else list(arrays)
    expected = f"expected an .npz holding {', '.join(wanted)}"
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError("a single array, not an .npz archive")
        with data:
            found = set(data.files)
            info = json.loads(str(data["meta"])) if meta and "meta" in found else {}
            loaded = {k: data[k].astype(np.float32) for k in arrays if k in found}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise EnrolError(f"{path}: not a {what} file ({err}; {expected})") from err
    missing = [k for k in wanted if k not in found]
    if missing:
        raise EnrolError(f"{path}: not a {what} file (it lacks {', '.join(missing)}; {expected})")
    if not isinstance(info, dict):
        raise EnrolError(f"{path}: not a {what} file (its meta is not a JSON object; {expected})")
    return info, loaded


def head_kind(path: str | Path) -> str:
    """Which recogniser a deck head file was enrolled for: its meta's "kind" (files from before say none)."""
    info, _ = read_head_file(path, ())
    return str(info.get("kind", PREVIOUS_KIND))


def read_deck_head(path: Path, kind: str, arrays: Sequence[str]) -> tuple[dict[str, Any], dict]:
    """`read_head_file` for a deck head enrolled for the `kind` recogniser; one enrolled for the other is refused
    with the option that reads it, since its arrays would not fit this reader at all."""
    found = head_kind(path)
    if found != kind:
        raise EnrolError(
            f"{path}: a deck head for the {found} recogniser, not the {kind} one: use --recogniser {found} "
            f"(or enrol the deck again with --recogniser {kind})"
        )
    return read_head_file(path, arrays)


def load_head(path: str | Path) -> DeckHead:
    """The previous reader's deck head; a rectified one is refused with the option that reads it."""
    path = Path(path)
    info, arrays = read_deck_head(path, PREVIOUS_KIND, ("weight", "bias"))
    classes = tuple(info.get("classes", ()))
    head = DeckHead(str(info.get("name", path.stem)), classes, arrays["weight"], arrays["bias"])
    return head.checked(str(path))


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
    than chance, because a lucky draw of held-out crops would otherwise ship a head that is merely different.
    Outcomes may be graded rather than right or wrong (a higher number is better)."""
    wins = int(np.sum(right > base_right))
    losses = int(np.sum(right < base_right))
    return wins - losses > 2 * np.sqrt(wins + losses)


@dataclass(frozen=True)
class EnrolResult:
    choice: HeadChoice
    crops: int
    scenes: int
    seconds: float
    held_out_what: ClassVar[str] = "index crops"  # what `held_out_before` and `held_out_after` count
    tried: ClassVar[str] = "no refit"  # for "... read held-out scenes no better than the shipped reader"

    @property
    def head(self) -> DeckHead:
        return self.choice.head

    @property
    def held_out_before(self) -> float:
        return self.choice.held_out_before

    @property
    def held_out_after(self) -> float:
        return self.choice.held_out_after

    @property
    def adopted(self) -> bool:
        """Whether the deck head reads differently from the shipped reader (a refit was chosen)."""
        return self.choice.pull is not None

    @property
    def chosen(self) -> dict[str, float | None]:
        """What enrolment chose (None: the shipped layer kept), for the bench's report."""
        return {"pull": self.choice.pull}


def check_scene_count(scenes: int) -> None:
    """Refuses fewer scenes than one held-out scene needs, before any deck is loaded or scene rendered."""
    if scenes < CHECK_EVERY:
        raise EnrolError(f"enrolment needs at least {CHECK_EVERY} scenes (one is held out to check the fit)")


def held_out_scene(i: int) -> bool:
    """Whether enrolment scene i is held out (every CHECK_EVERY-th): it chooses the fit and reports the gain."""
    return i % CHECK_EVERY == CHECK_EVERY - 1


def enrolment_scenes(
    deck: object, scenes: int, seed: int, progress: Callable[[int, int], None] | None = None
) -> Iterator[tuple[int, Any]]:
    """(i, rendered scene) for `scenes` scenes of one loaded deck (`vision.synth.components.load_component`), as
    every enrolment sees them: 1280 x 720, the engine's cameras, light, hands and clutter. The synthetic engine is
    imported here, not with the module: reading cards never needs it."""
    from vision.synth.backgrounds import load_table_textures
    from vision.synth.export import scene_for

    backgrounds = load_table_textures()
    for i in range(scenes):
        yield i, scene_for(i, seed, [deck], backgrounds, (1280, 720))
        if progress:
            progress(i + 1, scenes)


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
    from vision.synth.components import load_component

    if not isinstance(reader, Reader):
        raise TypeError("enrol needs a vision.recognise.reader.Reader")
    check_scene_count(scenes)
    start = time.perf_counter()
    deck = load_component(deck_dir)
    feats, labels, held_out = [], [], []
    for i, scene in enrolment_scenes(deck, scenes, seed, progress):
        rng = np.random.default_rng([seed, i, 1])
        samples = index_samples(rng, scene.to_dict())
        if samples:
            reading = reader.read(scene.image, [quad for _, quad in samples])
            if reading.features is None:
                raise EnrolError(f"{reader.path}: this reader exports no features; re-export it to enrol decks")
            feats.append(reading.features)
            labels += [label for label, _ in samples]
            held_out += [held_out_scene(i)] * len(samples)
    if not labels:
        raise EnrolError(f"{deck_dir}: no readable index in {scenes} rendered scenes of this deck")
    choice = choose_head(base, np.concatenate(feats), labels, np.array(held_out), Path(deck_dir).name)
    return EnrolResult(choice, len(labels), scenes, time.perf_counter() - start)
