"""Build the vendored dice assets under vision/synth/data/solids/ from the npm package `@3d-dice/dice-box` (MIT).

Run once by a developer (`npm pack @3d-dice/dice-box`, unpack, then
`python -m vision.synth.solids_assets /tmp/dicebox/package`); the product only reads the small files it writes, so
nothing is downloaded at run time. The package is a Babylon.js scene (left-handed, y up); the table frame here is
right-handed with z up, so y and z swap, which mirrors the coordinates back to the physical die. Each die's face
values come from the package's own `colliderFaceMap` (collider triangle -> value), the same table its dice roller
uses to read a roll, so the value a face shows on the texture and the value we label cannot disagree.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import cv2
import numpy as np

DATA_DIR = Path(__file__).parent / "data" / "solids"
MESH_FILE = "dice_box_meshes.npz"
NUMERALS_FILE = "dice_box_numerals.png"
THEME = Path("dist/assets/themes/default")
DICE = ("d6", "d20")


class AssetError(RuntimeError):
    """The dice-box package is missing a file or field this builder reads; the message says which."""


def _mesh(scene: dict, name: str, source: Path) -> dict:
    for mesh in scene.get("meshes", []):
        if mesh.get("name") == name:
            return mesh
    raise AssetError(f"{source}: no mesh named '{name}' in 'meshes'")


def _to_table_frame(values: list[float]) -> np.ndarray:
    """Babylon (x, y up, z) left-handed -> (x, y, z up) right-handed: swapping two axes flips handedness."""
    xyz = np.asarray(values, np.float64).reshape(-1, 3)
    return xyz[:, [0, 2, 1]]


def _outward(vertices: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reorder each triangle counter-clockwise seen from outside (dice are convex and centred on the origin)."""
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    flip = np.einsum("ij,ij->i", normals, (a + b + c) / 3.0) < 0
    fixed = triangles.copy()
    fixed[flip] = fixed[flip][:, [0, 2, 1]]
    normals[flip] *= -1
    return fixed, normals / np.linalg.norm(normals, axis=1, keepdims=True)


def _face_polygon(points: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """Distinct collider corners of one face ordered counter-clockwise around its normal."""
    unique = np.unique(np.round(points, 5), axis=0)
    centre = unique.mean(axis=0)
    e1 = unique[0] - centre
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    angles = np.arctan2((unique - centre) @ e2, (unique - centre) @ e1)
    return unique[np.argsort(angles)]


def _render_face_normal(collider_normal: np.ndarray, tri_normals: np.ndarray, tri_areas: np.ndarray) -> np.ndarray:
    """Area-weighted normal of the render triangles lying on the collider face's side of the die."""
    on_face = tri_normals @ collider_normal > 0.995
    if not on_face.any():
        raise AssetError(f"no render triangles face the collider normal {collider_normal.round(3).tolist()}")
    normal = (tri_normals[on_face] * tri_areas[on_face, None]).sum(axis=0)
    return normal / np.linalg.norm(normal)


def convert_die(scene: dict, name: str, source: Path) -> dict[str, np.ndarray]:
    """One die as arrays scaled so the die rests 1.0 tall (opposite faces 1.0 apart)."""
    render, collider = _mesh(scene, name, source), _mesh(scene, f"{name}_collider", source)
    face_map = scene.get("colliderFaceMap", {}).get(name)
    if not face_map:
        raise AssetError(f"{source}: 'colliderFaceMap' has no entry for '{name}'")
    vertices = _to_table_frame(render["positions"])
    centre = (vertices.max(axis=0) + vertices.min(axis=0)) / 2.0
    vertices -= centre
    triangles, tri_normals = _outward(vertices, np.asarray(render["indices"], np.int64).reshape(-1, 3))
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    tri_areas = np.linalg.norm(np.cross(b - a, c - a), axis=1)
    uv = np.asarray(render["uvs"], np.float64).reshape(-1, 2)
    uv[:, 1] = 1.0 - uv[:, 1]  # Babylon samples textures bottom-up; store image-row fractions
    normals = _to_table_frame(render["normals"])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)

    c_vertices = _to_table_frame(collider["positions"]) - centre
    c_triangles, c_normals = _outward(c_vertices, np.asarray(collider["indices"], np.int64).reshape(-1, 3))
    by_value: dict[int, list[int]] = {}
    for tri, value in face_map.items():
        by_value.setdefault(int(value), []).append(int(tri))
    values = sorted(by_value)
    face_normals = np.array([_render_face_normal(c_normals[by_value[v][0]], tri_normals, tri_areas) for v in values])
    # Collider faces sit a hair inside the render mesh and a little askew: project each polygon onto the render
    # face's own plane, so the labelled top face lies exactly on the pixels that show the number.
    polygons = []
    for value, normal in zip(values, face_normals, strict=True):
        corners = c_vertices[c_triangles[by_value[value]].ravel()]
        plane = float((vertices @ normal).max())
        polygon = _face_polygon(corners, normal)
        polygons.append(polygon + normal * (plane - polygon @ normal)[:, None])
    height = float(2.0 * (vertices @ face_normals[0]).max())
    return {
        f"{name}_vertices": (vertices / height).astype(np.float32),
        f"{name}_triangles": triangles.astype(np.int32),
        f"{name}_uv": uv.astype(np.float32),
        f"{name}_normals": normals.astype(np.float32),
        f"{name}_face_normals": face_normals.astype(np.float32),
        f"{name}_face_values": np.array(values, np.int32),
        f"{name}_face_polygons": (np.stack(polygons) / height).astype(np.float32),
    }


