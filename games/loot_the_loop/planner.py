"""A Loot the Loop planner that plans from one look to the next.

Why this design: the only chance in the game is a look (it turns up cards nobody has seen); every explore, mark
and return has an outcome the player can work out from the table. So between two looks the player can plan
exactly. The planner searches every sequence of explores, marks and returns from here (breadth first, each
position once) and scores where it could end: a look (the expected value of what it turns up), an escape, or a
loss. Each look is first scored by the value of what the flip shows; then the most promising looks are scored
again one look deeper (what the best short sequence after the flip would reach), until the best look is one
scored deeply. The plan is then played without a second thought until the look: nothing between can surprise
it. Searching two actions ahead (the solver) cannot see a six-move route to a safe look.

What a position is worth is learnt (`games.loot_the_loop.value`): the chance to escape from it and the points
still to come, fit on the planner's own games. With the solver's hand-made heuristic instead (points, a bonus
per jewel, a little per note) the planner rated a position by what was already won and spent its last note
before a look; on seeds 0-99 it won 31 deals, with the learnt value about 80 (see the README for the bench).

Once the escape is certain (all four jewels held and a route to the face-up exit that needs no look: every step
of it is known), the rest of the game is a puzzle with no chance in it: how many trinkets can be nabbed on the
way out without losing the route. `sure_escape` answers it by a depth-first search over explores, marks and
returns, bounded by the trinkets still in view. The breadth-first plan saw only the first escape within its node
limit and took it; wins held about 24 points on seeds 0-149, 27 with this (the same deals won). A look may still
promise more than the sure route; the plan takes it when the value rates it higher.

It reads only the player's view (`solver.position`), as the solver does.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from games.core import GameState
from games.hints import DEFAULT_BUDGET, Budget, Hint
from games.loot_the_loop.engine import ACES_TO_ESCAPE
from games.loot_the_loop.solver import (
    DOWN,
    EXIT,
    WIN,
    Move,
    Pos,
    action_text,
    is_lost,
    look_outcomes,
    loss_value,
    moves,
    position,
    step,
    suggest,
)
from games.loot_the_loop.value import estimate, shipped

Value = Callable[[Pos], float]  # what a position the search stops at is worth

STEP = 0.01  # each action costs a little: of two equal plans, the shorter
NODES = 1500  # positions one plan may search
AFTER_LOOK_NODES = 40  # positions searched after each turn of a deeply scored look
DEEP_LOOKS = 12  # looks scored one look deeper per plan
SURE_NODES = 20000  # positions the sure escape's search may expand (about 0.2 s here); 100000 gained 0.2 points
LOOK: Move = ("look", 0)


@dataclass
class Ending:
    """Where a plan could end: `value`, whether it is final (`deep`), the position, the move that ends it."""

    value: float
    deep: bool
    node: Pos
    last: Move | None


@dataclass
class Tree:
    """The positions a search reached: each with its parent, the move from it, and its distance."""

    parents: dict[Pos, tuple[Pos | None, Move | None, int]] = field(default_factory=dict)
    endings: list[Ending] = field(default_factory=list)

    def path(self, node: Pos) -> list[Move]:
        out: list[Move] = []
        parent, move, _ = self.parents[node]
        while parent is not None and move is not None:
            out.append(move)
            node = parent
            parent, move, _ = self.parents[node]
        return out[::-1]


def search(pos: Pos, value: Value = estimate, limit: int = NODES, looks: bool = True) -> Tree:
    """Every position explores, marks and returns reach from `pos` (up to `limit`), with where each could end. A
    look is scored by what it can turn up (`shallow_look`) or, with `looks` off, by the value where it stands:
    the search after a look's turn is run for each way it turns out, and a shallow score for each of its own
    looks would cost a hundred times more."""
    tree = Tree({pos: (None, None, 0)})
    frontier = deque([pos])
    expanded = 0
    while frontier:
        here = frontier.popleft()
        d = tree.parents[here][2]
        if expanded >= limit:
            tree.endings.append(Ending(value(here) - STEP * d, True, here, None))
            continue
        expanded += 1
        if is_lost(here):
            tree.endings.append(Ending(loss_value(here), True, here, None))
            continue
        if here.deck[0] == DOWN and looks:
            tree.endings.append(Ending(shallow_look(here, value) - STEP * (d + 1), False, here, LOOK))
        elif here.deck[0] == DOWN:
            tree.endings.append(Ending(value(here) - STEP * d, True, here, LOOK))
        for move in moves(here):
            if move == LOOK:
                continue
            nxt = step(here, move)
            if isinstance(nxt, float):
                tree.endings.append(Ending(nxt - STEP * d, True, here, move))
            elif nxt not in tree.parents:
                tree.parents[nxt] = (here, move, d + 1)
                frontier.append(nxt)
    return tree


def shallow_look(pos: Pos, value: Value = estimate) -> float:
    """A look scored by the value of each way it can turn out. The value reads a face-up trinket in the deck by its
    kind, not its number (`value.features`), so it is asked once per kind of flip, not for each of the up to 144
    flips: most of the planner's time went there. Whether a flip loses still depends on the numbers."""
    total = 0.0
    valued: dict[tuple[int, int], float] = {}
    for p, nxt in look_outcomes(pos):
        if is_lost(nxt):
            total += p * loss_value(nxt)
            continue
        kinds = (_kind(nxt.deck[0]), _kind(nxt.deck[1]))
        if kinds not in valued:
            valued[kinds] = value(nxt)
        total += p * valued[kinds]
    return total


