"""`tabletop bench vision --game loot-roll`, its dice part: dice found and read on held-out dice.

Still scenes come from `vision.synth.dice_scenes` (2-12 d20s and d6s on a Loot Roll table among its cards, hands
now and then, the renderer's light, blur and noise; a tenth of the dice cocked and a tenth in the air), with dice of
the split's designs, numeral fonts, colours and materials only (`--split test`: none of them used to train or choose
anything) on the split's Loot Roll cards. Every frame goes through the whole runtime (`read.DiceReader`: finder,
face finder, face reader); beside it, in the same run and on the same frames, two baselines: the face finder and
reader on squares cut at each die's true centre and size (a perfect finder), and the face reader on each top face
warped from its true corners (a perfect finder and face finder), which say what finding and rectifying cost. Resting
dice are counted twice: all of them, and those whose top face the camera left legible (`legibility.face_legibility`,
as the card bench counts legible indices apart).

Roll clips come from `vision.synth.clips` (dice thrown from the player's side, tumbling with motion blur, then
still), written as video and read back; every frame goes through the reader and `watch.DiceWatcher`. A die is
"read while moving" when the watcher gives a value for it in a frame where it is still in motion: the issue asks
for none.
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from multiprocessing import Pool
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.dice.crops import KINDS
from vision.dice.find import FoundDie
from vision.dice.read import (
    UNREAD,
    DiceReader,
    DieReading,
    FacePlace,
    Looks,
    label_of,
    read_faces,
    table_camera,
)
from vision.dice.watch import WAY_CALIBRATED, WAY_FREE, DiceWatcher, WatchRule
from vision.recognise.calibration import TableCalibration, calibration_from
from vision.synth.camera import Camera, apply_homography
from vision.synth.dice_scenes import DIE_PX
from vision.synth.legibility import LEGIBLE

if TYPE_CHECKING:
    from vision.dice.enrol import EnrolledDice
    from vision.synth.clips import Clip
    from vision.synth.pieces import PieceSet

SEEN = 0.9  # a resting die is scored when this much of it, and of its top face, shows
HIDDEN = 0.4  # a die with less of its top face showing must not be given a value


# roll clips read without the table's calibration, and with it: each way's watcher rule in the thresholds file
CLIP_WAYS = {"runtime": WAY_FREE, "runtime_calibrated": WAY_CALIBRATED}
CLICK_PX = 2.0  # how far off a player's click on a calibration point lands (standard deviation, each axis)


@dataclass
class BenchFrame:
    jpeg: bytes
    dice: list[dict]  # DieTruth.to_json()
    camera: Camera

    def image(self) -> np.ndarray:
        return cv2.imdecode(np.frombuffer(self.jpeg, np.uint8), cv2.IMREAD_COLOR)


def render_frame(job: tuple) -> BenchFrame:
    """One bench scene (`dice_scenes.render_dice_scene`'s arguments, with or without a player's looks), as the
    camera would hand it over (JPEG), with its truth."""
    from vision.synth.dice_scenes import render_dice_scene

    rendered = render_dice_scene(*job)
    ok, jpeg = cv2.imencode(".jpg", rendered.scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok, "JPEG encoding of a frame failed"
    return BenchFrame(jpeg.tobytes(), [d.to_json() for d in rendered.dice], rendered.scene.spec.camera)


def calibration_of(camera: Camera, rng: np.random.Generator) -> TableCalibration:
    """The table calibration a player would make of this camera's view: four points spread over the frame (a
    tenth in from its corners) clicked CLICK_PX off on average, and where they lie on the table."""
    image_from_table = camera.table_to_image()
    inset = np.array([camera.width, camera.height]) * 0.1
    frame = np.array([[0, 0], [camera.width, 0], [camera.width, camera.height], [0, camera.height]], np.float64)
    frame = frame + inset * np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]])
    table = apply_homography(np.linalg.inv(image_from_table), frame)
    clicked = frame + rng.normal(0.0, CLICK_PX, frame.shape)
    return calibration_from({"image_points": clicked.tolist(), "table_mm": table.tolist()}, Path("bench clicks"))


def read_calibrated(
    reader: DiceReader, frame: BenchFrame, rng: np.random.Generator
) -> tuple[np.ndarray, Looks, list[dict | None]]:
    """A bench frame as the runtime sees it on a table a player calibrated (`calibration_of`): the image, the looks
    of the dice found in it, and the die each find is (`matched_truth`), for tuning and diagnostics on whole scenes."""
    image = frame.image()
    camera = table_camera(calibration_of(frame.camera, rng), image)
    found = reader.find(image, camera)
    seen = reader.look(image, found, camera)
    return image, seen, matched_truth(frame.dice, [(f.x, f.y) for f in found])


def resting_face(die: dict) -> np.ndarray:
    """A die's true top-face corners as a perfect face finder gives them: a resting die's; none for a cocked die
    (its leaning face, kept in the truth for training, shows no value) or one in the air."""
    corners = die["top_face"] if die["state"] == "rest" else []
    return np.array(corners, np.float32).reshape(-1, 2)


def matched_truth(truth: list[dict], points: list[tuple[float, float]]) -> list[dict | None]:
    """For each point said to be a die, the die it is (the nearest within half the die's size, the most visible
    dice choosing first), or None."""
    out: list[dict | None] = [None] * len(points)
    for die in sorted(truth, key=lambda d: -d["seen"]):
        x, y = die["centre_px"]
        near = [
            i for i, p in enumerate(points) if out[i] is None and math.hypot(p[0] - x, p[1] - y) < die["size_px"] / 2
        ]
        if near:
            out[min(near, key=lambda i: math.hypot(points[i][0] - x, points[i][1] - y))] = die
    return out


@dataclass
class DiceTally:
    """Outcomes per die: resting dice by kind (right, wrong value, found but unread, not found), and how often a
    die that shows no value (cocked, in the air, hidden) or a find of no die at all was given one."""

    resting: dict[str, dict[str, int]] = field(default_factory=lambda: _outcomes())
    legible: dict[str, dict[str, int]] = field(default_factory=lambda: _outcomes())  # those whose top face the
    # camera left legible (`legibility.face_legibility` >= LEGIBLE): blur, glare and a few pixels leave the rest
    # unreadable to anyone
    cocked: dict[str, int] = field(default_factory=lambda: {"dice": 0, "given_value": 0})
    air: dict[str, int] = field(default_factory=lambda: {"dice": 0, "given_value": 0})  # a still of a die in flight:
    # the watcher never reads one (it moves), the still reader should not either
    hidden: dict[str, int] = field(default_factory=lambda: {"dice": 0, "given_value": 0})
    false_finds: dict[str, int] = field(default_factory=lambda: {"finds": 0, "given_value": 0})

    def add(self, truth: list[dict], said: list[tuple[float, float, str]]) -> None:
        """One frame: `said` holds (x, y, label) per reading; each is matched to the nearest die within half its
        size."""
        matched = matched_truth(truth, [(x, y) for x, y, _ in said])
        label_of_die = {id(die): said[i][2] for i, die in enumerate(matched) if die is not None}
        for die in truth:
            label = label_of_die.get(id(die))
            given = label not in (None, UNREAD)
            if die["state"] != "rest":
                tally = self.cocked if die["state"] == "cocked" else self.air
                tally["dice"] += 1
                tally["given_value"] += given
            elif die["face_seen"] < HIDDEN:
                self.hidden["dice"] += 1
                self.hidden["given_value"] += given
            elif die["seen"] >= SEEN and die["face_seen"] >= SEEN:
                outcome = (
                    "missed"
                    if label is None
                    else "unread"
                    if label == UNREAD
                    else "right"
                    if label == f"{die['kind'].upper()}:{die['value']}"
                    else "wrong"
                )
                self.resting[die["kind"]][outcome] += 1
                if (die.get("legibility") or 0.0) >= LEGIBLE:
                    self.legible[die["kind"]][outcome] += 1
        free = [i for i, die in enumerate(matched) if die is None]
        self.false_finds["finds"] += len(free)
        self.false_finds["given_value"] += sum(said[i][2] != UNREAD for i in free)

    def to_json(self) -> dict:
        out: dict = {"resting": {}, "resting_legible": {}}
        for name, tally in (("resting", self.resting), ("resting_legible", self.legible)):
            for kind, counts in tally.items():
                total = sum(counts.values())
                out[name][kind] = {**counts, "dice": total, "accuracy": round(counts["right"] / max(total, 1), 4)}
        return {**out, "cocked": self.cocked, "air": self.air, "hidden": self.hidden, "false_finds": self.false_finds}


def _outcomes() -> dict[str, dict[str, int]]:
    return {k: dict.fromkeys(("right", "wrong", "unread", "missed"), 0) for k in ("d6", "d20")}


def run_dice_bench(
    pieces_root: Path,
    scenes: int,
    seed: int,
    models: Path,
    clips: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
    split: str = "test",
    workers: int = 2,
    enrol_players: int = 0,
    enrol_scenes: int = 40,
) -> dict:
    from vision.synth.components import split_design_names

    designs = split_design_names(pieces_root, split, "loot-roll")
    reader = DiceReader(models)
    frames: list[BenchFrame] = []
    with Pool(workers) as pool:
        for frame in pool.imap(render_frame, [(i, seed, str(pieces_root), designs, split) for i in range(scenes)]):
            frames.append(frame)
            if progress:
                progress("dice scenes", len(frames), scenes)
    names = ("runtime", "runtime_calibrated", "reader_true_placement", "reader_true_face")
    tallies = {name: DiceTally() for name in names}
    ms: dict[str, list[float]] = {"runtime": [], "runtime_calibrated": []}
    per_frame = []
    rng = np.random.default_rng([seed, 41])
    for frame in frames:
        image = frame.image()
        per_frame.append(len(frame.dice))
        for name, table in (("runtime", None), ("runtime_calibrated", calibration_of(frame.camera, rng))):
            t0 = time.perf_counter()
            readings = reader.read(image, table)
            ms[name].append(1000 * (time.perf_counter() - t0))
            tallies[name].add(frame.dice, [(r.x, r.y, r.label) for r in readings])
        if frame.dice:
            floor = reader.settings.confidence
            placed = [FoundDie(*d["centre_px"], d["size_px"], 1.0) for d in frame.dice]
            labels = [label_of(p, floor)[0] for p in reader.probabilities(image, placed)]
            tallies["reader_true_placement"].add(
                frame.dice, [(*d["centre_px"], lab) for d, lab in zip(frame.dice, labels, strict=True)]
            )
            places = [FacePlace(d["kind"], resting_face(d)) for d in frame.dice]
            kinds = np.eye(len(KINDS))[[KINDS.index(p.kind) for p in places]]
            seen = reader.calibrated(read_faces(reader.session, image, kinds, places))
            labels = [label_of(p, floor)[0] for p in seen]
            tallies["reader_true_face"].add(
                frame.dice, [(*d["centre_px"], lab) for d, lab in zip(frame.dice, labels, strict=True)]
            )
    result = {
        "data": {
            "scenes": scenes,
            "seed": seed,
            "split": split,
            "designs": len(designs),
            "dice": sum(per_frame),
            "source": "vision.synth.dice_scenes (held-out dice designs, fonts, colours and materials)",
        },
        **{name: tally.to_json() for name, tally in tallies.items()},
        "latency_ms": {
            name: {"median": round(statistics.median(v), 1), "p95": round(float(np.percentile(v, 95)), 1)}
            for name, v in ms.items()
        },
    }
    if clips:
        rules = {name: WatchRule.load(models, way == WAY_CALIBRATED) for name, way in CLIP_WAYS.items()}
        result["clips"] = run_clip_bench(pieces_root, designs, clips, seed, reader, split, progress, rules)
    if enrol_players:
        result["enrolled"] = run_enrol_bench(
            pieces_root, designs, enrol_players, enrol_scenes, seed, models, split, progress, workers
        )
    return result


def enrolled_player(
    pieces_root: Path, designs: list[str], player: int, seed: int, split: str, reader: DiceReader
) -> tuple[dict, EnrolledDice]:
    """A bench player's dice (a d20 and a d6 of the split's looks) and their enrolment from one rendered picture per
    face (`dice_scenes.write_face_pictures`); DiceEnrolError names the picture refused (its folder as FOLDER)."""
    from vision.dice.enrol import DiceEnrolError, enrol_dice
    from vision.synth.components import load_component
    from vision.synth.dice_scenes import random_looks, write_face_pictures

    looks = random_looks(np.random.default_rng([seed, player, 23]), split)
    table = load_component(pieces_root / designs[player % len(designs)])
    with tempfile.TemporaryDirectory() as tmp:
        write_face_pictures(Path(tmp), looks, seed + player, table)
        try:
            return looks, enrol_dice(Path(tmp), reader).dice
        except DiceEnrolError as err:
            raise DiceEnrolError(str(err).replace(tmp, "FOLDER")) from err


def run_enrol_bench(
    pieces_root: Path,
    designs: list[str],
    players: int,
    scenes: int,
    seed: int,
    models: Path,
    split: str,
    progress: Callable[[str, int, int], None] | None = None,
    workers: int = 2,
) -> dict:
    """Per player: a held-out d20 and d6 look, one enrolment picture per face (`dice_scenes.write_face_pictures`),
    then `scenes` scenes of only that player's dice, read with and without the enrolment, on the same frames."""
    from vision.dice.enrol import DiceEnrolError

    plain = DiceReader(models)
    tallies = {"runtime": DiceTally(), "runtime_enrolled": DiceTally()}
    refused: list[str] = []
    for player in range(players):
        try:
            looks, dice = enrolled_player(pieces_root, designs, player, seed, split, plain)
        except DiceEnrolError as err:  # the player would be told so and asked for another picture
            refused.append(f"player {player}: {err}")
            continue
        enrolled = DiceReader(models, dice)
        jobs = [(10_000 * (player + 1) + i, seed, str(pieces_root), designs, split, looks) for i in range(scenes)]
        with Pool(workers) as pool:
            for done, frame in enumerate(pool.imap(render_frame, jobs), 1):
                image = frame.image()
                for name, reader in (("runtime", plain), ("runtime_enrolled", enrolled)):
                    tallies[name].add(frame.dice, [(r.x, r.y, r.label) for r in reader.read(image)])
                if progress:
                    progress("enrolled dice scenes", player * scenes + done, players * scenes)
    return {
        "players": players,
        "scenes_per_player": scenes,
        "enrolment_refused": refused,
        **{k: t.to_json() for k, t in tallies.items()},
    }


