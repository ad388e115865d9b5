"""A Loot the Loop solver that plays only from what the player may see.

Why this design: the only randomness a player faces is what a look around turns up. Explores, marks and returns
have outcomes fully determined by the visible table (landing on a face-down card does nothing, whatever it is).
So the game is a one-player expectimax problem whose chance nodes are looks, and every face-down card is, for
the player, a uniform draw from the unseen cards. The solver searches a few actions deep, treating a look as a
chance node over card *types* (trap, jewel, exit, trinket 2..10: suits never matter), and scores the leaves with
a heuristic that values jewels far above trinkets and being alive above being lost. It never reads the hidden
deck: its input is `state.view(player)` (face-up cards, counts, the unseen set), so two tables that differ only
in their face-down cards get the same suggestion.

Loops: mark/return cycles are legal and a depth-limited search can prefer circling to a risky move. Each action
costs a little (so the search prefers short lines), and once the public ``idle`` count (actions since the last
look or nab) reaches `IDLE_LIMIT`, the solver only looks around or explores - either makes irreversible
progress within three actions, so every solver game ends.

Escapes: a two-action search cannot see that three or four marks and returns would uncover a face-down card or
bring a trinket on top whose explore is safe, so at the idle limit it used to walk into a visible trap. Marks and
returns only move face-up cards, so their consequences are exact; when no look or safe explore is left, the solver
searches every mark/return sequence of up to `ESCAPE_DEPTH` actions for the best position that has one. The
escape can only run until ``idle`` reaches `IDLE_LIMIT` + `ESCAPE_DEPTH`; after that the old rule applies, so
games still end. It is used only there: also steering every mark/return the search prefers before the limit
towards the best such position won more on seeds 0-999 but fewer on 5000-5499, and cost a fifth more time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, NamedTuple

from games.core import JSON, GameState
from games.loot_the_loop.engine import ACES_TO_ESCAPE, MAX_NOTES, is_ace, is_trap, trinket_value

DOWN, ACE, TRAP, EXIT = 0, 1, 11, 12
TYPES = range(1, 13)

WIN = 100.0  # an escape, on top of the score
ACE_BONUS = 8.0  # a nabbed jewel is a step to the win, worth far more than its 1 point
ALIVE = 4.0  # still in the temple: more cards to come
SEEN_ACE = 1.0  # a face-up jewel in the deck is a target an explore can reach
SEEN_EXIT = 3.0  # the face-up exit once all four jewels are held
NOTE = 1.5  # a marked path is a way out (a return is always possible), worth keeping
STEP = 0.01  # each action costs a little: shorter lines first, no pointless circling
DEPTH = 2
IDLE_LIMIT = 12
ESCAPE_DEPTH = 8  # longest mark/return sequence the escape search tries
ESCAPE_REASON = "a short run of marks and returns leads to a safe move instead of a trap"


class Pos(NamedTuple):
    """The visible position: deck of card types top first (DOWN for face-down), note values (sorted), the score
    pile as (jewels, trinkets), and how many unseen cards of each type remain (index = type)."""

    deck: tuple[int, ...]
    notes: tuple[int, ...]
    aces: int
    trinkets: int
    unseen: tuple[int, ...]


Move = tuple[str, int]  # ("look", 0), ("explore", n), ("mark", 0), ("return", value)


@dataclass(frozen=True)
class Suggestion:
    action: str
    reason: str
    value: float


def card_type(card: str | None) -> int:
    if card is None:
        return DOWN
    if is_ace(card):
        return ACE
    if is_trap(card):
        return TRAP
    value = trinket_value(card)
    return EXIT if value is None else value


def position(view: JSON) -> Pos:
    counts = [0] * 13
    for card in view["unseen"]:
        counts[card_type(card)] += 1
    aces = sum(1 for c in view["score_pile"] if is_ace(c))
    return Pos(
        deck=tuple(card_type(c) for c in view["deck"]),
        notes=tuple(sorted(card_type(c) for c in view["notes"])),
        aces=aces,
        trinkets=len(view["score_pile"]) - aces,
        unseen=tuple(counts),
    )


# ----- the model -----------------------------------------------------------------------------------------
def moves(pos: Pos) -> list[Move]:
    deck = pos.deck
    found: list[Move] = []
    if deck[0] == DOWN:
        found.append(("look", 0))
    for n in sorted({t for t in deck[:2] if 2 <= t <= 10}):
        found.append(("explore", n))
    if 2 <= deck[0] <= 10 and len(pos.notes) < MAX_NOTES:
        found.append(("mark", 0))
    found.extend(("return", v) for v in sorted(set(pos.notes)))
    return found


def lands_on_trap(pos: Pos, n: int) -> bool:
    return pos.deck[n % len(pos.deck)] == TRAP


def is_lost(pos: Pos) -> bool:
    """The engine's loss rule (no action, or only explores that all land on a face-up trap), without listing
    the moves: a note (return), a face-down top (look) or a trinket top with room in the notes (mark) keep the
    player alive; otherwise only an explore by the second card can."""
    top = pos.deck[0]
    if pos.notes or top == DOWN or 2 <= top <= 10:
        return False
    second = pos.deck[1]
    return not 2 <= second <= 10 or lands_on_trap(pos, second)


def loss_value(pos: Pos) -> float:
    return float(pos.aces + pos.trinkets)


def step(pos: Pos, move: Move) -> Pos | float:
    """The position after a deterministic move, or the final value if the move ends the game."""
    kind, n = move
    deck = pos.deck
    if kind == "mark":
        return pos._replace(deck=deck[1:], notes=tuple(sorted((*pos.notes, deck[0]))))
    if kind == "return":
        notes = list(pos.notes)
        notes.remove(n)
        return pos._replace(deck=(n, *deck), notes=tuple(notes))
    k = n % len(deck)
    deck = deck[k:] + deck[:k]
    top = deck[0]
    if top == TRAP:
        return loss_value(pos)
    if top == EXIT:
        return WIN + pos.aces + pos.trinkets if pos.aces >= ACES_TO_ESCAPE else pos._replace(deck=deck)
    if top == ACE:
        return pos._replace(deck=deck[1:], aces=pos.aces + 1)
    if top == DOWN:
        return pos._replace(deck=deck)
    return pos._replace(deck=deck[1:], trinkets=pos.trinkets + 1)


def look_outcomes(pos: Pos) -> list[tuple[float, Pos]]:
    """Each way a look can turn out, by card type, with its probability."""
    flips = 2 if pos.deck[1] == DOWN else 1
    total = sum(pos.unseen)
    outcomes: list[tuple[float, Pos]] = []
    for first in TYPES:
        c1 = pos.unseen[first]
        if not c1:
            continue
        left = list(pos.unseen)
        left[first] -= 1
        if flips == 1:
            outcomes.append((c1 / total, pos._replace(deck=(first, *pos.deck[1:]), unseen=tuple(left))))
            continue
        for second in TYPES:
            c2 = left[second]
            if not c2:
                continue
            both = list(left)
            both[second] -= 1
            p = c1 / total * c2 / (total - 1)
            outcomes.append((p, pos._replace(deck=(first, second, *pos.deck[2:]), unseen=tuple(both))))
    return outcomes


def heuristic(pos: Pos) -> float:
    value = pos.trinkets + pos.aces * (1 + ACE_BONUS) + ALIVE + NOTE * len(pos.notes)
    value += SEEN_ACE * pos.deck.count(ACE)
    if pos.aces >= ACES_TO_ESCAPE and EXIT in pos.deck:
        value += SEEN_EXIT
    return value


class Search:
    """Expectimax over visible consequences, memoised for one decision."""

    def __init__(self) -> None:
        self.memo: dict[tuple[Pos, int], float] = {}

    def value(self, pos: Pos, depth: int) -> float:
        key = (pos, depth)
        if key not in self.memo:
            if is_lost(pos):
                self.memo[key] = loss_value(pos)
            elif depth == 0:
                self.memo[key] = heuristic(pos)
            else:
                self.memo[key] = max(self.q(pos, m, depth) for m in moves(pos))
        return self.memo[key]

    def q(self, pos: Pos, move: Move, depth: int) -> float:
        if move[0] == "look":
            expected = sum(p * self.value(nxt, depth - 1) for p, nxt in look_outcomes(pos))
            return expected - STEP
        nxt = step(pos, move)
        if isinstance(nxt, float):
            return nxt
        return self.value(nxt, depth - 1) - STEP


# ----- escapes: exact search over marks and returns ---------------------------------------------------------
def is_shuffle(move: Move) -> bool:
    """Marks and returns: the moves whose outcome is exact and that make no progress."""
    return move[0] in ("mark", "return")


def is_progress(pos: Pos, move: Move) -> bool:
    """A look, or an explore that does not land on a face-up trap: what ends an idle spell without losing."""
    return move[0] == "look" or (move[0] == "explore" and not lands_on_trap(pos, move[1]))


def reachable(pos: Pos, depth: int) -> dict[Pos, tuple[Move, int]]:
    """Every position that 1 to `depth` marks and returns reach, with the first move of a shortest sequence to it
    and that sequence's length. Breadth-first with a visited set, so mark/return cycles are walked only once."""
    found: dict[Pos, tuple[Move, int]] = {}
    frontier: list[tuple[Pos, Move | None]] = [(pos, None)]
    seen = {pos}
    for length in range(1, depth + 1):
        following: list[tuple[Pos, Move | None]] = []
        for here, head in frontier:
            for move in filter(is_shuffle, moves(here)):
                there = step(here, move)
                assert isinstance(there, Pos)  # a mark or return never ends the game
                if there not in seen:
                    seen.add(there)
                    found[there] = (head or move, length)
                    following.append((there, head or move))
        frontier = following
    return found