def _kind(card: int) -> int:
    return 2 if 2 <= card <= 10 else card


def deep_look(pos: Pos, value: Value = estimate) -> float:
    """A look scored by the best that a short search after each way it can turn out reaches."""
    return sum(p * best_after(nxt, value) for p, nxt in look_outcomes(pos))


def best_after(pos: Pos, value: Value = estimate) -> float:
    if is_lost(pos):
        return loss_value(pos)
    tree = search(pos, value, AFTER_LOOK_NODES, looks=False)
    return max((e.value for e in tree.endings), default=loss_value(pos))


def plan(
    pos: Pos, deep_looks: int = DEEP_LOOKS, seconds: float | None = None, value: Value = estimate
) -> tuple[list[Move], float]:
    """The moves to the best ending (a look last, or an escape, or the least bad loss) and its value; once the
    escape is certain, the sure route out that nabs the most (`sure_escape`) unless a look is worth more. With
    `seconds`, fewer looks are scored deeply if time runs out (at least one is): the same plan for the same table
    whenever the time is enough, as it is on the 2-core machine for the 1 s a hint is given."""
    started = time.perf_counter()
    sure = sure_escape(pos) if pos.aces >= ACES_TO_ESCAPE and EXIT in pos.deck else None
    path, best = _best_ending(pos, deep_looks, seconds, value, started)
    if sure is not None and WIN + sure[1] >= best:
        return sure[0], WIN + sure[1]
    return path, best


def _best_ending(
    pos: Pos, deep_looks: int, seconds: float | None, value: Value, started: float
) -> tuple[list[Move], float]:
    tree = search(pos, value)
    endings = tree.endings
    if not endings:  # only in a lost position: nothing to plan
        return moves(pos)[:1], loss_value(pos)
    for done in range(deep_looks):
        best = max(endings, key=lambda e: e.value)
        if best.deep or (seconds is not None and done and time.perf_counter() - started > seconds):
            break
        best.value = deep_look(best.node, value) - STEP * (tree.parents[best.node][2] + 1)
        best.deep = True
    best = max((e for e in endings if e.deep), key=lambda e: e.value, default=max(endings, key=lambda e: e.value))
    path = tree.path(best.node) + ([best.last] if best.last is not None else [])
    return path or moves(pos)[:1], best.value


def sure_escape(pos: Pos, limit: int = SURE_NODES) -> tuple[list[Move], int] | None:
    """The route to the exit without a look that ends with the most cards in the score pile, and that score; None
    when no such route is found within `limit` positions. Depth first, so that a long route is found at all (breadth
    first reaches every short sequence before any long one), each position valued once, a position already on the
    route counted as a dead end (marks and returns can circle), and a position skipped when even nabbing every
    trinket in view could not beat the best route found (`_ceiling`)."""
    best_at: dict[Pos, tuple[int, Move | None]] = {}
    on_route = {pos}
    floor = -1
    expanded = 1
    stack: list[_Frame] = [_Frame(pos, iter(_steps(pos)), None)]
    while stack:
        frame = stack[-1]
        child = None
        for move in frame.moves:
            nxt = step(frame.pos, move)
            if isinstance(nxt, float):
                escaped = _escape_score(nxt)
                got = -1 if escaped is None else escaped
            elif nxt in best_at:
                got = best_at[nxt][0]
            elif nxt in on_route or expanded >= limit or _ceiling(nxt) <= floor:
                got = -1
            else:
                child = _Frame(nxt, iter(_steps(nxt)), move)
                break
            if got > frame.best:
                frame.best, frame.move = got, move
        if child is not None:
            expanded += 1
            on_route.add(child.pos)
            stack.append(child)
            continue
        stack.pop()
        on_route.discard(frame.pos)
        best_at[frame.pos] = (frame.best, frame.move)
        floor = max(floor, frame.best)
        if stack and frame.best > stack[-1].best:
            stack[-1].best, stack[-1].move = frame.best, frame.came_by
    return _route(pos, best_at)


@dataclass
class _Frame:
    """A position on the search's current route: the moves not yet tried, the best score found below it."""

    pos: Pos
    moves: Iterator[Move]
    came_by: Move | None
    best: int = -1
    move: Move | None = None


