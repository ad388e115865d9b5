"""Full-game synthetic videos: a rules engine and its policies play a game, and the vision side films it.

This is the only place that knows both sides: `vision.synth` must stay free of game rules, so each engine state
(`to_dict()["state"]`) is turned here into its game's plain table (ltl_table.TableState, loop_table.LoopTable,
bag_table.BagTable), laid out as cards, and each action into text. What the engine keeps as lists but a table
keeps as places lives here too, carried from state to state: Loot the Loop's note slots, Bag-O-Loot's collection
slots and which copy of a card is which. An action that a player carries out in several physical motions gets a
stage per motion (Loot the Loop: an explore moves the block, then the landed card is nabbed; LOOP: the play to
beat is pushed aside, the new play is laid in the centre, and a finished trick goes to its player; Bag-O-Loot: at
a new round every card is gathered into the deck, then the hands are dealt). Hidden information (hands) is not on
the table: held cards are carried in from the acting player's seat, whose hand reaches in from that side.

Games filmed: Loot the Loop (a deck directory with a joker), LOOP and Bag-O-Loot (a piece set of that game, such
as `vision.synth.components.generator("loop")(folder, design, 3.0)` renders).
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from games import registry
from games.core import FORMAT_VERSION, Action, GameState
from games.loop.engine import Play as LoopPlay
from games.play import choose
from vision.synth import bag_table, loop_table
from vision.synth.bag_table import Bag, BagTable, Stash, keep_identities
from vision.synth.camera import CARD_H_MM, CARD_W_MM
from vision.synth.deckdir import DeckError, load_deck
from vision.synth.loop_table import LoopTable, SeatCards, seat_angle
from vision.synth.ltl_table import TableState, extent_mm, layout
from vision.synth.pieces import PieceSet, PieceSetError, as_piece_set, load_piece_set
from vision.synth.video import FRAME_MARGIN_MM, STATES_FILE, GameStep, Layout, TableView, render_table_video

SUPPORTED_GAMES = ("loot-the-loop", "loop", "bag-o-loot")
DEFAULT_POLICY = {"loot-the-loop": "solver", "loop": "greedy", "bag-o-loot": "greedy"}
SIZE_CODE = {"loop": "1r", "bag-o-loot": "1"}  # the card whose printed size spaces a layout
ENGINE_JOKER = "JOKER"
STANDARD_CARD_MM = (CARD_W_MM, CARD_H_MM)


@dataclass(frozen=True)
class PlayedGame:
    initial: Layout
    steps: tuple[GameStep, ...]
    final_score: int  # the camera's player's (player 1)
    scores: tuple[int, ...]
    result: str  # the engine's result ('' if max_actions stopped the game early)
    finished: bool
    view: TableView


class Film(Protocol):
    """How one game's engine states become tables, stages and layouts (stateful: slots and identities carry on)."""

    def advance(self, core: dict[str, Any]) -> Any: ...

    def stages(self, before: Any, after: Any, action: Action, core: dict[str, Any]) -> tuple[Any, ...]: ...

    def layout(self, table: Any) -> Layout: ...

    def reach_from(self, player: int, core: dict[str, Any]) -> float: ...

    def view(self) -> TableView: ...


# ----------------------------------------------------------------------------------------------- Loot the Loop


def table_state(core: dict[str, Any], slots: tuple[str | None, ...]) -> TableState:
    """The engine's saved core (`to_dict()["state"]`) as a table; `slots` is where each note lay before, since
    the engine keeps notes as a list while on the table each note keeps its place until it is returned."""
    notes = [card if card in core["notes"] else None for card in slots]
    for card in core["notes"]:
        if card not in notes:
            notes[notes.index(None)] = card
    return TableState(
        deck=tuple(core["deck"]),
        deck_up=tuple(core["up"]),
        notes=tuple(notes),
        score=tuple(core["score"]),
        piles=tuple(tuple(p) for p in core["piles"]),
        piles_up=tuple(tuple(u) for u in core["piles_up"]),
    )


def _stages(before: TableState, after: TableState, action: str) -> tuple[TableState, ...]:
    """An explore that nabs: first the block goes under (the landed card shows on top), then it travels to the
    score pile."""
    if action.startswith("explore") and len(after.score) > len(before.score):
        landed = after.score[-1]
        rotated = TableState(
            deck=(landed, *after.deck),
            deck_up=(True, *after.deck_up),
            notes=after.notes,
            score=after.score[:-1],
        )
        return rotated, after
    return (after,)


