"""Effect primitives: what an artifact (or an agent's ability) does, for each icon family of the rules summary.

Each primitive is a (target kind, check, resolve) triple, so the legal-move list, the refusal messages and the
resolution come from one place: `legal_targets` is simply every candidate target that `problem` accepts.

| kind             | target       | effect (amount = N, range = R Eras from the agent)                      |
|------------------|--------------|-------------------------------------------------------------------------|
| energy           | Era within R | add N energy cubes from the supply (as many as the supply has)          |
| rift             | Era within R | remove up to N rift cubes (at least one must be there)                  |
| move             | Era 1..R away| move the agent there, free                                              |
| draw             | -            | draw N cards                                                            |
| discard          | card in hand | discard another card of your hand, then draw N                          |
| reveal           | -            | reveal N artifacts from the Huge Deck into their Origin Eras            |
| acquire          | artifact     | take an artifact available within R onto the top of your draw pile      |
| destroy_artifact | card in hand | destroy another card of your hand (it leaves your deck)                 |
| push             | clone + Era  | a clone in your Era goes to an adjacent Era                             |
| pull             | clone        | a clone in an adjacent Era comes to your Era                            |
| carry            | clone + Era  | you move to an adjacent Era and take a clone of your Era with you       |
| destroy_clone    | clone within R | the clone goes back to the bag                                        |

The effect semantics are this program's reading of the icon names; none of it is from the document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.core import Event
from games.the_loop import events as ev
from games.the_loop.catalogue import EFFECT_TARGETS, Effect
from games.the_loop.eras import CODES, COUNT, adjacent, distance, era_title

if TYPE_CHECKING:
    from games.the_loop.engine import TheLoop

Target = tuple[str | None, str | None]  # (target, destination Era code)


def _where(reach: int) -> str:
    return "your Era" if reach == 0 else f"within {reach} Era{'s' if reach > 1 else ''} of you"


def candidates(state: TheLoop, effect: Effect) -> list[Target]:
    """Every syntactically possible target of an effect kind, in a stable order."""
    kind = EFFECT_TARGETS[effect.kind]
    if kind is None:
        return [(None, None)]
    if kind == "era":
        return [(code, None) for code in CODES]
    if kind == "card":
        return [(card, None) for card in state.agents[state.active]["hand"]]
    if kind == "artifact":
        return [(card, None) for era in range(COUNT) for card in sorted(state.available[era])]
    clones = [c for era in range(COUNT) for c in sorted(state.clones[era])]
    if effect.kind in ("push", "carry"):
        here = state.agents[state.active]["era"]
        return [(c, CODES[d]) for c in clones for d in adjacent(here)]
    return [(c, None) for c in clones]


def problem(state: TheLoop, effect: Effect, target: str | None, dest: str | None, used: str | None) -> str | None:
    """Why this effect cannot be resolved with this target now (None: it can). `used` is the card being used."""
    kind = EFFECT_TARGETS[effect.kind]
    if kind is None and (target or dest):
        return f"this {effect.kind} effect takes no target"
    if kind is not None and target is None:
        return f"this {effect.kind} effect needs a target ({_target_words(kind)})"
    if dest is not None and effect.kind not in ("push", "carry"):
        return f"only push and carry effects take 'to ERA', not {effect.kind}"
    check = _CHECKS[effect.kind]
    return check(state, effect, target, dest, used)


def resolve(state: TheLoop, effect: Effect, target: str | None, dest: str | None, used: str | None) -> list[Event]:
    """Carry out a checked effect."""
    return _RESOLVE[effect.kind](state, effect, target, dest, used)


def legal_targets(state: TheLoop, effect: Effect, used: str | None) -> list[Target]:
    return [(t, d) for t, d in candidates(state, effect) if problem(state, effect, t, d, used) is None]


def _target_words(kind: str) -> str:
    return {"era": "an Era", "card": "a card in your hand", "artifact": "an available artifact", "clone": "a clone"}[
        kind
    ]


# ----- checks ------------------------------------------------------------------------------------------------------
def _here(state: TheLoop) -> int:
    return state.agents[state.active]["era"]


def _era_of(code: str | None) -> int | None:
    return CODES.index(code) if code in CODES else None


def _check_era(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> str | None:
    era = _era_of(target)
    if era is None:
        return f"'{target}' is not an Era"
    away = distance(_here(state), era)
    if effect.kind == "move":
        if away == 0:
            return "you are already in that Era"
        if away > effect.range:
            return f"{era_title(era)} is {away} Eras away; this moves you at most {effect.range}"
        return None
    if away > effect.range:
        return f"{era_title(era)} is not {_where(effect.range)}"
    if effect.kind == "energy" and state.supply("green") == 0:
        return "the energy supply is empty"
    if effect.kind == "rift" and state.rifts[era] == 0:
        return f"there are no rift cubes in {era_title(era)}"
    return None


def _check_none(state: TheLoop, effect: Effect, _t: str | None, _d: str | None, used: str | None) -> str | None:
    if effect.kind == "draw" and not state.can_draw(state.active):
        return "your draw pile and discard pile are empty"
    if effect.kind == "reveal" and not (state.huge or state.destroyed):
        return "the Huge Deck and the destroyed pile are empty"
    return None


def _check_card(state: TheLoop, effect: Effect, target: str | None, _d: str | None, used: str | None) -> str | None:
    if target not in state.agents[state.active]["hand"]:
        return f"{target} is not in your hand"
    if target == used:
        return "choose another card than the one you are using"
    return None


def _check_artifact(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> str | None:
    era = next((e for e in range(COUNT) if target in state.available[e]), None)
    if era is None:
        return f"{target} is not an available artifact"
    if distance(_here(state), era) > effect.range:
        return f"{target} is in {era_title(era)}, not {_where(effect.range)}"
    return None


def _check_clone(state: TheLoop, effect: Effect, target: str | None, dest: str | None, _u: str | None) -> str | None:
    era = state.clone_era(target or "")
    if era is None:
        return f"there is no clone {target} on the board"
    here = _here(state)
    if effect.kind == "pull" and era not in adjacent(here):
        return f"clone {target} is not in an Era adjacent to yours"
    if effect.kind in ("push", "carry"):
        if era != here:
            return f"clone {target} is not in your Era"
        if dest is None:
            return f"say where to {effect.kind} it: 'to ERA', an adjacent Era"
        if _era_of(dest) not in adjacent(here):
            return f"{dest} is not an Era adjacent to yours"
    if effect.kind == "destroy_clone" and distance(here, era) > effect.range:
        return f"clone {target} is not {_where(effect.range)}"
    return None


_CHECKS = {
    "energy": _check_era,
    "rift": _check_era,
    "move": _check_era,
    "draw": _check_none,
    "reveal": _check_none,
    "discard": _check_card,
    "destroy_artifact": _check_card,
    "acquire": _check_artifact,
    "push": _check_clone,
    "pull": _check_clone,
    "carry": _check_clone,
    "destroy_clone": _check_clone,
}


# ----- resolution --------------------------------------------------------------------------------------------------
def _energy(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> list[Event]:
    era = CODES.index(target or "")
    added = min(effect.amount, state.supply("green"))
    state.energy[era] += added
    return [ev.CubesChanged(CODES[era], "green", added)]


def _rift(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> list[Event]:
    era = CODES.index(target or "")
    removed = min(effect.amount, state.rifts[era])
    state.rifts[era] -= removed
    return [ev.CubesChanged(CODES[era], "red", -removed)]


def _move(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> list[Event]:
    agent = state.agents[state.active]
    source, agent["era"] = agent["era"], CODES.index(target or "")
    return [ev.AgentMoved(state.active, CODES[source], CODES[agent["era"]], 0)]


def _draw(state: TheLoop, effect: Effect, _t: str | None, _d: str | None, _u: str | None) -> list[Event]:
    return [ev.CardsDrawn(state.active, state.draw_cards(state.active, effect.amount))]


def _discard(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> list[Event]:
    state.leave_hand(state.active, target or "")
    state.agents[state.active]["discard"].append(target)
    moved = ev.CardMoved(state.active, target or "", state.artifact(target or "").name, "is discarded")
    return [moved, *_draw(state, effect, None, None, None)]


def _reveal(state: TheLoop, effect: Effect, _t: str | None, _d: str | None, _u: str | None) -> list[Event]:
    return state.reveal_artifacts(effect.amount)


def _acquire(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> list[Event]:
    return state.acquire(target or "")


def _destroy_artifact(
    state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None
) -> list[Event]:
    state.leave_hand(state.active, target or "")
    state.destroyed.append(target)
    return [ev.CardMoved(state.active, target or "", state.artifact(target or "").name, "is destroyed")]


def _push(state: TheLoop, effect: Effect, target: str | None, dest: str | None, _u: str | None) -> list[Event]:
    return state.move_clone(target or "", CODES.index(dest or ""))


def _pull(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> list[Event]:
    return state.move_clone(target or "", _here(state))


def _carry(state: TheLoop, effect: Effect, target: str | None, dest: str | None, _u: str | None) -> list[Event]:
    moved = _move(state, effect, dest, None, None)
    return moved + state.move_clone(target or "", CODES.index(dest or ""))


def _destroy_clone(state: TheLoop, effect: Effect, target: str | None, _d: str | None, _u: str | None) -> list[Event]:
    return [state.destroy_clone(target or "", paradox=False)]


_RESOLVE = {
    "energy": _energy,
    "rift": _rift,
    "move": _move,
    "draw": _draw,
    "discard": _discard,
    "reveal": _reveal,
    "acquire": _acquire,
    "destroy_artifact": _destroy_artifact,
    "push": _push,
    "pull": _pull,
    "carry": _carry,
    "destroy_clone": _destroy_clone,
}