@dataclass
class ClipTally:
    """One way of reading roll clips: frames where a moving die was given a value, and each die that came to rest:
    its first value given (right or wrong), or none, and how many frames after rest."""

    moving_frames: int = 0
    read_while_moving: int = 0
    settled: int = 0
    right: int = 0
    wrong: int = 0
    never: int = 0
    delays: list[int] = field(default_factory=list)

    def add_clip(self, first_given: dict[int, tuple[int, str]], truths: list[tuple[int, str]]) -> None:
        """A clip's first value per thrown die (index -> (frame, label)) against (settle frame, label) per die."""
        for i, (settle_frame, truth) in enumerate(truths):
            self.settled += 1
            if i not in first_given:
                self.never += 1
                continue
            frame, label = first_given[i]
            self.delays.append(frame - settle_frame)
            self.right += label == truth
            self.wrong += label != truth

    def to_json(self) -> dict:
        return {
            "moving_die_frames": self.moving_frames,
            "read_while_moving": self.read_while_moving,
            "settled_dice": self.settled,
            "given_right": self.right,
            "given_wrong": self.wrong,
            "never_given": self.never,
            "frames_from_rest_to_value": {
                "median": statistics.median(self.delays) if self.delays else None,
                "max": max(self.delays) if self.delays else None,
            },
        }