def build(package: Path, out_dir: Path = DATA_DIR) -> list[Path]:
    """Write the meshes (.npz), the numeral ink mask (the texture's alpha; body and ink colours are chosen at render
    time) and the licence + notice; returns the files written."""
    theme = package / THEME
    scene_file, texture_file = theme / "default.json", theme / "diffuse-light.png"
    for needed in (scene_file, texture_file, package / "LICENSE", package / "package.json"):
        if not needed.is_file():
            raise AssetError(f"{needed} not found: pass the unpacked @3d-dice/dice-box 'package' folder")
    scene = json.loads(scene_file.read_text())
    texture = cv2.imread(str(texture_file), cv2.IMREAD_UNCHANGED)
    if texture is None or texture.ndim != 3 or texture.shape[2] != 4:
        raise AssetError(f"{texture_file}: expected an RGBA PNG whose alpha holds the numerals")
    arrays: dict[str, np.ndarray] = {}
    for name in DICE:
        arrays.update(convert_die(scene, name, scene_file))
    out_dir.mkdir(parents=True, exist_ok=True)
    mesh_path, numerals_path = out_dir / MESH_FILE, out_dir / NUMERALS_FILE
    np.savez_compressed(mesh_path, **arrays)
    cv2.imwrite(str(numerals_path), texture[:, :, 3], [cv2.IMWRITE_PNG_COMPRESSION, 9])
    licence = out_dir / "LICENSE-dice-box.txt"
    shutil.copyfile(package / "LICENSE", licence)
    meta = json.loads((package / "package.json").read_text())
    notice = out_dir / "NOTICE"
    notice.write_text(
        f"{MESH_FILE} and {NUMERALS_FILE} are converted from the npm package {meta['name']}@{meta['version']}\n"
        f"({meta.get('homepage', '')}), files {THEME}/default.json (d6, d20 meshes and colliderFaceMap) and\n"
        f"{THEME}/diffuse-light.png (alpha channel), licensed MIT: see LICENSE-dice-box.txt.\n"
        "Converted by vision/synth/solids_assets.py (axes to z-up right-handed, scaled to a resting height of 1).\n"
    )
    return [mesh_path, numerals_path, licence, notice]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("package", type=Path, help="unpacked @3d-dice/dice-box folder (the tarball's 'package')")
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    for path in build(args.package, args.out):
        print(f"{path}  {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
