"""Checks every engine must pass after every action of random legal play (used by each game's tests)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from games.core import GameState, IllegalMove


def check_protocol(state: GameState) -> None:
    """Invariants of the shared protocol that hold in every state."""
    data = state.to_dict()
    assert json.loads(json.dumps(data)) == data, "to_dict must be JSON-safe"
    again = type(state).from_dict(data)
    assert again == state and again.to_dict() == data, "from_dict(to_dict(s)) must equal s"
    if not state.is_over:
        current = state.current_player
        assert current is not None
        legal = state.legal_actions(current)
        assert legal, "the current player of a running game must have a legal action"
        for action in state.legal_actions():
            assert state.parse_action(str(action)) == action, f"text form must parse back: {action}"
            assert state.violation(action) is None, f"listed action must be legal: {action}"
    else:
        assert state.legal_actions() == []
    for p in range(state.num_players):
        view = state.view(p)
        assert json.loads(json.dumps(view)) == view, "views must be JSON-safe"


def random_game(
    state: GameState,
    rng: random.Random,
    check_state: Callable[[GameState], None],
    max_steps: int = 5000,
    undo_every: int = 7,
) -> GameState:
    """Play random legal actions to the end, checking invariants and undo along the way."""
    check_protocol(state)
    check_state(state)
    steps = 0
    while not state.is_over and steps < max_steps:
        actors = state.actors()
        player = rng.choice(actors)
        actions = state.legal_actions(player)
        action = rng.choice(actions)
        before = state.to_dict()
        state.apply(action)
        check_state(state)
        if steps % undo_every == 0:
            state.undo()
            assert state.to_dict() == before, f"undo of {action} must restore the state exactly"
            state.apply(action)
        steps += 1
        if steps % 5 == 0:
            check_protocol(state)
    check_protocol(state)
    assert state.is_over, f"game not over after {max_steps} random actions"
    return state


def assert_illegal_unchanged(state: GameState, action: str, rule_part: str = "") -> IllegalMove:
    """Applying `action` must raise IllegalMove (mentioning `rule_part`) and leave the state untouched."""
    before = state.to_dict()
    try:
        state.apply(action)
    except IllegalMove as err:
        assert state.to_dict() == before, "an illegal move must not change the state"
        text = f"{err.rule} {err.reason}".lower()
        assert rule_part.lower() in text, f"expected '{rule_part}' in the message, got: {err}"
        return err
    raise AssertionError(f"'{action}' should be illegal here")