@dataclass
class ClipFrame:
    """One frame of a roll clip: where each thrown die is (its box, whether it moves or has settled) and what the
    reader read in it, per way of reading (with or without the table's calibration)."""

    frame: int
    solids: list[dict]  # {"index", "box" (x1 y1 x2 y2 or None), "moving", "settled"}
    readings: dict[str, list[DieReading]]


@dataclass
class ClipRecord:
    """A roll clip read frame by frame, kept so that watchers can be replayed on it (`replay`) without reading it
    again: the settle frame and true label of each thrown die, and every frame."""

    truths: list[tuple[int, str]]
    frames: list[ClipFrame]

    def to_json(self) -> dict:
        return {
            "truths": self.truths,
            "frames": [
                {
                    "frame": f.frame,
                    "solids": f.solids,
                    "readings": {name: [asdict(r) for r in rs] for name, rs in f.readings.items()},
                }
                for f in self.frames
            ],
        }

    @classmethod
    def from_json(cls, data: dict) -> ClipRecord:
        frames = [
            ClipFrame(
                f["frame"],
                f["solids"],
                {name: [_reading_of(r) for r in rs] for name, rs in f["readings"].items()},
            )
            for f in data["frames"]
        ]
        return cls([(int(a), str(b)) for a, b in data["truths"]], frames)


