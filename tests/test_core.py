"""The shared protocol's guarantees, checked on a tiny game defined here (so a failure points at the core)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.core import (
    JSON,
    Action,
    BadAction,
    BadState,
    Event,
    GameOver,
    GameState,
    NothingToUndo,
    Violation,
    chance_rng,
    parse_seat,
    plural,
    require,
)
from tests.invariants import assert_illegal_unchanged, check_protocol, random_game


@dataclass(frozen=True)
class Take(Action):
    n: int

    def __str__(self) -> str:
        return f"take {self.n}"


@dataclass(frozen=True)
class Took(Event):
    player: int
    n: int

    @property
    def text(self) -> str:
        return f"Player {self.player + 1} takes {self.n}."


class Race(GameState):
    """Players alternately take 1-3 from a pile whose size is drawn by chance; taking the last one wins."""

    name = "race"

    def __init__(self, players: int, seed: int, explode_on: int = -1) -> None:
        super().__init__(players, seed, {"explode_on": explode_on})
        self.pile = self.chance().randint(10, 20)
        self.turn = 0
        self.taken = [0] * players
        self.winner: int | None = None

    @property
    def current_player(self) -> int | None:
        return None if self.is_over else self.turn

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def legal_actions(self, player: int | None = None) -> list[Action]:
        if self.is_over or player not in (None, self.turn):
            return []
        return [Take(n) for n in (1, 2, 3) if n <= self.pile]

    def _violation(self, action: Action) -> Violation | None:
        if not isinstance(action, Take):
            return Violation("actions", "only 'take N' exists")
        if not 1 <= action.n <= 3:
            return Violation("take 1-3", f"you may take 1, 2 or 3, not {action.n}")
        if action.n > self.pile:
            return Violation("pile size", f"only {self.pile} left")
        return None

    def _do(self, action: Action) -> list[Event]:
        assert isinstance(action, Take)
        self.pile -= action.n
        self.taken[self.turn] += action.n
        if action.n == self.options["explode_on"]:
            raise RuntimeError("simulated crash half-way through a move")
        events: list[Event] = [Took(self.turn, action.n)]
        if self.pile == 0:
            self.winner = self.turn
            events.append(GameOver((self.turn,), tuple(self.scores())))
        else:
            self.turn = (self.turn + 1) % self.num_players
        self.chance()  # a chance draw per move, so undo must rewind draws
        return events

    def _core(self) -> JSON:
        return {"pile": self.pile, "turn": self.turn, "taken": list(self.taken), "winner": self.winner}

    def _load(self, core: JSON) -> None:
        self.pile = require(core, "pile", int, "state.state")
        self.turn = require(core, "turn", int, "state.state")
        self.taken = list(require(core, "taken", list, "state.state"))
        self.winner = core.get("winner")

    def scores(self) -> list[int]:
        return list(self.taken)

    def view(self, player: int | None) -> JSON:
        return self._core()

    @classmethod
    def parse_action(cls, text: str) -> Action:
        parts = text.split()
        if len(parts) != 2 or parts[0] != "take" or not parts[1].isdigit():
            raise BadAction(f"'{text}': expected 'take N'")
        return Take(int(parts[1]))


def test_same_seed_same_game_and_different_seeds_differ() -> None:
    piles = {Race(2, seed).pile for seed in range(30)}
    assert len(piles) > 3
    assert Race(2, 5) == Race(2, 5)


def test_illegal_move_names_rule_and_changes_nothing() -> None:
    state = Race(2, 1)
    err = assert_illegal_unchanged(state, "take 4", "take 1-3")
    assert "take 4" in str(err)


def test_unparseable_action_is_bad_action() -> None:
    with pytest.raises(BadAction, match="expected 'take N'"):
        Race(2, 1).apply("grab everything")


def test_crash_inside_a_move_restores_the_state() -> None:
    state = Race(2, 1, explode_on=2)
    before = state.to_dict()
    with pytest.raises(RuntimeError):
        state.apply("take 2")
    assert state.to_dict() == before
    assert state.history_length == 0


def test_undo_restores_state_and_chance() -> None:
    state = Race(2, 3)
    start = state.to_dict()
    state.apply("take 1")
    after_one = state.to_dict()
    state.apply("take 2")
    state.undo()
    assert state.to_dict() == after_one
    state.undo()
    assert state.to_dict() == start
    with pytest.raises(NothingToUndo):
        state.undo()


def test_undo_survives_a_save_and_load() -> None:
    state = Race(2, 3)
    state.apply("take 1")
    state.apply("take 3")
    loaded = Race.from_dict(state.to_dict())
    loaded.undo()
    state.undo()
    assert loaded == state


def test_no_actions_after_game_over() -> None:
    state = Race(1, 0)
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    assert state.current_player is None and state.legal_actions() == [] and state.actors() == []
    assert_illegal_unchanged(state, "take 1", "game is over")
    assert state.winners() == [0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("seed"), "missing field 'seed'"),
        (lambda d: d.update(players="two"), "state.players: expected int, got str"),
        (lambda d: d.update(game="chess"), "expected 'race', got 'chess'"),
        (lambda d: d.update(format=99), "state.format: expected 1"),
        (lambda d: d["state"].pop("pile"), "missing field 'pile'"),
        (lambda d: d.update(history=['{"core": {}}']), "state.history[0]: missing field 'chance_draws'"),
        (lambda d: d.update(history=[{"core": {}}]), "state.history[0]: expected a JSON string"),
        (lambda d: d.update(history=["{oops"]), "state.history[0]: not valid JSON"),
    ],
)
def test_from_dict_names_the_bad_field(edit, message: str) -> None:
    data = Race(2, 1).to_dict()
    edit(data)
    with pytest.raises(BadState, match=re.escape(message)):
        Race.from_dict(data)


def test_require_rejects_bool_for_int() -> None:
    with pytest.raises(BadState, match="expected int, got bool"):
        require({"n": True}, "n", int, "x")


def test_chance_rng_is_a_pure_function_of_game_seed_and_draw() -> None:
    assert chance_rng("g", 1, 2).random() == chance_rng("g", 1, 2).random()
    assert chance_rng("g", 1, 2).random() != chance_rng("g", 1, 3).random()
    assert chance_rng("g", 1, 2).random() != chance_rng("h", 1, 2).random()


def test_events_serialise_with_their_sentence() -> None:
    over = GameOver((0, 2), (5, 1, 5), "Time ran out")
    data = over.to_dict()
    assert data == {
        "type": "GameOver",
        "winners": [0, 2],
        "scores": [5, 1, 5],
        "reason": "Time ran out",
        "text": over.text,
    }
    assert "Player 1 and Player 3 share the win" in over.text


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(1, 4))
def test_random_games_keep_the_protocol(seed: int, players: int) -> None:
    state = random_game(Race(players, seed), random.Random(seed), lambda s: None, undo_every=3)
    check_protocol(state)
    assert sum(state.scores()) == Race(players, seed).pile


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("chess", {}, "unknown game 'chess'"),
        ("loop", {"players": 5}, "players must be 2-4, got 5"),
        ("loot-the-loop", {"players": 2}, "players must be 1-1"),
        ("bag-o-loot", {"colour": "red"}, "unknown option(s) colour"),
    ],
)
def test_create_refuses_bad_requests_clearly(name: str, kwargs: dict, message: str) -> None:
    with pytest.raises(games.GameError, match=re.escape(message)):
        games.create(name, **kwargs)


def test_load_refuses_an_unknown_game() -> None:
    with pytest.raises(BadState, match=r"state\.game: expected one of"):
        games.load({"game": "chess"})


@pytest.mark.parametrize(("word", "expected"), [("1", 0), ("4", 3), ("12", 11)])
def test_parse_seat_turns_typed_numbers_into_players(word: str, expected: int) -> None:
    assert parse_seat(word, f"holdup {word}") == expected


@pytest.mark.parametrize("word", ["0", "-1", "two", "", "²", "1.5"])
def test_parse_seat_refuses_what_is_not_a_player_number(word: str) -> None:
    with pytest.raises(BadAction, match=re.escape(f"'holdup {word}': expected a player number (1, 2, ...), got")):
        parse_seat(word, f"holdup {word}")


def test_plural_reads_naturally() -> None:
    assert [plural(n, "card") for n in (0, 1, 2)] == ["0 cards", "1 card", "2 cards"]


def test_force_carries_out_a_move_the_rules_forbid_and_undo_takes_it_back():
    from games.core import IllegalMove
    from games.loot_the_loop.engine import LootTheLoop

    state = LootTheLoop(seed=3)
    state.apply(state.legal_actions()[0])
    illegal = next(f"explore {n}" for n in range(2, 11) if not state.is_legal(f"explore {n}"))
    before = state.to_dict()["state"]
    with pytest.raises(IllegalMove):
        state.apply(illegal)
    assert state.to_dict()["state"] == before
    state.force(illegal)
    assert state.to_dict()["state"] != before
    state.undo()
    assert state.to_dict()["state"] == before


@pytest.mark.parametrize("name", sorted(games.GAMES))
def test_saved_dicts_share_nothing_with_the_live_state(name: str) -> None:
    """`fresh_core` games skip the deep copies: what `to_dict` hands out and what `from_dict` took must still be
    the caller's to change without touching the state."""
    state, rng = games.create(name, seed=3), random.Random(3)
    for _ in range(6):  # a few moves in, so zones hold something
        if state.is_over:
            break
        state.apply(rng.choice(state.legal_actions(state.actors()[0])))
    reference = json.dumps(state.to_dict(), sort_keys=True)
    handed = state.to_dict()
    loaded = type(state).from_dict(handed)
    _scribble(handed["state"])
    assert json.dumps(state.to_dict(), sort_keys=True) == reference
    assert json.dumps(loaded.to_dict(), sort_keys=True) == reference


def _scribble(data: object) -> None:
    """Change every list and dict inside `data` in place."""
    if isinstance(data, list):
        for item in data:
            _scribble(item)
        data.append("scribbled")
    elif isinstance(data, dict):
        for value in list(data.values()):
            _scribble(value)
        data["scribbled"] = True