class LtlFilm:
    def __init__(self, players: int, seed: int, card_mm: tuple[float, float]) -> None:
        self.seed = seed
        self.slots: tuple[str | None, ...] = (None, None, None)

    def advance(self, core: dict[str, Any]) -> TableState:
        table = table_state(core, self.slots)
        self.slots = table.notes
        return table

    def stages(self, before: TableState, after: TableState, action: Action, core: dict[str, Any]) -> tuple:
        return _stages(before, after, str(action))

    def layout(self, table: TableState) -> Layout:
        return layout(table, self.seed)

    def reach_from(self, player: int, core: dict[str, Any]) -> float:
        return 0.0

    def view(self) -> TableView:
        return TableView(extent_mm(FRAME_MARGIN_MM))


# ----------------------------------------------------------------------------------------------- LOOP


def _cards(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def loop_table_of(core: dict[str, Any]) -> LoopTable:
    """LOOP's engine core as a table. A seat's Rank card: RANK(seat + 1) on its Normal side until a round has
    ranked the seat, then the Rank card of that rank on its Loop side. The play to beat lies in the trick area,
    so it is taken off its player's rows."""
    seats = []
    trick, trick_seat = _cards(core["table"]), core["table_seat"]
    for s, rank in enumerate(core["rank_cards"]):
        revealed = _cards(core["revealed"][s])
        played = _cards(core["played"][s])
        if s == trick_seat:
            played = tuple(c for c in played if c not in trick)
        seats.append(
            SeatCards(
                rank=f"RANK{s + 1 if rank is None else rank}",
                rank_loop_side=rank is not None,
                set_aside=tuple(c for c in _cards(core["set_aside"][s]) if c not in revealed),
                revealed=revealed,
                played=played,
                hand=_cards(core["hands"][s]),
            )
        )
    return LoopTable(tuple(seats), _cards(core["aside"]), trick, trick_seat if trick else None)


def loop_play_stages(before: LoopTable, after: LoopTable, cards: Sequence[str], seat: int) -> tuple[LoopTable, ...]:
    """A play as its motions: the play to beat pushed aside to its player's rows, the new cards laid from the hand
    in the trick area, then (when the play ended the trick or the round) the table after it."""
    stages = []
    table = before
    if before.trick:
        owner = before.trick_seat or 0
        seats = list(before.seats)
        seats[owner] = replace(seats[owner], played=seats[owner].played + before.trick)
        table = replace(before, seats=tuple(seats), trick=(), trick_seat=None)
        stages.append(table)
    seats = list(table.seats)
    seats[seat] = replace(seats[seat], hand=tuple(c for c in seats[seat].hand if c not in cards))
    stages.append(replace(table, seats=tuple(seats), trick=tuple(cards), trick_seat=seat))
    if stages[-1] != after:
        stages.append(after)
    return tuple(stages)


class LoopFilm:
    def __init__(self, players: int, seed: int, card_mm: tuple[float, float]) -> None:
        self.players, self.seed, self.card_mm = players, seed, card_mm

    def advance(self, core: dict[str, Any]) -> LoopTable:
        return loop_table_of(core)

    def stages(self, before: LoopTable, after: LoopTable, action: Action, core: dict[str, Any]) -> tuple:
        if isinstance(action, LoopPlay):
            return loop_play_stages(before, after, action.cards, core["turn_seat"])
        return (after,)

    def layout(self, table: LoopTable) -> Layout:
        return loop_table.layout(table, self.seed, self.card_mm)

    def reach_from(self, player: int, core: dict[str, Any]) -> float:
        return seat_angle(core["seat_of"][player], self.players)

    def view(self) -> TableView:
        extent = loop_table.extent_mm(self.players, self.card_mm, FRAME_MARGIN_MM)
        return TableView(extent, loop_table.CAMERA_HEIGHT_MM, "loop")


# ----------------------------------------------------------------------------------------------- Bag-O-Loot


def _numbered(entry: str) -> tuple[int, tuple[str, ...]]:
    """A stash entry 'N: cards' (the engine's text form) as (number, cards)."""
    head, tail = entry.split(":", 1)
    return int(head), _cards(tail)


def collection_slots(before: Sequence[int | None], numbers: Sequence[int]) -> tuple[int | None, ...]:
    """Each open collection keeps its slot in the stash; a new one takes the first free slot."""
    slots: list[int | None] = [n if n in numbers else None for n in before]
    for n in numbers:
        if n in slots:
            continue
        if None in slots:
            slots[slots.index(None)] = n
        else:
            slots.append(n)
    while slots and slots[-1] is None:
        slots.pop()
    return tuple(slots)


class BagFilm:
    """Bag-O-Loot: card ids (which copy is which) and collection slots carry on from table to table."""

    def __init__(self, players: int, seed: int, card_mm: tuple[float, float]) -> None:
        self.players, self.seed, self.card_mm = players, seed, card_mm
        self.ids: dict[str, list[str]] = {}
        self.slots: list[tuple[int | None, ...]] = [()] * players
        self.round: int | None = None
        self.dealt = False  # the last table advanced to is a fresh deal

    def advance(self, core: dict[str, Any]) -> BagTable:
        zones: dict[str, list[str]] = {"deck": list(reversed(core["deck"].split())), "junk": core["junk"].split()}
        stashes = core["stashes"]
        for p in range(self.players):
            zones[f"hand {p}"] = core["hands"][p].split()
            for entry in stashes[p]["collections"]:
                number, cards = _numbered(entry)
                zones[f"collection {p} {number}"] = list(cards)
            for k, entry in enumerate(stashes[p]["bags"]):
                number, cards = _numbered(entry)
                zones[f"bag {p} {number} {k}"] = list(cards)
        self.ids = ids = keep_identities(zones, self.ids)
        self.dealt, self.round = core["round"] != self.round, core["round"]
        tables = []
        for p in range(self.players):
            numbers = [_numbered(entry)[0] for entry in stashes[p]["collections"]]
            self.slots[p] = collection_slots(self.slots[p], numbers)
            cols = tuple(None if n is None else tuple(ids[f"collection {p} {n}"]) for n in self.slots[p])
            bags = tuple(
                Bag(tuple(ids[f"bag {p} {_numbered(entry)[0]} {k}"]), bool(down))
                for k, (entry, down) in enumerate(zip(stashes[p]["bags"], stashes[p]["down"], strict=True))
            )
            tables.append(Stash(cols, bags))
        hands = tuple(tuple(ids[f"hand {p}"]) for p in range(self.players))
        return BagTable(tuple(ids["deck"]), tuple(ids["junk"]), tuple(tables), hands)

    def stages(self, before: BagTable, after: BagTable, action: Action, core: dict[str, Any]) -> tuple:
        """A new round: every card gathered into the deck (the hands' cards on top, to be dealt), then dealt."""
        if self.dealt:
            gathered = BagTable(
                deck=(*(c for hand in after.hands for c in hand), *after.deck),
                stashes=tuple(Stash() for _ in after.stashes),
                hands=tuple(() for _ in after.hands),
            )
            return gathered, after
        return (after,)

    def layout(self, table: BagTable) -> Layout:
        return bag_table.layout(table, self.seed, self.card_mm)

    def reach_from(self, player: int, core: dict[str, Any]) -> float:
        return seat_angle(player, self.players)

    def view(self) -> TableView:
        extent = bag_table.extent_mm(self.players, self.card_mm, FRAME_MARGIN_MM)
        return TableView(extent, bag_table.CAMERA_HEIGHT_MM, "bag-o-loot")


FILMS: Mapping[str, type] = {"loot-the-loop": LtlFilm, "loop": LoopFilm, "bag-o-loot": BagFilm}


# ----------------------------------------------------------------------------------------------- playing


def play_game(
    game: str,
    seed: int,
    policy: str | None = None,
    max_actions: int | None = None,
    players: int | None = None,
    card_mm: tuple[float, float] = STANDARD_CARD_MM,
) -> PlayedGame:
    """Play with the named policy at every seat (its RNG seeded by `seed` too, so the whole game repeats), and
    lay out the table before the game and after each stage of each action."""
    if game not in SUPPORTED_GAMES:
        raise ValueError(
            f"no table layout for '{game}' yet: synthetic game videos support {', '.join(SUPPORTED_GAMES)}"
        )
    state: GameState = registry.create(game, players=players, seed=seed)
    chooser = registry.info(game).policy(policy or DEFAULT_POLICY[game])
    policies = dict.fromkeys(range(state.num_players), chooser)
    rng = random.Random(seed)
    film: Film = FILMS[game](state.num_players, seed, card_mm)
    table = film.advance(state.to_dict()["state"])
    initial = film.layout(table)
    steps = []
    while not state.is_over and (max_actions is None or len(steps) < max_actions):
        player, action = choose(state, policies, rng)
        core = state.to_dict()["state"]
        state.apply(action)
        after = film.advance(state.to_dict()["state"])
        stages = tuple(film.layout(t) for t in film.stages(table, after, action, core))
        steps.append(GameStep(str(action), stages, film.reach_from(player, core)))
        table = after
    core = state.to_dict()["state"]
    result = str(core.get("result", "")) if game == "loot-the-loop" else ("over" if state.is_over else "")
    scores = tuple(state.scores())
    return PlayedGame(initial, tuple(steps), scores[0], scores, result, state.is_over, film.view())


def engine_info(game: str) -> dict[str, str]:
    """What produced the moves, so a data set can be traced back to the code that made it."""
    info = registry.info(game)
    commit = ""
    try:
        root = Path(__file__).resolve().parent.parent
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        commit = done.stdout.strip() if done.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        pass
    return {"engine": info.engine, "state_format": str(FORMAT_VERSION), "git_commit": commit}


def load_game_components(game: str, path: str | Path) -> PieceSet:
    """The pieces a game is filmed with, checked before anything is played (a wrong folder is the likeliest
    mistake): Loot the Loop takes a deck directory (or a piece set) with a joker; LOOP and Bag-O-Loot a piece set
    of their own game."""
    root = Path(path)
    if game == "loot-the-loop" and not (root / "pieces.json").is_file():
        deck = load_deck(root)
        if ENGINE_JOKER not in deck.codes:
            raise DeckError(
                f"deck '{deck.path}' has no JOKER.png: Loot the Loop needs one joker (the temple exit); "
                "use a deck directory with a joker"
            )
        return as_piece_set(deck)
    if not (root / "pieces.json").is_file():
        raise PieceSetError(
            f"{root}: no pieces.json; {game} is filmed with a piece set of its own game (render one with "
            f"vision.synth.components.generator('{game}')(folder, design, 3.0))"
        )
    pieces = load_piece_set(root)
    if pieces.game != game:
        raise PieceSetError(f"{root / 'pieces.json'}: 'game' is '{pieces.game}'; expected a {game} piece set")
    return pieces


def render_game_video(
    game: str = "loot-the-loop",
    seed: int = 0,
    deck_dir: str | Path = "",
    out_dir: str | Path = "synth_game",
    policy: str | None = None,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    max_actions: int | None = None,
    progress: bool = True,
    processes: int = 2,
    players: int | None = None,
) -> dict:
    """Play a game and film it: video.mp4 (H.264), actions.json, states.jsonl.gz (read it with
    `vision.synth.video.read_states`), meta.json in out_dir; returns the meta. `deck_dir` is a deck directory or
    piece set of the game; `policy` defaults to the game's best (solver or greedy)."""
    if game not in SUPPORTED_GAMES:
        raise ValueError(
            f"no table layout for '{game}' yet: synthetic game videos support {', '.join(SUPPORTED_GAMES)}"
        )
    pieces = load_game_components(game, deck_dir)
    card_mm = pieces.pieces[SIZE_CODE[game]].size_mm if game in SIZE_CODE else STANDARD_CARD_MM
    policy = policy or DEFAULT_POLICY[game]
    played = play_game(game, seed, policy, max_actions, players, card_mm)
    meta = {
        "game": game,
        "players": len(played.scores),
        "policy": policy,
        "actions": len(played.steps),
        "final_score": played.final_score,
        "scores": list(played.scores),
        "result": played.result,
        "finished": played.finished,
        **engine_info(game),
    }
    return render_table_video(
        played.initial, played.steps, pieces, out_dir, seed, fps, size, meta, processes, progress, view=played.view
    )


def bench_game_video(
    deck_dir: str | Path,
    out_dir: str | Path,
    seed: int = 3,
    max_actions: int | None = 10,
    fps: int = 30,
    game: str = "loot-the-loop",
) -> dict[str, float | str]:
    """Rendering speed at 1280x720 (the product's camera size): frames per second and seconds of video per second
    of rendering, on all cores given to the pool; and what a minute of it costs on disk, video and ground truth."""
    meta = render_game_video(game=game, seed=seed, deck_dir=deck_dir, out_dir=out_dir, fps=fps, max_actions=max_actions)
    minutes = meta["duration_s"] / 60.0
    out = Path(out_dir)
    return {
        "actions": meta["actions"],
        "frames": meta["frames"],
        "codec": meta["codec"],
        "render_s": meta["render_s"],
        "frames_per_s": round(meta["frames"] / meta["render_s"], 2),
        "video_s_per_s": round(meta["duration_s"] / meta["render_s"], 3),
        "video_mb_per_min": round((out / "video.mp4").stat().st_size / 1e6 / minutes, 2),
        "states_mb_per_min": round((out / STATES_FILE).stat().st_size / 1e6 / minutes, 2),
    }
