"""Dr. Foo's turn as an automaton, and a small API to run him for a PHYSICAL table.

Dr. Foo has no choices, only chance, so the assistant can run him for the table. His phase, in order
(rules summary, "I. Foo Phase"):

1. Cycle track: add clones drawn from the bag (each into its designated Era) and reveal artifacts into their
   Origin Eras; how many of each, per cycle-track position and difficulty, comes from the scenario file (the
   summary gives no numbers; the shipped ones are made up and editable).
2. Faux card: the top card of the shuffled Faux deck names an Era not yet visited this cycle; the machine
   turns to it; the drop is 2 + the clones in that Era (capped by the rift cubes left in the supply).
3. Landing: physical - the cubes roll out of the machine into the previous Era, Dr. Foo's Era or the next Era,
   so the engine WAITS for the observed landing, the action ``rifts P F N`` (must sum to the drop). When no one
   watches, ``rifts auto`` draws each cube's chute independently with the scenario's probabilities
   (basic: 0.25 previous / 0.5 Dr. Foo's Era / 0.25 next; made up, not measured).
4. Vortexes and defeat: each of the three Eras (previous, Dr. Foo's, next, in that order) holding more than 3
   rift cubes becomes a vortex; a second vortex in one Era, or a fourth anywhere, loses at once.

Physical-table API (the agents' turns happen off-engine; the engine keeps the board, the Faux deck, the cycle
track and the clone bag, and only announces artifact reveals, since it cannot see the physical Huge Deck)::

    >>> from games.the_loop import foo
    >>> table = foo.start("basic", "normal", seed=7, agents=2)
    >>> [e.text for e in foo.foo_turn(table)][-1]            # doctest: +SKIP
    'Dr. Foo travels to the Industrial Era. Drop 3 rift cubes.'
    >>> events = foo.land(table, (1, 2, 0))                   # what the camera saw: previous, Foo's, next
    >>> events = foo.land(table, None)                        # ... or nobody watched: simulate it
    >>> foo.enter(table, "remove red ind 2")                  # agents' changes, as they happen
    >>> foo.enter(table, "clone ren2 to ren")                 # a clone pushed into its Paradox Era: destroyed
    >>> foo.enter(table, "progress red at ind")               # a cube placed on the mission there
    >>> foo.enter(table, "complete ind")                      # mission completed: a new one is revealed
    >>> foo.end_agents_turn(table)                            # refresh; a new cycle or the loss at cycle 3
    >>> foo.foo_turn(table)                                   # ... and so on until table.is_over

`awaiting_foo(table)`, `awaiting_landing(table)` and `pending_drop(table)` tell a driver loop what comes next.

Edits accepted by `enter` (also plain actions of a physical-mode state): ``add green ERA N``,
``remove green ERA N``, ``remove red ERA N``, ``clone CLONE to ERA``, ``destroy CLONE``,
``progress green|red at ERA``, ``complete ERA``. Each is checked against the board (you cannot remove cubes
that are not there) so the vortex checks stay right.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from games.core import Event
from games.the_loop import events as ev
from games.the_loop.eras import CODES, COUNT, era_title, next_era, previous_era

if TYPE_CHECKING:
    from games.the_loop.engine import TheLoop

BASE_DROP = 2  # rules summary: 2 base + 1 per clone in that Era
RIFT_CAPACITY = 3  # rules summary: each Era safely holds three rift cubes
VORTEX_DEFEAT = 4  # rules summary: a fourth vortex anywhere loses


def drop_size(clones_there: int, red_supply: int) -> int:
    """Rift cubes dropped: 2 + clones in Dr. Foo's Era, never more than the supply holds (interpretation)."""
    return min(BASE_DROP + clones_there, red_supply)


def landing_eras(foo_era: int) -> tuple[int, int, int]:
    """The three chutes: previous Era, Dr. Foo's Era, next Era."""
    return previous_era(foo_era), foo_era, next_era(foo_era)


def simulate_landing(rng: random.Random, drop: int, probabilities: Sequence[float]) -> tuple[int, int, int]:
    """Each cube picks a chute independently with the scenario's probabilities."""
    counts = [0, 0, 0]
    for _ in range(drop):
        roll, acc = rng.random(), 0.0
        chute = 2
        for i, p in enumerate(probabilities):
            acc += p
            if roll < acc:
                chute = i
                break
        counts[chute] += 1
    return counts[0], counts[1], counts[2]


