"""The Loot the Loop planner (issue 23): plans between looks from the player's view only."""

from __future__ import annotations

import random
from collections import deque

import pytest

from games.loot_the_loop.engine import LootTheLoop
from games.loot_the_loop.planner import LOOK, PLANNER, UNTIMED, Planner, hint, plan, planner_policy, sure_escape
from games.loot_the_loop.solver import DOWN, EXIT, TRAP, WIN, Pos, is_lost, moves, position, step
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


@pytest.mark.slow  # 26 s: the default suite ran 10.2 minutes; CI runs the slow suite too
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


def best_way_out(pos: Pos) -> int:
    """The most cards any look-free route to the exit ends with, by visiting every position reachable from `pos`:
    the score never falls along a route, so the best route's score is the best escape from any of them."""
    seen, queue, best = {pos}, deque([pos]), -1
    while queue:
        here = queue.popleft()
        if is_lost(here):
            continue
        for move in moves(here):
            nxt = step(here, move) if move != LOOK else None
            if isinstance(nxt, float) and nxt >= WIN:
                best = max(best, int(nxt - WIN))
            elif isinstance(nxt, Pos) and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return best


def small_endgame(rng: random.Random) -> Pos:
    """All four jewels held, the exit face up in a short deck of trinkets, traps and face-down cards (the traps and
    the exit stay: the deck never runs short, as in a real game, where 13 of them do)."""
    deck = [EXIT, TRAP, TRAP] + [
        rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 10, TRAP, TRAP, DOWN]) for _ in range(rng.randint(4, 9))
    ]
    rng.shuffle(deck)
    notes = tuple(sorted(rng.choice(range(2, 11)) for _ in range(rng.randint(0, 2))))
    return Pos(tuple(deck), notes, 4, rng.randint(0, 20), (0,) * 13)


def test_the_sure_escape_is_the_route_out_that_nabs_the_most():
    rng = random.Random(5)
    routes = 0
    for _ in range(300):
        pos = small_endgame(rng)
        found = sure_escape(pos)
        best = best_way_out(pos)
        if best < 0:
            assert found is None
            continue
        assert found is not None
        path, score = found
        here: Pos | float = pos
        for move in path:
            assert isinstance(here, Pos) and move in moves(here) and move != LOOK
            here = step(here, move)
        assert here == WIN + score and score == best
        routes += 1
    assert routes > 100  # most of these endgames have a way out: the comparison was made


def test_a_sure_escape_is_played_out_for_its_trinkets():
    """Exploring by 4 escapes at once with 24 cards; marking the 4 first, the 6 lands on the 2, the 4 returned
    lands on itself, and the 6 on the exit: 26 cards."""
    pos = Pos((4, 6, TRAP, 2, EXIT), (), 4, 20, (0,) * 13)
    assert step(pos, ("explore", 4)) == WIN + 24
    path, value = plan(pos)
    assert path == [("mark", 0), ("explore", 6), ("return", 4), ("explore", 4), ("explore", 6)]
    assert value == WIN + 26 == WIN + best_way_out(pos)
    assert sure_escape(Pos((TRAP, 2, TRAP, EXIT, TRAP), (), 4, 20, (0,) * 13)) is None  # the 2 lands on a trap


@pytest.mark.slow  # about a minute of planning
def test_the_hint_on_a_sure_way_out_says_the_escape_is_certain_and_its_score():
    state, sure = reach_a_sure_escape()
    PLANNER.ahead.clear()
    advice = hint(state, 0, random.Random(0), UNTIMED)
    assert f"your escape is certain, with {sure} cards in your score pile" in advice.reason
    assert "chance" not in advice.reason


def reach_a_sure_escape() -> tuple[LootTheLoop, int]:
    """A planner game (the first of seeds 0-9 that gets there) at its first table where the plan is a sure way out
    (where a look promises more, the planner looks instead), and that way's score."""
    for seed in range(10):
        state, rng = started(seed), random.Random(seed)
        while not state.is_over:
            pos = position(state.view(0))
            sure = sure_escape(pos) if pos.aces == 4 else None
            if sure is not None and plan(pos)[1] == WIN + sure[1]:
                return state, sure[1]
            state.apply(planner_policy(state, 0, rng))
    raise AssertionError("no planner game of seeds 0-9 took a certain escape")
