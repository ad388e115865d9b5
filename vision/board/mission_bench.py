"""`tabletop bench vision --game the-loop`, its mission part: what lies on each Era's mission spot, and the progress
cubes on face-up tiles, on held-out board designs.

Scenes are the cube bench's (`vision.synth.cube_scenes`) with mission tiles on their spots (`spot_tiles`: empty,
face down, or face up with 0 to all of their slots filled, hands now and then reaching over them). Each frame is
registered from scratch (`register`) and every spot read (`missions.MissionReader`); beside it, in the same run, the
reader on the true placement, and a reader with nothing spatial in it (`colour_reading`: the spot's mean colour
against each picture's, and the saturated red and green blobs on a face counted as cubes).

A spot is scored when its four corners lie in the frame and at least half of it (of its tile, when one lies there)
shows; a face-up tile's progress when the tile was named right and every cube on it shows at least half.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.board.missions import (
    BACK,
    COLOURS,
    EMPTY_INSET_PX,
    MARGIN_PX,
    SPOT_PX,
    TILE_PX,
    MissionReader,
    SpotReading,
    mission_tiles_of_piece_set,
)
from vision.board.register import BoardNotFound, BoardRegistrar

SEEN = 0.5
KINDS = ("empty", "back", "front")


@dataclass
class MissionScene:
    jpeg: bytes
    design: str
    truth_h: np.ndarray  # board fractions -> frame pixels
    spots: tuple  # cube_scenes.SpotTruth per Era


def render_mission_frame(job: tuple[int, int, str, list[str]]) -> MissionScene:
    from vision.synth.cube_scenes import render_board_scene

    index, seed, root, designs = job
    rendered = render_board_scene(index, seed, Path(root), designs, missions=True)
    ok, jpeg = cv2.imencode(".jpg", rendered.scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok, "JPEG encoding of a frame failed"
    return MissionScene(jpeg.tobytes(), Path(rendered.pieces.path).name, rendered.frame_from_board, rendered.spots)


def kind_of(tile: str | None) -> str:
    return "empty" if tile is None else "back" if tile == BACK else "front"


@dataclass
class SpotTally:
    """Spots named right per kind, spots said to be covered, and exact progress on face-up tiles."""

    spots: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    right: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    covered: int = 0  # spots the reader said it could not see (neither right nor wrong)
    fronts: int = 0  # face-up tiles named right, every cube on them at least half seen
    progress_right: int = 0
    confusion: dict[str, int] = field(default_factory=dict)

    def add(self, truths: tuple, readings: dict[str, SpotReading]) -> None:
        for truth in truths:
            if truth.spot_in_frame < 1 or truth.tile_seen < SEEN:
                continue
            kind = kind_of(truth.tile)
            self.spots[kind] += 1
            reading = readings.get(truth.era)
            if reading is None or not reading.seen:
                self.covered += 1
                continue
            if reading.tile != truth.tile:
                key = f"{kind}->{kind_of(reading.tile)}"
                self.confusion[key] = self.confusion.get(key, 0) + 1
                continue
            self.right[kind] += 1
            if kind == "front" and truth.least_seen >= SEEN:
                self.fronts += 1
                self.progress_right += int(all(reading.progress[c] == truth.progress[c] for c in COLOURS))

    def summary(self) -> dict:
        spots = sum(self.spots.values())
        right = sum(self.right.values())

        def pct(a: int, b: int) -> float | None:
            return round(100.0 * a / b, 2) if b else None

        return {
            "spots": spots,
            "right_pct": pct(right, spots),
            "covered": self.covered,
            "wrong": spots - right - self.covered,
            "by_kind": {k: {"spots": self.spots[k], "right_pct": pct(self.right[k], self.spots[k])} for k in KINDS},
            "fronts": self.fronts,
            "progress_exact_pct": pct(self.progress_right, self.fronts),
            "confusion": dict(sorted(self.confusion.items(), key=lambda kv: -kv[1])),
        }


def colour_reading(reader: MissionReader, frame: np.ndarray, frame_from_board: np.ndarray) -> dict[str, SpotReading]:
    """The baseline: per spot, the picture (each face, the back, the empty print) whose mean colour, over the board's
    around it, is nearest the view's; on a face, each saturated red or green blob is a cube."""
    out = {}
    inner = slice(MARGIN_PX + EMPTY_INSET_PX, MARGIN_PX + SPOT_PX - EMPTY_INSET_PX)
    ring = np.ones((reader.view_px, reader.view_px), bool)
    ring[MARGIN_PX : MARGIN_PX + SPOT_PX, MARGIN_PX : MARGIN_PX + SPOT_PX] = False
    faces = {name: picture.reshape(-1, 3).mean(axis=0) for name, k, picture, _ in reader.faces if k == 0}
    for era in reader.spots:
        view = reader.view(frame, frame_from_board, era).astype(np.float32)
        board = reader.empty[era].astype(np.float32)
        light = view[ring].mean(axis=0) / np.maximum(board[ring].mean(axis=0), 1.0)
        seen = view[inner, inner].reshape(-1, 3).mean(axis=0) / np.maximum(light, 1e-3)
        means = {**faces, "": board[inner, inner].reshape(-1, 3).mean(axis=0)}
        name = min(means, key=lambda n: float(np.abs(means[n] - seen).sum()))
        tile = name or None
        progress = dict.fromkeys(COLOURS, 0)
        if tile not in (None, BACK):
            hsv = cv2.cvtColor(view[inner, inner].astype(np.uint8), cv2.COLOR_BGR2HSV)
            strong = (hsv[..., 1] > 120) & (hsv[..., 2] > 50)
            hue = hsv[..., 0].astype(int)
            masks = {"red": strong & ((hue < 10) | (hue > 170)), "green": strong & (hue > 40) & (hue < 85)}
            for colour, mask in masks.items():
                _, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8))
                progress[colour] = int((stats[1:, cv2.CC_STAT_AREA] >= (TILE_PX / 60 * 5) ** 2).sum())
        out[era] = SpotReading(era, tile, progress, 0.0, 0.0, 0.0)
    return out