def _reading_of(entry: dict) -> DieReading:
    """A kept reading (`dataclasses.asdict`); fields a later DieReading lacks are dropped."""
    known = {f.name for f in fields(DieReading)}
    table_mm = entry.get("table_mm")
    return DieReading(
        **{k: v for k, v in entry.items() if k in known and k != "table_mm"},
        table_mm=None if table_mm is None else (float(table_mm[0]), float(table_mm[1])),
    )


def plan_bench_clip(
    pieces_root: Path, designs: list[str], c: int, seed: int, split: str
) -> tuple[Clip, PieceSet, TableCalibration]:
    """Roll clip `c` of a bench run (the split's designs, framed as the still scenes are), the pieces on its table,
    and its table's calibration as a player's clicks would give it."""
    from vision.synth.clips import ClipError, plan_roll_clip
    from vision.synth.components import load_component

    rng = np.random.default_rng([seed, c, 77])
    pieces = load_component(pieces_root / designs[int(rng.integers(0, len(designs)))])
    kind = "d6" if rng.random() < 0.35 else "d20"
    for attempt in range(10):  # a close camera can leave no room below the frame for the thrower's hand
        d20_px = float(np.exp(rng.uniform(*np.log(DIE_PX))))  # framed as the still scenes are
        try:
            clip = plan_roll_clip(10_000 + seed * 1000 + 37 * c + attempt, pieces, kind, split=split, d20_px=d20_px)
        except ClipError:
            continue
        return clip, pieces, calibration_of(clip.scene.camera, rng)
    raise ClipError(f"roll clip {c}: no throw could be planned in 10 framings")


