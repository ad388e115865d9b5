"""Catalogue (agents, artifacts, missions) and scenario files: JSON data, validated on load.

Why data and not code: the rules summary names the icon families but gives no card texts, agent abilities,
mission requirements or cycle-track numbers. The starter set shipped here is made up (marked
`"source": "made up"`), so a table can replace it with its real cards without touching the engine. The
schemas are documented in CATALOGUE.md. Every problem is reported as `CatalogueError` naming the file, the
entry and the field at fault, e.g. ``catalogue.json: artifacts[3] (A04): effect.kind: expected one of ...``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from games.core import GameError
from games.the_loop.eras import CODES, COUNT

DATA = Path(__file__).parent / "data"
DEFAULT_CATALOGUE = DATA / "catalogue.json"
SCENARIOS = DATA / "scenarios"

DIMENSIONS = ("spiral", "star", "stripe", "black hole")
ELEMENTARY = ("spiral", "star", "stripe")
SLOT_COLOURS = ("green", "red")
DIFFICULTIES = ("easy", "normal", "hard")
STARTING_ARTIFACTS = 6  # each agent's deck of six unique starting Artifacts (rules summary)
TRACK_POSITIONS = 7  # Faux cards per cycle (rules summary)
CYCLES = 3  # (rules summary)

# effect kind -> what its target is: "era", "card" (in hand), "clone", "artifact" (available), or None
EFFECT_TARGETS: dict[str, str | None] = {
    "energy": "era",
    "rift": "era",
    "move": "era",
    "draw": None,
    "discard": "card",
    "reveal": None,
    "acquire": "artifact",
    "destroy_artifact": "card",
    "push": "clone",
    "pull": "clone",
    "carry": "clone",
    "destroy_clone": "clone",
}
MAX_RANGE = 3


class CatalogueError(GameError):
    """A catalogue or scenario file that cannot be used; the message names file, entry and field."""


@dataclass(frozen=True)
class Effect:
    """One effect primitive: `amount` cubes/cards (1 for clone effects), `range` Eras away from the agent."""

    kind: str
    amount: int = 1
    range: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "amount": self.amount, "range": self.range}


@dataclass(frozen=True)
class Artifact:
    code: str
    name: str
    era: int  # Origin Era
    dimension: str
    effect: Effect
    text: str


@dataclass(frozen=True)
class Agent:
    code: str
    name: str
    start_era: int
    ability: Effect
    ability_text: str
    artifacts: tuple[str, ...]


@dataclass(frozen=True)
class Mission:
    code: str
    name: str
    slots: tuple[str, ...]  # "green" / "red" progress cubes needed


@dataclass(frozen=True)
class Catalogue:
    path: str
    agents: tuple[Agent, ...]
    artifacts: dict[str, Artifact]
    missions: dict[str, Mission]

    @property
    def huge_deck(self) -> tuple[str, ...]:
        """Every artifact that is nobody's starting artifact, in catalogue order."""
        starting = {code for agent in self.agents for code in agent.artifacts}
        return tuple(code for code in self.artifacts if code not in starting)

    def agent(self, code: str) -> Agent:
        return next(a for a in self.agents if a.code == code)


@dataclass(frozen=True)
class Scenario:
    path: str
    name: str
    title: str
    foo_era: int
    energy_per_era: int
    rifts_per_era: int
    setup_artifacts: int
    landing: tuple[float, float, float]  # previous Era, Dr. Foo's Era, next Era
    clone_offsets: tuple[int, int, int, int]
    track: dict[str, dict[str, tuple[tuple[int, ...], ...]]]  # difficulty -> clones/artifacts -> cycle -> pos

    def track_value(self, difficulty: str, what: str, cycle: int, position: int) -> int:
        """Clones or artifacts for 1-based `cycle` and 0-based `position` on the cycle track."""
        return self.track[difficulty][what][cycle - 1][position]


# ----- reading -------------------------------------------------------------------------------------------------
class _Where:
    """Builds the 'file: entry: field' prefix of error messages."""

    def __init__(self, file: str, entry: str = "") -> None:
        self.file = file
        self.entry = entry

    def at(self, entry: str) -> _Where:
        return _Where(self.file, entry)

    def fail(self, field: str, problem: str) -> CatalogueError:
        entry = f" {self.entry}:" if self.entry else ""
        return CatalogueError(f"{self.file}:{entry} {field}: {problem}")


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogueError(f"{path.name}: cannot be read ({err.strerror or err})") from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise CatalogueError(f"{path.name}: not valid JSON (line {err.lineno}: {err.msg})") from err