def run_mission_bench(
    pieces_root: Path,
    scenes: int,
    seed: int,
    models: Path,
    progress: Callable[[str, int, int], None] | None = None,
    split: str = "test",
    workers: int = 2,
) -> dict:
    from vision.board.bench import colour_counts, median_p95, render_bench_scenes
    from vision.board.layout import BoardLayout
    from vision.board.read import BoardReader
    from vision.synth.art.the_loop import era_regions, mission_regions
    from vision.synth.components import load_component

    designs, rendered = render_bench_scenes(
        render_mission_frame, pieces_root, scenes, seed, split, workers, progress, "mission"
    )
    readers: dict[str, MissionReader] = {}  # each the spots' reader of the design's whole board below
    boards: dict[str, BoardReader] = {}  # the whole board (cubes, pieces, spots), for its time a frame
    registrars: dict[str, BoardRegistrar] = {}
    tallies = {"reader": SpotTally(), "reader_true_placement": SpotTally(), "colour": SpotTally()}
    read_ms: list[float] = []
    again_ms: list[float] = []
    board_ms: list[float] = []  # the whole board read from a registered frame met cold
    baseline_ms: list[float] = []  # the colour baselines of the cubes and the spots, on the same frames
    for k, scene in enumerate(rendered):
        if scene.design not in readers:
            pieces = load_component(pieces_root / scene.design)
            number = int(scene.design.rsplit("-", 1)[1])
            picture = pieces.image("BOARD")
            tiles = mission_tiles_of_piece_set(pieces_root / scene.design)
            layout = BoardLayout(picture, era_regions(number), pieces_root / scene.design, mission_regions(number))
            boards[scene.design] = BoardReader(layout, models, tiles)
            assert boards[scene.design].missions is not None, "the bench's boards name their mission spots"
            readers[scene.design] = boards[scene.design].missions
            registrars[scene.design] = BoardRegistrar(picture)
        reader = readers[scene.design]
        reader.forget()  # every scene is another table: nothing it read before is kept
        frame = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
        tallies["reader_true_placement"].add(scene.spots, {r.era: r for r in reader.read(frame, scene.truth_h)})
        reader.forget()
        try:
            placement = registrars[scene.design].register(frame).frame_from_board
        except BoardNotFound:
            placement = None
        if placement is None:
            tallies["reader"].add(scene.spots, {})
            tallies["colour"].add(scene.spots, {})
        else:
            t0 = time.perf_counter()
            readings = {r.era: r for r in reader.read(frame, placement)}
            read_ms.append(1000 * (time.perf_counter() - t0))
            t0 = time.perf_counter()
            again = {r.era: r for r in reader.read(frame, placement)}  # the live loop's common case: nothing moved
            again_ms.append(1000 * (time.perf_counter() - t0))
            assert again == readings, "a spot read again from the same frame changed its reading"
            tallies["reader"].add(scene.spots, readings)
            board = boards[scene.design]
            reader.forget()  # the whole board is met cold too
            t0 = time.perf_counter()
            board.read(frame, placement)
            board_ms.append(1000 * (time.perf_counter() - t0))
            t0 = time.perf_counter()
            net = board.counter.cubes
            colour_counts(net.cut(frame, placement), net.reference, net.masks)
            colour = colour_reading(reader, frame, placement)
            baseline_ms.append(1000 * (time.perf_counter() - t0))
            tallies["colour"].add(scene.spots, colour)
        if progress:
            progress("missions read", k + 1, len(rendered))
    return {
        "bench": "mission spots, The LOOP",
        "split": f"{split} (board designs {', '.join(designs)}: art.common.design_split)",
        "scenes": scenes,
        "seed": seed,
        "readers": {name: t.summary() for name, t in tallies.items()},
        "latency_ms": {
            "median": round(float(np.median(read_ms)), 2) if read_ms else None,
            "p95": round(float(np.percentile(read_ms, 95)), 2) if read_ms else None,
            "unchanged_median": round(float(np.median(again_ms)), 2) if again_ms else None,
            "whole_board": median_p95(board_ms),
            "colour_baselines": median_p95(baseline_ms),
        },
    }