def foo_phase(state: TheLoop) -> list[Event]:
    """Steps 1-2: cycle track, Faux card, machine, drop. Leaves the state waiting for the landing."""
    position = COUNT - len(state.faux)
    track = state.scenario.track_value
    events: list[Event] = [ev.AgentTurn(state.active, state.agent_name(state.active))]
    for _ in range(track(state.difficulty, "clones", state.cycle, position)):
        events.append(state.add_clone())
    events += state.reveal_artifacts(track(state.difficulty, "artifacts", state.cycle, position))
    era = state.faux.pop(0)
    state.visited.append(era)
    state.foo_era = era
    state.drop = drop_size(len(state.clones[era]), state.supply("red"))
    events.append(ev.FooTravels(CODES[era], state.drop, len(state.clones[era])))
    state.phase = "landing"
    if state.drop == 0:  # an empty red supply drops nothing: nothing to observe
        events += resolve_landing(state, (0, 0, 0), simulated=True)
    return events


def resolve_landing(state: TheLoop, counts: Sequence[int], simulated: bool) -> list[Event]:
    """Steps 3-4: place the landed cubes, then vortexes and defeat checks, in chute order."""
    eras = landing_eras(state.foo_era)
    for era, n in zip(eras, counts, strict=True):
        state.rifts[era] += n
    state.drop = 0
    events: list[Event] = [ev.RiftsLanded(tuple(CODES[e] for e in eras), tuple(counts), simulated)]
    for era in eras:
        if state.rifts[era] > RIFT_CAPACITY:
            events += open_vortex(state, era)
            if state.over:
                return events
    state.phase = "agents" if state.physical else "actions"
    return events


def open_vortex(state: TheLoop, era: int) -> list[Event]:
    """Vortex: rifts to the supply, artifacts there destroyed, the mission there failed; then the defeat checks."""
    if state.vortex[era]:
        return [state.finish(False, f"A second vortex opened in {era_title(era)}")]
    state.vortex[era] = True
    state.rifts[era] = 0
    lost = state.artifacts_destroyed_in(era)
    mission, was_revealed = state.tiles[era], state.revealed[era]
    events: list[Event] = [ev.VortexOpened(CODES[era], mission or "", lost)]
    if mission:
        state.failed.append(mission)
        state.tiles[era], state.revealed[era], state.progress[era] = None, False, []
    count = sum(state.vortex)
    if count >= VORTEX_DEFEAT:
        return [*events, state.finish(False, "A fourth vortex opened on the board")]
    events.append(ev.VortexesRemain(VORTEX_DEFEAT - 1 - count))
    if mission and was_revealed:
        events += reveal_mission(state)
    return events


def reveal_mission(state: TheLoop) -> list[Event]:
    """Reveal the tile in Dr. Foo's Era, or the next clockwise Era with an unrevealed tile (none left: nothing)."""
    for step in range(COUNT):
        era = (state.foo_era + step) % COUNT
        tile = state.tiles[era]
        if tile and not state.revealed[era]:
            state.revealed[era] = True
            return [ev.MissionRevealed(tile, state.catalogue.missions[tile].name, CODES[era])]
    return []


# ----- the physical-table API ----------------------------------------------------------------------------------
def start(scenario: str = "basic", difficulty: str = "normal", seed: int = 0, agents: int = 2) -> TheLoop:
    """A physical-table game: board, Faux deck, cycle track and clone bag are kept; agents play off-engine."""
    from games.the_loop.engine import TheLoop

    return TheLoop(players=agents, seed=seed, scenario=scenario, difficulty=difficulty, table="physical")


def awaiting_foo(state: TheLoop) -> bool:
    """True when Dr. Foo's phase is next (physical table: call `foo_turn`)."""
    return not state.is_over and state.phase == "foo"


def awaiting_landing(state: TheLoop) -> bool:
    """True when the engine waits for the landing of the dropped rift cubes (call `land`)."""
    return not state.is_over and state.phase == "landing"


def pending_drop(state: TheLoop) -> int:
    """How many rift cubes were dropped and have not been entered as landed yet (0 when none)."""
    return state.drop if awaiting_landing(state) else 0


def foo_turn(state: TheLoop) -> list[Event]:
    """Dr. Foo's phase up to the drop: clones, artifact reveals, the Faux card, the machine, the drop size."""
    return state.apply("foo")


def land(state: TheLoop, counts: Sequence[int] | None) -> list[Event]:
    """The observed landing (previous, Foo's, next Era), or None to simulate it; then vortexes and defeat."""
    if counts is None:
        return state.apply("rifts auto")
    return state.apply("rifts " + " ".join(str(int(n)) for n in counts))


def enter(state: TheLoop, change: str) -> list[Event]:
    """One change the agents made on the board (see the module docstring), checked against the board."""
    return state.apply(change)


def end_agents_turn(state: TheLoop) -> list[Event]:
    """The agent's refresh: the next agent's turn, a new cycle when the Faux deck is empty, or the loss."""
    return state.apply("end")