def _get(data: Any, key: str, kind: type | tuple[type, ...], where: _Where, field: str = "") -> Any:
    name = f"{field}.{key}" if field else key
    if not isinstance(data, dict):
        raise where.fail(field or "entry", f"expected an object, got {type(data).__name__}")
    if key not in data:
        raise where.fail(name, "missing")
    value = data[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kind):
        expected = " or ".join(k.__name__ for k in kinds)
        raise where.fail(name, f"expected {expected}, got {type(value).__name__}")
    return value


def _int(data: Any, key: str, low: int, high: int, where: _Where, field: str = "") -> int:
    value = _get(data, key, int, where, field)
    if not low <= value <= high:
        raise where.fail(f"{field}.{key}" if field else key, f"expected {low}-{high}, got {value}")
    return value


def _era(data: Any, key: str, where: _Where) -> int:
    value = _get(data, key, str, where)
    if value not in CODES:
        raise where.fail(key, f"expected an Era code ({', '.join(CODES)}), got '{value}'")
    return CODES.index(value)


def _effect(data: Any, key: str, where: _Where, parent: str = "") -> Effect:
    raw = _get(data, key, dict, where, parent)
    key = f"{parent}.{key}" if parent else key
    kind = _get(raw, "kind", str, where, key)
    if kind not in EFFECT_TARGETS:
        raise where.fail(f"{key}.kind", f"expected one of {', '.join(EFFECT_TARGETS)}, got '{kind}'")
    amount = _int(raw, "amount", 1, 5, where, key) if "amount" in raw else 1
    reach = _int(raw, "range", 0, MAX_RANGE, where, key) if "range" in raw else 0
    if kind == "move" and reach < 1:
        raise where.fail(f"{key}.range", "a move effect needs a range of at least 1")
    return Effect(kind, amount, reach)


def _list(data: Any, key: str, where: _Where) -> list[Any]:
    return _get(data, key, list, where)


def _unique_code(entry: Any, seen: set[str], where: _Where) -> str:
    code = _get(entry, "code", str, where)
    if not code or not code.isascii() or not code.isalnum() or code.lower() in seen:
        raise where.fail("code", f"expected a unique alphanumeric code, got '{code}'")
    seen.add(code.lower())
    return code


# ----- catalogue -------------------------------------------------------------------------------------------------
@lru_cache(maxsize=16)
def load_catalogue(path: str | None = None) -> Catalogue:
    """Load and validate a catalogue file (default: the shipped starter set). Cached per path."""
    file = Path(path) if path else DEFAULT_CATALOGUE
    data = _read(file)
    where = _Where(file.name)
    if not isinstance(data, dict):
        raise where.fail("top level", f"expected an object, got {type(data).__name__}")
    artifacts: dict[str, Artifact] = {}
    seen: set[str] = set()
    for i, raw in enumerate(_list(data, "artifacts", where)):
        w = where.at(f"artifacts[{i}]")
        code = _unique_code(raw, seen, w)
        w = where.at(f"artifacts[{i}] ({code})")
        if not code.startswith("A"):
            raise w.fail("code", f"artifact codes start with 'A', got '{code}'")
        dimension = _get(raw, "dimension", str, w)
        if dimension not in DIMENSIONS:
            raise w.fail("dimension", f"expected one of {', '.join(DIMENSIONS)}, got '{dimension}'")
        artifacts[code] = Artifact(
            code=code,
            name=_get(raw, "name", str, w),
            era=_era(raw, "era", w),
            dimension=dimension,
            effect=_effect(raw, "effect", w),
            text=_get(raw, "text", str, w),
        )
    agents = _agents(data, artifacts, where)
    missions: dict[str, Mission] = {}
    for i, raw in enumerate(_list(data, "missions", where)):
        w = where.at(f"missions[{i}]")
        code = _unique_code(raw, seen, w)
        w = where.at(f"missions[{i}] ({code})")
        slots = _list(raw, "slots", w)
        if not slots or any(s not in SLOT_COLOURS for s in slots) or len(slots) > 6:
            raise w.fail("slots", f"expected 1-6 of {', '.join(SLOT_COLOURS)}, got {slots!r}")
        missions[code] = Mission(code, _get(raw, "name", str, w), tuple(slots))
    if len(missions) < COUNT:
        raise where.fail("missions", f"expected at least {COUNT} (one tile per Era), got {len(missions)}")
    catalogue = Catalogue(str(file), agents, artifacts, missions)
    if not catalogue.huge_deck:
        raise where.fail("artifacts", "the Huge Deck is empty: every artifact is a starting artifact")
    return catalogue