def _steps(pos: Pos) -> list[Move]:
    return [m for m in moves(pos) if m != LOOK]


def _ceiling(pos: Pos) -> int:
    """The most cards a route from `pos` could end with: every jewel and trinket in view and in the notes nabbed."""
    return pos.aces + pos.trinkets + len(pos.notes) + sum(1 for t in pos.deck if 1 <= t <= 10)


def _route(pos: Pos, best_at: dict[Pos, tuple[int, Move | None]]) -> tuple[list[Move], int] | None:
    """The best route read back from the search, checked to end in an escape (a score taken from a position cut
    as a dead end on one route may not be reachable on another: such a route is not returned)."""
    if pos not in best_at or best_at[pos][0] < 0:
        return None
    path: list[Move] = []
    here: Pos | float = pos
    while isinstance(here, Pos) and here in best_at and len(path) <= len(best_at):
        move = best_at[here][1]
        if move is None:
            return None
        path.append(move)
        here = step(here, move)
    score = _escape_score(here)
    return None if score is None else (path, score)


def _escape_score(result: Pos | float) -> int | None:
    """The final score if `step`'s result is an escape (it returns `WIN` + the score); None for a loss or a table."""
    return int(result - WIN) if isinstance(result, float) and result >= WIN else None


class Planner:
    """Plays plans: a new plan only after a look, or when the table is not where the plan said it would be.

    The hint asks the same way: a position the last plan passes through gets the rest of that plan, so a player
    who follows the hints follows one plan instead of being sent back and forth between two nearly equal ones.
    """

    def __init__(self, deep_looks: int = DEEP_LOOKS, value: Value = estimate) -> None:
        self.deep_looks = deep_looks
        self.value = value
        self.ahead: dict[Pos, tuple[list[Move], float]] = {}

    def next_move(self, pos: Pos, seconds: float | None = None) -> tuple[Move, float, list[Move]]:
        """The move to play now, the plan's value, and the rest of the plan after it."""
        if pos not in self.ahead:
            self._plan(pos, seconds)
        path, value = self.ahead[pos]
        return path[0], value, path[1:]

    def _plan(self, pos: Pos, seconds: float | None) -> None:
        path, value = plan(pos, self.deep_looks, seconds, self.value)
        self.ahead = {}
        here: Pos | float = pos
        for i, move in enumerate(path):
            if not isinstance(here, Pos):
                break
            self.ahead[here] = (path[i:], value)
            if move == LOOK:
                break
            here = step(here, move)


UNTIMED = Budget(seconds=None)
PLANNER = Planner()  # one for the process: its cache is keyed by what the table shows, whichever game it is


def planner_policy(state: GameState, player: int, rng: random.Random) -> Any:
    """The registry's "planner" policy: the pile order from the solver, then the planner's moves, each plan in
    full (no time limit), so a seeded game replays exactly."""
    return state.parse_action(hint(state, player, rng, UNTIMED).action)


def hint(state: GameState, player: int, rng: random.Random, budget: Budget = DEFAULT_BUDGET) -> Hint:
    """The planner's next move with the plan it belongs to, planned within the budget's seconds (the stacking order
    at the start is the solver's, which takes milliseconds)."""
    view = state.view(player)
    if view["phase"] == "setup" or not view["legal"]:
        advice = suggest(view, rng)
        return Hint(advice.action, advice.reason, advice.value)
    pos = position(view)
    move, value, rest = PLANNER.next_move(pos, budget.seconds)
    sure = _ends_in_escape(pos, [move, *rest])
    if sure is not None:
        why = f"{reason(move, rest)}: your escape is certain, with {sure} cards in your score pile"
    else:
        chance = shipped().escape_chance(pos)
        why = f"{reason(move, rest)} (your chance to escape from here, as the planner's value rates it: {chance:.0%})"
    return Hint(action_text(move, view), why, round(value, 3))


def _ends_in_escape(pos: Pos, path: list[Move]) -> int | None:
    """The final score if `path` (no look in it) escapes; None otherwise."""
    here: Pos | float = pos
    for move in path:
        if not isinstance(here, Pos) or move == LOOK:
            return None
        here = step(here, move)
    return _escape_score(here)


def reason(move: Move, rest: list[Move]) -> str:
    steps = [_words(m) for m in (move, *rest)]
    if move == LOOK:
        return "look around now: of everything you can reach, this look is the safest and most promising"
    ends = "a look around" if rest and rest[-1] == LOOK else "the best ending in reach"
    return f"the first step of a plan of {len(steps)} ({', '.join(steps)}) that leads to {ends}"


def _words(move: Move) -> str:
    kind, n = move
    return {"look": "look", "mark": "mark"}.get(kind) or f"{kind} {n}"
