"""A sensible agent for The LOOP: keep the threatened Eras below a vortex, fill and complete missions, move
toward them, and send clones into their Paradox Eras.

It reads `state.view(player)` (the open table: a cooperative game hides nothing between agents) and the
public catalogue (card texts), never the hidden orders of the Huge Deck, the Faux deck or the draw piles.
Dr. Foo's landing is always simulated (`rifts auto`): a policy has no camera.
"""

from __future__ import annotations

import random

from games.core import JSON, Action, GameState
from games.hints import DEFAULT_BUDGET, Budget, Hint, redeal, reseed, rollout_hint, seat_action
from games.the_loop.catalogue import ELEMENTARY
from games.the_loop.engine import Acquire, End, FooTurn, Loop, Move, Progress, Rifts, Take, TheLoop, Use
from games.the_loop.eras import CODES, COUNT, distance

REWARD_TASTE = ("rift", "destroy_clone", "energy", "move", "pull", "push", "carry", "draw")


def simple_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    legal = state.legal_actions(player)
    if not legal:
        return None
    assert isinstance(state, TheLoop)
    view = state.view(player)
    phase = view["phase"]
    if phase == "foo":
        return FooTurn()
    if phase == "landing":
        return Rifts(None)
    if phase == "reward":
        return min(legal, key=lambda a: _taste(state, a))
    if phase != "actions":
        return End()
    return _action(state, view, legal)


def _taste(state: TheLoop, action: Action) -> int:
    kind = state.catalogue.artifacts[action.card].effect.kind if isinstance(action, Take) else ""
    return REWARD_TASTE.index(kind) if kind in REWARD_TASTE else len(REWARD_TASTE)


def _action(state: TheLoop, view: JSON, legal: list[Action]) -> Action:
    eras = view["eras"]
    me = view["agents"][view["active"]]
    here = CODES.index(me["era"])
    uses = [a for a in legal if isinstance(a, Use)]
    kinds = {a: _kind(state, view, a) for a in uses}

    progress = [a for a in legal if isinstance(a, Progress)]
    if progress:
        return max(progress, key=lambda a: a.colour == "red")
    rift = [a for a in uses if kinds[a] == "rift"]
    if rift:
        return max(rift, key=lambda a: eras[CODES.index(a.target or "")]["rifts"])
    paradox = [a for a in uses if _kills_clone(a, kinds[a], here)]
    if paradox:
        return paradox[0]
    mission = eras[here]["mission"]
    if isinstance(mission, dict) and len(mission["progress"]) == len(mission["slots"]):
        return End()
    goal = _goal(view, here)
    energy = [a for a in uses if kinds[a] == "energy"]
    if energy:
        return min(energy, key=lambda a: distance(CODES.index(a.target or ""), goal))
    cheap_moves = not view["turn"]["free_move"] or eras[here]["energy"] >= 2  # keep a cube for a LOOP
    closer = [
        a
        for a in legal
        if _step(a, kinds.get(a)) is not None and _closer(a, goal, here) and (cheap_moves or isinstance(a, Use))
    ]
    if closer:
        return min(closer, key=lambda a: distance(CODES.index(_step(a, kinds.get(a)) or ""), goal))
    draws = [a for a in uses if kinds[a] in ("draw", "reveal")]
    if draws:
        return draws[0]
    loops = [a for a in legal if isinstance(a, Loop) and a.dimension in ELEMENTARY]
    if loops and view["turn"]["loops"] == 0:
        return loops[0]
    acquire = [a for a in legal if isinstance(a, Acquire)]
    if acquire:
        return min(acquire, key=lambda a: _taste(state, Take(a.card)))
    return End()


def _kind(state: TheLoop, view: JSON, action: Use) -> str:
    if action.card is None:
        return view["agents"][view["active"]]["ability"]["effect"]["kind"]
    return state.catalogue.artifacts[action.card].effect.kind


def _kills_clone(action: Use, kind: str, here: int) -> bool:
    """A clone effect that destroys a clone: directly, or by moving it into its Paradox Era."""
    clone = action.target or ""
    if kind == "destroy_clone":
        return True
    if kind in ("push", "carry"):
        return action.dest == clone[:3]
    return kind == "pull" and CODES[here] == clone[:3]


def _goal(view: JSON, here: int) -> int:
    """The nearest revealed mission still needing cubes; else the Era with the most rift cubes."""
    open_missions = [
        e
        for e, era in enumerate(view["eras"])
        if isinstance(era["mission"], dict) and len(era["mission"]["progress"]) < len(era["mission"]["slots"])
    ]
    if open_missions:
        return min(open_missions, key=lambda e: distance(here, e))
    return max(range(COUNT), key=lambda e: view["eras"][e]["rifts"])


def _step(action: Action, kind: str | None) -> str | None:
    if isinstance(action, Move):
        return action.era
    if isinstance(action, Use) and kind == "move":
        return action.target
    return None


def _closer(action: Action, goal: int, here: int) -> bool:
    target = action.era if isinstance(action, Move) else getattr(action, "target", None)
    return target is not None and distance(CODES.index(target), goal) < distance(here, goal)


# ----- hints: the simple policy's determinised rollouts (games/hints.py) ---------------------------------------
def determinize(state: GameState, player: int, rng: random.Random) -> GameState:
    """What the team cannot see (the order of Dr. Foo's Faux cards, of the Huge deck and of each agent's draw
    pile, and which mission tiles lie face down where) drawn again, and Dr. Foo's future chance reseeded. Hands
    are open in this cooperative game."""
    assert isinstance(state, TheLoop)
    world = state.search_copy()
    for pile in (world.faux, world.huge, *(agent["draw"] for agent in world.agents)):
        pile.sort()  # the deal must depend on the seed only, never on the real order
        rng.shuffle(pile)
    down = [e for e in range(COUNT) if world.tiles[e] and not world.revealed[e]]
    dealt = redeal([[world.tiles[e] or "" for e in down], world.set_aside], rng)
    for e, tile in zip(down, dealt[0], strict=True):
        world.tiles[e] = tile
    world.set_aside = sorted(dealt[1])
    return reseed(world, rng)


def team_outcome(state: GameState, player: int) -> float:
    """A won game is 1; the missions completed (the game's score) break ties between lost lines."""
    done = state.scores()[player]
    return float(player in state.winners()) + 0.1 * done / (done + 10)


def hint(state: GameState, player: int, rng: random.Random, budget: Budget = DEFAULT_BUDGET) -> Hint:
    return rollout_hint(state, player, rng, determinize, simple_policy, budget, value=team_outcome)


def hint_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    return seat_action(hint, state, player, rng)