def record_clip(
    clip: Clip, pieces: PieceSet, reader: DiceReader, tables: dict[str, TableCalibration | None]
) -> ClipRecord:
    """The clip rendered as video, read back and read frame by frame in each way of `tables`."""
    from vision.synth.clips import render_clip
    from vision.synth.video import read_states

    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        render_clip(clip, pieces, tmp, progress=False)
        capture = cv2.VideoCapture(str(Path(tmp) / "video.mp4"))
        for record in read_states(Path(tmp)):
            ok, image = capture.read()
            if not ok:
                break
            solids = [{k: s[k] for k in ("index", "box", "moving", "settled")} for s in record["solids"]]
            frames.append(
                ClipFrame(record["frame"], solids, {name: reader.read(image, t) for name, t in tables.items()})
            )
        capture.release()
    truths = [
        (clip.settle_frame(i), f"{thrown.spec.kind.upper()}:{_value(clip, i)}") for i, thrown in enumerate(clip.thrown)
    ]
    return ClipRecord(truths, frames)


def replay(record: ClipRecord, name: str, rule: WatchRule, tally: ClipTally) -> None:
    """The clip's readings of one way (`name`) through a watcher with `rule`, into the tally."""
    watcher = DiceWatcher(rule)
    first_given: dict[int, tuple[int, str]] = {}
    for frame in record.frames:
        watched = watcher.update(frame.readings[name])
        for solid in frame.solids:
            if solid["box"] is None:
                continue
            x1, y1, x2, y2 = solid["box"]
            mine = [w for w in watched if x1 <= w.reading.x <= x2 and y1 <= w.reading.y <= y2 and w.settled]
            if solid["moving"]:
                tally.moving_frames += 1
                tally.read_while_moving += bool(mine)
            elif solid["settled"] and mine and solid["index"] not in first_given:
                first_given[solid["index"]] = (frame.frame, mine[0].label)
    tally.add_clip(first_given, record.truths)