def escape(pos: Pos, depth: int, search: Search, ply: int) -> tuple[float, Move] | None:
    """The first mark/return of the best sequence of at most `depth` that ends where a progress move exists, with
    that move's value (less the cost of getting there), or None if no such sequence exists."""
    best: tuple[float, Move] | None = None
    for there, (head, length) in reachable(pos, depth).items():
        for move in moves(there):
            if is_progress(there, move):
                value = search.q(there, move, ply) - STEP * length
                if best is None or value > best[0]:
                    best = (value, head)
    return best


# ----- the policy ----------------------------------------------------------------------------------------
def suggest(view: JSON, rng: random.Random, depth: int = DEPTH) -> Suggestion:
    """The action the solver would play now, with a short reason. Uses only the view."""
    if view["phase"] == "setup":
        return _suggest_order(view, rng, depth)
    if not view["legal"]:
        return Suggestion("", "the game is over", 0.0)
    pos = position(view)
    move, value, reason = decide(pos, view.get("idle", 0), rng, depth)
    return Suggestion(action_text(move, view), reason, round(value, 3))


def decide(pos: Pos, idle: int, rng: random.Random, depth: int = DEPTH) -> tuple[Move, float, str]:
    """The solver's move in a visible position (not lost) with `idle` actions since the last look or nab, its
    value and the reason to give. The rollouts of `games.loot_the_loop.rollouts` play with it."""
    legal = moves(pos)
    if idle >= IDLE_LIMIT:
        progress = [m for m in legal if m[0] == "look"] or [m for m in legal if is_progress(pos, m)]
        plan = None if progress else escape(pos, IDLE_LIMIT + ESCAPE_DEPTH - idle, Search(), depth)
        if plan is not None:
            return plan[1], plan[0], ESCAPE_REASON
        legal = progress or [m for m in legal if m[0] == "explore"] or legal
    if len(legal) == 1:
        return legal[0], 0.0, _reason(pos, legal[0], 1)
    search = Search()
    scored = [(search.q(pos, m, depth), i, m) for i, m in enumerate(legal)]
    best = max(v for v, _, _ in scored)
    ties = [m for v, _, m in scored if v >= best - 1e-9]
    move = ties[0] if len(ties) == 1 else rng.choice(ties)
    return move, best, _reason(pos, move, len(legal))


