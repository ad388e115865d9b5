"""`tabletop bench vision --game the-loop`, its cube part: cubes counted per Era on held-out board designs.

Scenes come from `vision.synth.cube_scenes` (0-6 rift cubes an Era, energy cubes, touching rows, hands, tokens and
pawns on the ring, the renderer's light, blur and noise), rendered for the design split's boards (`--split test`:
designs never used to train or choose anything). Each frame is registered from scratch (`register`), cut and
counted (`cubes`); beside it, in the same run and on the same cuts, a counter with nothing learnt (`colour_counts`:
colour blobs that differ from the board's picture, counted by area), and the net again on cuts along the true
placement, which says how much registration costs.

An Era is scored when it lies wholly in the frame and every cube in it shows at least half (a cube a hand hides
cannot be counted by anyone; those Eras are reported apart, as "covered").

Pieces (clone tokens by Paradox Era, vortex and mission tiles, pawns by agent) are scored on the cut: a piece at
least half seen is found when a piece is read within `MATCH_MM` of it, right when that reading has its label; a
reading near no piece is a false one (a reading near a piece too hidden to ask for is neither).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.board.cubes import COLOURS, CUBE_MM, CubeCounter, count_cut, counts_of, era_of, find_pieces
from vision.board.rectify import CUT_PX, RING_CORNERS, difference, px_per_mm, to_cut
from vision.board.register import BoardNotFound, BoardRegistrar

VORTEX = 4  # a fourth rift cube in an Era is a vortex (seeds/the-loop)
SEEN = 0.5  # every cube of a scored Era shows at least this share
IN_FRAME = 0.98
UNIT_GROWTH = 1.3  # ... whose blob is this much more than its top face (its sides show under tilt)
MATCH_MM = 9.0  # a piece read this near a piece's centre (on the cut) is that piece's reading
FAMILIES = ("CLONE", "VORTEX", "MISSION", "PAWN")


@dataclass
class BoardScene:
    jpeg: bytes
    design: str
    truth_h: np.ndarray  # board fractions -> frame pixels
    eras: dict  # Era -> {"in_frame", "counts", "least_seen"}
    pieces: tuple[tuple[str, float, float, float], ...] = ()  # (label, x, y in board fractions, visible share)


def render_frame(job: tuple[int, int, str, list[str]]) -> BoardScene:
    """One bench scene, as the camera would hand it over (JPEG), with its truth."""
    from vision.synth.cube_scenes import render_board_scene

    rendered = render_board_scene(*job)
    ok, jpeg = cv2.imencode(".jpg", rendered.scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok, "JPEG encoding of a frame failed"
    to_board = np.linalg.inv(rendered.frame_from_board) @ rendered.scene.spec.camera.table_to_image()
    pieces = tuple(
        (label, *(float(v) for v in _apply(to_board, np.array([[x, y]]))[0]), seen)
        for label, x, y, seen in rendered.on_ring
    )
    return BoardScene(jpeg.tobytes(), rendered.pieces.path.name, rendered.frame_from_board, rendered.eras, pieces)


def colour_counts(cut: np.ndarray, reference: np.ndarray, masks: Mapping[str, np.ndarray]) -> dict[str, dict[str, int]]:
    """The counter with nothing learnt: the board's picture fitted to the cut's light (a gain and an offset per
    channel, refitted without the pixels that differ most), pixels that differ from it and have a cube's hue, in
    blobs counted by area (a cube's expected area on the cut)."""
    differs = difference(cut, reference) > 60
    hsv = cv2.cvtColor(cut, cv2.COLOR_BGR2HSV)
    hue, sat, val = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    hues = {
        "red": ((hue < 8) | (hue > 170)) & (sat > 110),
        "green": (hue > 40) & (hue < 85) & (sat > 80),
        "blue": (hue > 100) & (hue < 130) & (sat > 100),
    }
    unit = (CUBE_MM * px_per_mm(cut.shape[1])) ** 2 * UNIT_GROWTH
    counts = {era: dict.fromkeys(COLOURS, 0) for era in masks}
    kernel = np.ones((3, 3), np.uint8)
    for colour, hue_mask in hues.items():
        blobs = cv2.morphologyEx((differs & hue_mask & (val > 40)).astype(np.uint8), cv2.MORPH_OPEN, kernel)
        n, _, stats, centres = cv2.connectedComponentsWithStats(blobs)
        for k in range(1, n):
            era = era_of(*(int(v) for v in centres[k]), masks)
            if era is not None:
                counts[era][colour] += round(stats[k, cv2.CC_STAT_AREA] / unit)
    return counts


def countable(info: Mapping) -> bool:
    """Whether an Era (its truth: in_frame, least_seen) is scored: wholly in view, every cube at least half seen."""
    return info["in_frame"] >= IN_FRAME and info["least_seen"] >= SEEN


def same(got: Mapping[str, int], real: Mapping[str, int]) -> bool:
    """Counted right, every colour."""
    return all(got[c] == real[c] for c in COLOURS)


def exact(said: Mapping[str, Mapping[str, int]], truth: Mapping[str, Mapping]) -> int:
    """How many countable Eras `said` counts right, every colour."""
    return sum(countable(info) and same(said[era], info["counts"]) for era, info in truth.items())


class Tally:
    """Per counter: Eras scored, exactly right, by the true rift count, vortexes missed and invented."""

    def __init__(self) -> None:
        self.eras = self.exact = self.rift_exact = 0
        self.covered = self.covered_exact = 0
        self.unread = 0  # scored Eras of frames where the board was not found
        self.vortexes = self.vortex_missed = self.vortex_false = 0
        self.by_rift: dict[int, list[int]] = {}
        self.confusion: dict[str, int] = {}

    def add(self, truth: Mapping[str, dict], said: Mapping[str, dict[str, int]] | None) -> None:
        for era, info in truth.items():
            if info["in_frame"] < IN_FRAME:
                continue
            real = info["counts"]
            if not countable(info):
                self.covered += 1
                self.covered_exact += said is not None and same(said[era], real)
                continue
            self.eras += 1
            row = self.by_rift.setdefault(real["red"], [0, 0])
            row[0] += 1
            if real["red"] >= VORTEX:
                self.vortexes += 1
            if said is None:
                self.unread += 1
                self.vortex_missed += real["red"] >= VORTEX
                continue
            got = said[era]
            right = same(got, real)
            self.exact += right
            self.rift_exact += got["red"] == real["red"]
            row[1] += right
            self.vortex_missed += real["red"] >= VORTEX and got["red"] < VORTEX
            self.vortex_false += real["red"] < VORTEX and got["red"] >= VORTEX
            if not right:
                key = " ".join(f"{c[0]}{real[c]}->{got[c]}" for c in COLOURS if got[c] != real[c])
                self.confusion[key] = self.confusion.get(key, 0) + 1

    def summary(self) -> dict:
        def pct(a: int, b: int) -> float | None:
            return round(100.0 * a / b, 2) if b else None

        return {
            "eras": self.eras,
            "exact_pct": pct(self.exact, self.eras),
            "rift_exact_pct": pct(self.rift_exact, self.eras),
            "unread": self.unread,
            "vortexes": self.vortexes,
            "vortex_missed": self.vortex_missed,
            "vortex_false": self.vortex_false,
            "by_rift_count": {
                str(k): {"eras": v[0], "exact_pct": pct(v[1], v[0])} for k, v in sorted(self.by_rift.items())
            },
            "covered_eras": self.covered,
            "covered_exact_pct": pct(self.covered_exact, self.covered),
            "worst_confusions": dict(sorted(self.confusion.items(), key=lambda kv: -kv[1])[:8]),
        }


class PieceTally:
    """Per piece family: pieces at least half seen on the cut, found, read right; readings near no piece."""

    def __init__(self, size: int = CUT_PX) -> None:
        self.size = size  # the cut's side
        self.match_px = MATCH_MM * px_per_mm(size)
        self.counts = {f: {"pieces": 0, "found": 0, "right": 0, "false": 0} for f in FAMILIES}
        self.confusion: dict[str, int] = {}

    def add(self, truth: list[tuple[str, float, float, float]], said: list[tuple[str, float, float, float]]) -> None:
        """`truth`: (label, x, y on the cut, visible share); `said`: (label, x, y on the cut, score)."""
        used = [False] * len(said)
        for label, x, y, seen in truth:
            near = [k for k, (_, sx, sy, _) in enumerate(said) if (sx - x) ** 2 + (sy - y) ** 2 <= self.match_px**2]
            for k in near:
                used[k] = True
            if seen < SEEN or not (0 <= x < self.size and 0 <= y < self.size):
                continue
            row = self.counts[label.split(":")[0]]
            row["pieces"] += 1
            if near:
                best = min(near, key=lambda k: (said[k][1] - x) ** 2 + (said[k][2] - y) ** 2)
                row["found"] += 1
                row["right"] += said[best][0] == label
                if said[best][0] != label:
                    key = f"{label}->{said[best][0]}"
                    self.confusion[key] = self.confusion.get(key, 0) + 1
        for k, (label, *_rest) in enumerate(said):
            if not used[k]:
                self.counts[label.split(":")[0]]["false"] += 1

    def summary(self) -> dict:
        out: dict = {}
        for family, row in self.counts.items():
            n = row["pieces"]
            out[family] = {**row, "right_pct": round(100.0 * row["right"] / n, 2) if n else None}
        out["worst_confusions"] = dict(sorted(self.confusion.items(), key=lambda kv: -kv[1])[:8])
        return out


def pieces_on_cut(scene: BoardScene, size: int) -> list[tuple[str, float, float, float]]:
    """The scene's pieces (label, x, y on a cut `size` pixels wide along the true placement, visible share)."""
    if not scene.pieces:
        return []
    points = to_cut(np.array([[x, y] for _, x, y, _ in scene.pieces]), size)
    return [
        (label, float(px), float(py), seen) for (label, _, _, seen), (px, py) in zip(scene.pieces, points, strict=True)
    ]


def render_bench_scenes(
    render: Callable[[tuple[int, int, str, list[str]]], Any],
    pieces_root: Path,
    scenes: int,
    seed: int,
    split: str,
    workers: int,
    progress: Callable[[str, int, int], None] | None,
    what: str,
) -> tuple[list[str], list[Any]]:
    """(the split's design names, `scenes` scenes of them rendered by `render` in `workers` processes)."""
    from vision.synth.components import split_design_names

    designs = split_design_names(pieces_root, split, "the-loop")
    jobs = [(i, seed, str(pieces_root), designs) for i in range(scenes)]
    rendered: list[Any] = []
    with Pool(workers) as pool:
        for scene in pool.imap(render, jobs):
            rendered.append(scene)
            if progress:
                progress(f"{what} scenes", len(rendered), scenes)
    return designs, rendered


def run_cube_bench(
    pieces_root: Path,
    scenes: int,
    seed: int,
    models: Path,
    progress: Callable[[str, int, int], None] | None = None,
    split: str = "test",
    workers: int = 2,
) -> dict:
    from vision.synth.art.the_loop import era_regions
    from vision.synth.components import load_component

    designs, rendered = render_bench_scenes(render_frame, pieces_root, scenes, seed, split, workers, progress, "cube")
    counters: dict[str, CubeCounter] = {}
    registrars: dict[str, BoardRegistrar] = {}
    tallies = {"net": Tally(), "colour": Tally(), "net_true_placement": Tally(), "net_unchecked": Tally()}
    tallies["checker_alone"] = Tally()  # the checker's count without each Era read whole (session 56), beside it
    piece_tallies: dict[str, PieceTally] = {}
    register_ms, count_ms, colour_ms, placement_px = [], [], [], []
    cubes_ms: list[float] = []  # count_ms's parts: the cut, the net, the checker and the counts; the pieces' reading
    pieces_ms: list[float] = []
    found = 0
    ring = np.array([*RING_CORNERS, (0.5, 0.5)])
    for k, scene in enumerate(rendered):
        if scene.design not in counters:
            pieces = load_component(pieces_root / scene.design)
            number = int(scene.design.rsplit("-", 1)[1])
            picture = pieces.image("BOARD")
            counters[scene.design] = CubeCounter(picture, era_regions(number), models)
            registrars[scene.design] = BoardRegistrar(picture)
        counter = counters[scene.design]
        if not piece_tallies:  # pieces are scored on the net's cut
            size = counter.cubes.size
            piece_tallies = {"net": PieceTally(size), "net_true_placement": PieceTally(size)}
            if counter.paradox is not None:  # the clones' Eras as the net's maps alone name them, beside it
                piece_tallies["net_maps_only"] = PieceTally(size)
        frame = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
        t0 = time.perf_counter()
        try:
            placement = registrars[scene.design].register(frame).frame_from_board
        except BoardNotFound:
            placement = None
        register_ms.append(1000 * (time.perf_counter() - t0))
        cut, heat = counter.look(frame, scene.truth_h)
        tallies["net_true_placement"].add(
            scene.eras, counts_of(counter.find_cubes(frame, scene.truth_h, heat, cut), counter.cube_cut.masks)
        )
        truth_pieces = pieces_on_cut(scene, counter.cubes.size) if counter.pieces else []
        if counter.pieces is not None:
            piece_tallies["net_true_placement"].add(truth_pieces, counter.read_pieces(cut, heat))
        if placement is None:
            tallies["net"].add(scene.eras, None)
            tallies["colour"].add(scene.eras, None)
            tallies["net_unchecked"].add(scene.eras, None)
            tallies["checker_alone"].add(scene.eras, None)
            piece_tallies["net"].add(truth_pieces, [])
            if "net_maps_only" in piece_tallies:
                piece_tallies["net_maps_only"].add(truth_pieces, [])
        else:
            found += 1
            placement_px.append(float(np.abs(_apply(placement, ring) - _apply(scene.truth_h, ring)).max()))
            t0 = time.perf_counter()
            cut, heat = counter.look(frame, placement)
            said = counts_of(counter.find_cubes(frame, placement, heat, cut), counter.cube_cut.masks)
            t1 = time.perf_counter()
            found_pieces = counter.read_pieces(cut, heat)
            t2 = time.perf_counter()
            count_ms.append(1000 * (t2 - t0))
            cubes_ms.append(1000 * (t1 - t0))
            pieces_ms.append(1000 * (t2 - t1))
            tallies["net"].add(scene.eras, said)
            if counter.whole is not None:
                alone = counter.find_cubes(frame, placement, heat, cut, whole_eras=False)
                tallies["checker_alone"].add(scene.eras, counts_of(alone, counter.cube_cut.masks))
            if counter.checker is not None:  # the cube net's own peaks, the checker's candidates, beside it
                tallies["net_unchecked"].add(scene.eras, count_cut(heat, counter.cubes.masks, counter.cubes.peak))
            # the truth is placed on the true cut; a registered cut is off by the registration's error (a few px)
            piece_tallies["net"].add(truth_pieces, found_pieces)
            if "net_maps_only" in piece_tallies and counter.pieces is not None:
                piece_tallies["net_maps_only"].add(truth_pieces, find_pieces(heat, counter.pieces.piece_peak))
            t0 = time.perf_counter()
            tallies["colour"].add(scene.eras, colour_counts(cut, counter.cubes.reference, counter.cubes.masks))
            colour_ms.append(1000 * (time.perf_counter() - t0))
        if progress:
            progress("counted", k + 1, len(rendered))

    return {
        "bench": "cubes per Era, The LOOP",
        "split": f"{split} (board designs {', '.join(designs)}: art.common.design_split)",
        "scenes": scenes,
        "seed": seed,
        "counters": {name: t.summary() for name, t in tallies.items() if t.eras or name in ("net", "colour")},
        "pieces": {name: t.summary() for name, t in piece_tallies.items()},
        "registration": {
            "found_pct": round(100.0 * found / max(len(rendered), 1), 2),
            "ring_error_px": median_p95(placement_px),
            "ms": median_p95(register_ms),
        },
        "latency_ms": {
            "net_count": median_p95(count_ms),
            "cubes": median_p95(cubes_ms),
            "pieces": median_p95(pieces_ms),
            "colour_count": median_p95(colour_ms),
        },
        "nets": _nets(next(iter(counters.values()))) if counters else None,
    }


def median_p95(values: list[float]) -> dict:
    """{"median", "p95"} of a bench's measurements, rounded to 0.01 ({} when there are none)."""
    return (
        {"median": round(float(np.median(values)), 2), "p95": round(float(np.percentile(values, 95)), 2)}
        if values
        else {}
    )


def _nets(counter: CubeCounter) -> dict:
    """What the bench ran: each net's cut side and cut-offs."""
    out: dict = {"cubes": {"cut_px": counter.cubes.size, "peak": counter.cubes.peak}}
    if counter.checker is not None:
        checker = counter.checker
        out["checker"] = {
            "cut_px": checker.size,
            "floor": checker.floor,
            "accept": checker.accept,
            "reach_sides": checker.reach_sides,
            "apart_sides": checker.apart_sides,
            "views": checker.views,
        }
    if counter.whole is not None:
        whole = counter.whole
        out["whole_eras"] = {"cut_px": whole.size, "side": whole.side, "bin": whole.binning, "margin": whole.margin}
    if counter.pieces is not None:
        out["pieces"] = {"cut_px": counter.pieces.size, "peak": counter.pieces.piece_peak}
    if counter.paradox is not None:
        out["paradox"] = {"clone_peak": counter.paradox.clone_peak}
    return out


def _apply(h: np.ndarray, points: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64), h).reshape(-1, 2)