def _agents(data: Any, artifacts: dict[str, Artifact], where: _Where) -> tuple[Agent, ...]:
    agents: list[Agent] = []
    seen: set[str] = set()
    owned: set[str] = set()
    for i, raw in enumerate(_list(data, "agents", where)):
        w = where.at(f"agents[{i}]")
        code = _unique_code(raw, seen, w)
        w = where.at(f"agents[{i}] ({code})")
        deck = _list(raw, "artifacts", w)
        if len(deck) != STARTING_ARTIFACTS or len(set(map(str, deck))) != STARTING_ARTIFACTS:
            raise w.fail("artifacts", f"expected {STARTING_ARTIFACTS} different artifact codes, got {deck!r}")
        for card in deck:
            if card not in artifacts:
                raise w.fail("artifacts", f"unknown artifact '{card}'")
            if card in owned:
                raise w.fail("artifacts", f"artifact '{card}' is already another agent's starting artifact")
            owned.add(card)
        ability = _get(raw, "ability", dict, w)
        agents.append(
            Agent(
                code=code,
                name=_get(raw, "name", str, w),
                start_era=_era(raw, "start_era", w),
                ability=_effect(ability, "effect", w, "ability"),
                ability_text=_get(ability, "text", str, w, "ability"),
                artifacts=tuple(deck),
            )
        )
    if len(agents) < 2:
        raise where.fail("agents", f"expected at least 2 agents, got {len(agents)}")
    return tuple(agents)


# ----- scenarios -------------------------------------------------------------------------------------------------
def scenario_path(name: str) -> Path:
    """A shipped scenario name ("basic") or a path to a scenario file."""
    shipped = SCENARIOS / f"{name}.json"
    if name.isidentifier() and shipped.exists():
        return shipped
    path = Path(name)
    if path.suffix == ".json" or path.exists():
        return path
    known = ", ".join(sorted(p.stem for p in SCENARIOS.glob("*.json")))
    raise CatalogueError(f"unknown scenario '{name}': expected one of {known} or a path to a scenario JSON file")


@lru_cache(maxsize=16)
def load_scenario(name: str = "basic") -> Scenario:
    """Load and validate a scenario file. Cached per name/path."""
    file = scenario_path(name)
    data = _read(file)
    where = _Where(file.name)
    if not isinstance(data, dict):
        raise where.fail("top level", f"expected an object, got {type(data).__name__}")
    setup = _get(data, "setup", dict, where)
    sw = where.at("setup")
    landing = _get(data, "landing", dict, where)
    lw = where.at("landing")
    probs = tuple(float(_get(landing, k, (int, float), lw)) for k in ("previous", "foo", "next"))
    if any(p < 0 for p in probs) or abs(sum(probs) - 1) > 1e-9:
        raise lw.fail("previous/foo/next", f"expected probabilities >= 0 summing to 1, got {list(probs)}")
    offsets = _list(data, "clone_offsets", where)
    if len(offsets) != 4 or any(isinstance(o, bool) or not isinstance(o, int) or not 1 <= o <= 6 for o in offsets):
        raise where.fail("clone_offsets", f"expected 4 whole numbers 1-6 (never the Paradox Era), got {offsets!r}")
    track = _track(_get(data, "track", dict, where), where)
    return Scenario(
        str(file),
        _get(data, "name", str, where),
        _get(data, "title", str, where),
        _era(setup, "foo_era", sw),
        _int(setup, "energy_per_era", 0, 4, sw),
        _int(setup, "rifts_per_era", 0, 3, sw),
        _int(setup, "artifacts", 0, 10, sw),
        (probs[0], probs[1], probs[2]),
        (offsets[0], offsets[1], offsets[2], offsets[3]),
        track,
    )


def _track(raw: dict[str, Any], where: _Where) -> dict[str, dict[str, tuple[tuple[int, ...], ...]]]:
    track: dict[str, dict[str, tuple[tuple[int, ...], ...]]] = {}
    for difficulty in DIFFICULTIES:
        level = _get(raw, difficulty, dict, where, "track")
        w = where.at(f"track.{difficulty}")
        track[difficulty] = {}
        for what in ("clones", "artifacts"):
            rows = _get(level, what, list, w)
            ok = len(rows) == CYCLES and all(
                isinstance(r, list)
                and len(r) == TRACK_POSITIONS
                and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 4 for n in r)
                for r in rows
            )
            if not ok:
                raise w.fail(what, f"expected {CYCLES} cycles of {TRACK_POSITIONS} whole numbers 0-4")
            track[difficulty][what] = tuple(tuple(r) for r in rows)
    return track