def _suggest_order(view: JSON, rng: random.Random, depth: int) -> Suggestion:
    """Try each stacking order on the visible piles (their face-down cards stay unknown) and keep the best."""
    piles = view["piles"]
    best: tuple[float, str] | None = None
    for text in view["legal"]:
        order = [int(p) - 1 for p in text.split()[1:]]
        deck = [c for p in order for c in piles[p]]
        value = Search().value(position({**view, "deck": deck}), depth)
        if best is None or value > best[0] + 1e-9:
            best = (value, text)
    assert best is not None
    return Suggestion(best[1], "this pile on top gives the best opening moves", round(best[0], 3))


def action_text(move: Move, view: JSON) -> str:
    """A move as the engine's action text (a note is returned by naming one of its cards)."""
    kind, n = move
    if kind == "explore":
        return f"explore {n}"
    if kind == "return":
        return "return " + next(c for c in view["notes"] if trinket_value(c) == n)
    return kind


def _reason(pos: Pos, move: Move, choices: int) -> str:
    if choices == 1:
        return "it is the only move that keeps you in the temple" if move[0] != "explore" else "it is your only move"
    kind, n = move
    if kind == "look":
        return "looking around reveals new options and is safer than the alternatives"
    if kind == "mark":
        return "marking changes the top cards and opens a better path"
    if kind == "return":
        return f"returning the {n} changes your movement options for the better"
    landing = pos.deck[n % len(pos.deck)]
    names = {DOWN: "a face-down card (safe)", ACE: "a jewel - nab it", EXIT: "the exit", TRAP: "a trap"}
    return f"exploring {n} lands on {names.get(landing, f'a {landing} trinket - nab it')}"


def solver_policy(state: GameState, player: int, rng: random.Random) -> Any:
    """The registry's "solver" policy: `suggest` on the player's view, parsed back into an action."""
    return state.parse_action(suggest(state.view(player), rng).action)
