"""The Loot the Loop planner (issue 23): plans between looks from the player's view only."""

from __future__ import annotations

import random

from games.loot_the_loop.engine import LootTheLoop
from games.loot_the_loop.planner import LOOK, PLANNER, UNTIMED, Planner, hint, plan, planner_policy
from games.loot_the_loop.solver import Pos, position, step
from games.play import play_out


def started(seed: int) -> LootTheLoop:
    """A game just stacked (the first seed from `seed` whose stacking does not lose at once)."""
    while True:
        state = LootTheLoop(seed=seed)
        state.apply("order 1 2 3")
        if not state.is_over:
            return state
        seed += 100


def test_a_plan_is_legal_and_ends_in_a_look_an_escape_or_the_best_loss():
    for seed in range(6):
        pos = position(started(seed).view(0))
        path, value = plan(pos)
        here: Pos | float = pos
        for move in path[:-1]:
            assert move != LOOK  # a plan stops at its look: what the look turns up is not known
            assert isinstance(here, Pos)
            here = step(here, move)
        assert path and isinstance(value, float)


def test_the_hint_ignores_the_face_down_cards():
    """Two tables that differ only in their face-down cards get the same hint."""
    state = started(4)
    for _ in range(6):
        state.apply(planner_policy(state, 0, random.Random(0)))
    other = state.clone()
    down = [i for i, up in enumerate(other.up) if not up]
    cards = [other.deck[i] for i in down]
    random.Random(1).shuffle(cards)
    for i, card in zip(down, cards, strict=True):
        other.deck[i] = card
    assert other.deck != state.deck
    # both planned afresh (the cache holds the plan the moves above followed, valued from where it was made), and
    # untimed: with the 1 s budget a loaded machine may score fewer looks deeply on one of the two calls
    PLANNER.ahead.clear()
    first = hint(state, 0, random.Random(0), UNTIMED)
    PLANNER.ahead.clear()  # planned afresh, not read back from the cache
    assert hint(other, 0, random.Random(0), UNTIMED) == first


def test_a_followed_plan_is_not_replanned_until_its_look():
    planner = Planner()
    pos = position(started(2).view(0))
    move, _, rest = planner.next_move(pos)
    here = pos
    for following in rest:
        if move == LOOK:
            break
        here = step(here, move)
        assert isinstance(here, Pos)
        move, _, _ = planner.next_move(here)
        assert move == following


def test_planner_games_end_and_replay_exactly():
    def play(seed: int) -> LootTheLoop:
        state = LootTheLoop(seed=seed)
        play_out(state, {0: planner_policy}, random.Random(seed))
        return state

    first = play(7)
    assert first.is_over and first == play(7)


def test_the_camera_page_hints_with_the_planner_on_the_table_it_reads():
    """The camera's table (unread cards as None) gets the planner's hint, as the manual page and `tabletop hint` do;
    a table whose notes are not read yet gets none."""
    from companion_ui.session import _tracked_hint

    state = started(7)
    view = state.view(0)
    known = {"phase": "play", "deck": view["deck"], "notes": view["notes"], "score_pile": view["score_pile"]}
    PLANNER.ahead.clear()
    planned = _tracked_hint(known)  # planned from the camera's table, within the camera's budget
    assert state.is_legal(planned.split(":")[0])
    advice = hint(state, 0, random.Random(0))  # the same table asked again: the plan is kept
    assert planned == f"{advice.action}: {advice.reason}"
    assert _tracked_hint({**known, "notes": ["?"]}) == "" and _tracked_hint({**known, "phase": "setup"}) == ""