def format_cube_table(result: dict) -> str:
    lines = [
        f"cubes per Era, The LOOP: {result['scenes']} scenes, {result['split']}, seed {result['seed']}",
        "| counter | Eras scored | exactly right | rift count right | vortexes missed / invented | covered, right |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    names = {
        "net": "net (registered frame by frame)",
        "checker_alone": "net and checker, no Era read whole (registered)",
        "net_unchecked": "the cube net's peaks alone, no second look (registered)",
        "colour": "colour blobs, nothing learnt (baseline)",
        "net_true_placement": "net on the true placement",
    }
    for key, label in names.items():
        if key not in result["counters"]:
            continue
        s = result["counters"][key]
        lines.append(
            f"| {label} | {s['eras']} | {s['exact_pct']}% | {s['rift_exact_pct']}% | "
            f"{s['vortex_missed']} of {s['vortexes']} / {s['vortex_false']} | "
            f"{s['covered_exact_pct']}% of {s['covered_eras']} |"
        )
    reg = result["registration"]
    lat = result["latency_ms"]
    lines.append(
        f"board found in {reg['found_pct']}% of frames, ring corners off by {reg['ring_error_px'].get('median')} px "
        f"median ({reg['ring_error_px'].get('p95')} p95), in {reg['ms'].get('median')} ms median"
    )
    lines.append(
        f"reading a registered frame (cuts, nets, checker, peaks): median {lat['net_count'].get('median')} ms, p95 "
        f"{lat['net_count'].get('p95')} ms (cubes {lat.get('cubes', {}).get('median')}, pieces "
        f"{lat.get('pieces', {}).get('median')}); the colour counter {lat['colour_count'].get('median')} ms"
    )
    net = result["counters"]["net"]
    lines.append("net, exactly right by the Era's true rift count: " + ", ".join(
        f"{k}: {v['exact_pct']}% of {v['eras']}" for k, v in net["by_rift_count"].items()
    ))  # fmt: skip
    if net["worst_confusions"]:
        lines.append("net, commonest misses (colour true->said): " + "; ".join(
            f"{k} x{v}" for k, v in net["worst_confusions"].items()
        ))  # fmt: skip
    if "pieces" in result:
        lines += [
            "pieces on the ring (at least half seen):",
            "| reader | family | pieces | found | read right | false readings |",
            "|---|---|---:|---:|---:|---:|",
        ]
        readers = [("net", "net (registered)"), ("net_true_placement", "net, true placement")]
        if "net_maps_only" in result["pieces"]:
            readers.append(("net_maps_only", "net's maps alone (registered; clones' Eras not read by colour)"))
        for reader, label in readers:
            for family in FAMILIES:
                row = result["pieces"][reader][family]
                lines.append(
                    f"| {label} | {family} | {row['pieces']} | {row['found']} | {row['right']} ({row['right_pct']}%) | "
                    f"{row['false']} |"
                )
        lines.append("the colour baseline reads no pieces")
    return "\n".join(lines)