def run_clip_bench(
    pieces_root: Path,
    designs: list[str],
    clips: int,
    seed: int,
    reader: DiceReader,
    split: str,
    progress: Callable[[str, int, int], None] | None = None,
    rules: Mapping[str, WatchRule] | None = None,
) -> dict:
    """Roll clips read frame by frame through the watcher, with and without the table's calibration: values given
    while a die moves (must be none), and for each die that comes to rest, whether its value is given, right, and
    how many frames after it settled. Each way's watcher `rules` (`runtime`, `runtime_calibrated`; default: the old
    rule) and, as the baseline in the same run on the same readings, the old rule (eight frames in a row read the
    same)."""
    rules = dict(rules or {})
    ways = {name: rules.get(name, WatchRule()) for name in CLIP_WAYS}
    ways |= {f"{name}_old_rule": WatchRule() for name in CLIP_WAYS}
    tallies = {name: ClipTally() for name in ways}
    for c in range(clips):
        clip, pieces, calibration = plan_bench_clip(pieces_root, designs, c, seed, split)
        record = record_clip(clip, pieces, reader, {"runtime": None, "runtime_calibrated": calibration})
        for name, rule in ways.items():
            replay(record, name.removesuffix("_old_rule"), rule, tallies[name])
        if progress:
            progress("roll clips", c + 1, clips)
    return {
        "clips": clips,
        "rules": {name: asdict(ways[name]) for name in CLIP_WAYS},
        **{name: tally.to_json() for name, tally in tallies.items()},
    }


def _value(clip: Clip, i: int) -> int:
    from vision.synth.solids import top_value

    thrown = clip.thrown[i]
    return top_value(thrown.spec.kind, thrown.spec.rotation)  # the spec is posed at rest


def _resting_rows(name: str, tally: dict) -> list[str]:
    return [
        f"{name:<24} {kind + suffix:<12} {row['dice']:>6} {row['right']:>7} {row['wrong']:>6} {row['unread']:>7} "
        f"{row['missed']:>7} {100 * row['accuracy']:>8.2f}%"
        for part, suffix in (("resting", ""), ("resting_legible", " legible"))
        for kind, row in tally.get(part, {}).items()
    ]


def format_dice_table(result: dict) -> str:
    lines = [
        f"dice: {result['data']['scenes']} scenes, {result['data']['dice']} dice, split {result['data']['split']}",
        f"{'reader':<24} {'kind':<12} {'dice':>6} {'right':>7} {'wrong':>6} {'unread':>7} {'missed':>7} "
        f"{'accuracy':>9}",
    ]
    for name in ("runtime", "runtime_calibrated", "reader_true_placement", "reader_true_face"):
        lines += _resting_rows(name, result[name])
        r = result[name]
        lines.append(
            f"{'':<24} given a value: cocked {r['cocked']['given_value']} of {r['cocked']['dice']}, in the air "
            f"{r['air']['given_value']} of {r['air']['dice']}, hidden {r['hidden']['given_value']} of "
            f"{r['hidden']['dice']}, false finds {r['false_finds']['given_value']} of {r['false_finds']['finds']}"
        )
    for name, lat in result["latency_ms"].items():
        lines.append(f"latency per frame, {name} (find + read): median {lat['median']} ms, p95 {lat['p95']} ms")
    if "enrolled" in result:
        e = result["enrolled"]
        lines.append(f"enrolled dice: {e['players']} players' held-out dice, {e['scenes_per_player']} scenes each")
        lines += [f"  enrolment refused: {why}" for why in e["enrolment_refused"]]
        for name in ("runtime", "runtime_enrolled"):
            lines += _resting_rows(name, e[name])
    for name, c in result.get("clips", {}).items():
        if name in ("clips", "rules"):
            continue
        lines.append(
            f"roll clips ({result['clips']['clips']}), {name}: moving-die frames {c['moving_die_frames']}, read while "
            f"moving {c['read_while_moving']}; settled dice {c['settled_dice']}: right {c['given_right']}, wrong "
            f"{c['given_wrong']}, never given {c['never_given']}; frames from rest to value: median "
            f"{c['frames_from_rest_to_value']['median']}, max {c['frames_from_rest_to_value']['max']}"
        )
    return "\n".join(lines)