def format_mission_table(result: dict) -> str:
    lines = [
        f"mission spots, The LOOP: {result['scenes']} scenes, {result['split']}, seed {result['seed']}",
        "| reader | spots scored | named right | empty | face down | face up | said covered | wrong | "
        "face-up progress exact |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = {
        "reader": "pictures and slots (registered frame by frame)",
        "colour": "mean colour and colour blobs, nothing spatial (baseline)",
        "reader_true_placement": "pictures and slots on the true placement",
    }
    for key, label in names.items():
        s = result["readers"][key]
        kinds = " | ".join(f"{s['by_kind'][k]['right_pct']}% of {s['by_kind'][k]['spots']}" for k in KINDS)
        lines.append(
            f"| {label} | {s['spots']} | {s['right_pct']}% | {kinds} | {s['covered']} | {s['wrong']} | "
            f"{s['progress_exact_pct']}% of {s['fronts']} |"
        )
    lines.append(
        f"reading every spot of a registered frame: median {result['latency_ms']['median']} ms, p95 "
        f"{result['latency_ms']['p95']} ms; the same frame again (spots unchanged keep their readings): median "
        f"{result['latency_ms'].get('unchanged_median')} ms"
    )
    whole, baseline = result["latency_ms"].get("whole_board"), result["latency_ms"].get("colour_baselines")
    if whole and baseline:
        lines.append(
            f"the whole board of a registered frame met cold (cubes, pieces, every spot): median {whole['median']} ms, "
            f"p95 {whole['p95']} ms; the colour baselines of cubes and spots on the same frames {baseline['median']} "
            f"ms ({whole['median'] / baseline['median']:.2f} times)"
        )
    confusion = result["readers"]["reader"]["confusion"]
    if confusion:
        lines.append("reader's misses (true->said): " + "; ".join(f"{k} x{v}" for k, v in confusion.items()))
    return "\n".join(lines)
