"""Game scenes: each game's table holds its own components, solids get exact labels, exports number them right."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.synth.camera import Camera
from vision.synth.components import generator
from vision.synth.export import classes_for, detect_lines, scene_for
from vision.synth.game_scenes import physical_codes, solid_classes
from vision.synth.scene import CardSpec, fixed_spec, render_scene
from vision.synth.solids import SolidSpec, settled_pose, top_value

SIZE = (640, 360)


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("sets")
    return {game: generator(game)(root / game, 3, 1.5) for game in ("the-loop", "loot-roll")}


def test_classes_are_flat_pieces_then_the_games_solids(sets: dict) -> None:
    the_loop = classes_for([sets["the-loop"]])
    assert the_loop[-len(solid_classes("the-loop")) :] == solid_classes("the-loop")
    assert {"cube-red", "cube-green", "cube-blue", "BOARD", "A01", "daw1"} <= set(the_loop)
    loot_roll = classes_for([sets["loot-roll"]])
    assert {"d20-1", "d20-20", "d6-6", "FIGHT", "FLIGHT"} <= set(loot_roll)
    assert len(set(loot_roll)) == len(loot_roll)


def test_the_loop_scenes_put_pieces_on_the_board(sets: dict) -> None:
    pieces = sets["the-loop"]
    boards = cubes = 0
    for index in range(6):
        scene = scene_for(index, 11, [pieces], [], SIZE)
        assert scene.spec.cards[0].code == "BOARD"  # the board lies under everything
        boards += any(o.code == "BOARD" for o in scene.objects)
        for obj in scene.objects:
            if obj.kind == "cube":
                cubes += 1
                assert obj.code in ("cube-red", "cube-green", "cube-blue") and obj.face_up
        lines = detect_lines(scene, {c: i for i, c in enumerate(classes_for([pieces]))})
        assert len(lines) == sum(r.visible and r.box is not None for o in scene.cards() for r in o.corners)
    assert boards >= 5 and cubes > 0


def test_loot_roll_copies_and_dice(sets: dict) -> None:
    codes = physical_codes(sets["loot-roll"])
    assert codes.count("FIGHT") == 4 and codes.count("FLIGHT") == 4
    dice = [o for i in range(12) for o in scene_for(i, 5, [sets["loot-roll"]], [], SIZE).objects if o.kind == "d20"]
    assert dice, "Loot Roll scenes should have d20s in them"
    for die in dice:
        assert die.code == f"d20-{die.code.split('-')[1]}" and 1 <= int(die.code.split("-")[1]) <= 20


def test_a_die_is_labelled_with_the_value_on_top_and_its_top_face_shows(sets: dict) -> None:
    rng = np.random.default_rng(4)
    rotation = settled_pose(rng, "d20", 17)
    die = SolidSpec("d20", 0.0, 0.0, rotation=rotation, size_mm=30.0, colour=(240, 240, 240), ink=(10, 10, 10))
    camera = Camera(height_mm=400.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=60.0, width=320, height=240)
    spec = fixed_spec([CardSpec("FIGHT", True, 60.0, 0.0, 0.0, False)], camera=camera)
    scene = render_scene(spec.__class__(**{**spec.__dict__, "solids": (die,)}), [sets["loot-roll"]])
    (label,) = [o for o in scene.objects if o.kind == "d20"]
    assert top_value("d20", rotation) == 17 and label.code == "d20-17"
    (top,) = label.corners
    assert top.visible and top.visible_fraction > 0.9
    x1, y1, x2, y2 = label.box
    tx1, ty1, tx2, ty2 = top.box
    assert x1 <= tx1 < tx2 <= x2 and y1 <= ty1 < ty2 <= y2
    pixels = scene.image[int(y1) : int(y2), int(x1) : int(x2)]
    table = scene.image[5:40, 5:40]
    assert abs(float(pixels.mean()) - float(table.mean())) > 20  # the die is drawn where its label says


def test_a_hand_over_a_die_hides_its_value(sets: dict) -> None:
    from vision.synth.occluders import random_occluder

    die = SolidSpec("d6", 0.0, 0.0, rotation=settled_pose(np.random.default_rng(1), "d6", 3), size_mm=20.0)
    hand = random_occluder(np.random.default_rng(2), "hand", 0.0, -60.0, 0.0)
    camera = Camera(height_mm=400.0, tilt_deg=0.0, yaw_deg=0.0, hfov_deg=60.0, width=320, height=240)
    spec = fixed_spec([], camera=camera, occluders=[hand])
    scene = render_scene(spec.__class__(**{**spec.__dict__, "solids": (die,)}), [sets["loot-roll"]])
    (label,) = [o for o in scene.objects if o.kind == "d6"]
    assert label.visible_fraction < 0.5 and not label.corners[0].visible


def test_game_scene_sheet_renders(sets: dict, tmp_path: Path) -> None:
    from vision.synth.sheet import contact_sheet

    scenes = [scene_for(i, 2, [sets["the-loop"], sets["loot-roll"]][i % 2 : i % 2 + 1], [], SIZE) for i in range(2)]
    out = tmp_path / "sheet.png"
    contact_sheet(scenes, out)
    assert cv2.imread(str(out)) is not None
    from vision.synth.sheet import distribution_report

    report = distribution_report([scene_for(i, 11, [sets["the-loop"]], [], SIZE) for i in range(3)])
    assert report["pieces_per_scene_by_kind"]["board"] == 1.0 and report["solid_width_px"]["n"] > 0
    assert 0.0 <= report["corner_visible_share"]["median"] <= 1.0  # pieces without indices are left out


def test_cls_crops_keep_each_pieces_shape(sets: dict, tmp_path: Path) -> None:
    from vision.synth.export import generate_dataset

    generate_dataset(tmp_path / "cls", 4, 11, [sets["the-loop"]], "cls", workers=1, progress=False, backgrounds=[])
    crops = list((tmp_path / "cls" / "train").rglob("*.png"))
    assert crops and not any(p.parent.name in ("BOARD",) or p.parent.name.startswith("cube-") for p in crops)
    for path in crops:
        h, w = cv2.imread(str(path)).shape[:2]
        if path.parent.name.startswith("A"):  # artifact cards: poker-card shape
            assert (w, h) == (94, 132)
        elif path.parent.name[:3] in ("daw", "med", "ren", "ind", "glo", "rob", "end"):  # round clone tokens
            assert abs(w / h - 1.0) < 0.1
