"""The LOOP (cooperative): the rules summary's rules and examples, every action legal and illegal, Dr. Foo's
turn, catalogue/scenario validation, parsing and bad input. Random play and the physical-table API are in
test_the_loop_random.py."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import games
from games.core import BadAction, BadState, GameError, GameOver
from games.the_loop import foo
from games.the_loop.catalogue import CatalogueError, load_catalogue, load_scenario
from games.the_loop.engine import ALL_CLONES, TheLoop
from games.the_loop.eras import CODES, ERAS, adjacent, distance, next_era, previous_era
from tests.invariants import assert_illegal_unchanged

CAT = load_catalogue()
DAW, MED, REN, IND, GLO, ROB, END = range(7)


# ----- helpers -------------------------------------------------------------------------------------------------
def card_of(kind: str, dimension: str | None = None, amount: int | None = None, skip: tuple[str, ...] = ()) -> str:
    """The first catalogue artifact with this effect kind (and dimension / amount)."""
    for code, art in CAT.artifacts.items():
        if art.effect.kind != kind or code in skip:
            continue
        if dimension is not None and art.dimension != dimension:
            continue
        if amount is not None and art.effect.amount != amount:
            continue
        return code
    raise AssertionError(f"no {kind} card")


def _remove_card(core: dict, card: str) -> None:
    for key in ("huge", "destroyed", "reward", "out_of_game"):
        if card in core[key]:
            core[key].remove(card)
    for era in core["available"]:
        if card in era:
            era.remove(card)
    for agent in core["agents"]:
        for pile in ("draw", "hand", "discard", "exhausted"):
            if card in agent[pile]:
                agent[pile].remove(card)


def give(core: dict, player: int, cards: list[str], pile: str = "hand", exhausted: tuple[str, ...] = ()) -> None:
    for card in cards:
        _remove_card(core, card)
        core["agents"][player][pile].append(card)
    core["agents"][player]["exhausted"] += list(exhausted)


def place(core: dict, card: str, era: int) -> None:
    _remove_card(core, card)
    core["available"][era].append(card)


def put_clone(core: dict, clone: str, era: int) -> None:
    if clone in core["bag"]:
        core["bag"].remove(clone)
    for e in core["clones"]:
        if clone in e:
            e.remove(clone)
    core["clones"][era].append(clone)


def edit(state: TheLoop, change) -> TheLoop:
    """A copy of `state` with its core edited by `change(core)`, rebuilt through from_dict (so checked)."""
    data = state.to_dict()
    change(data["state"])
    data["history"] = []
    return TheLoop.from_dict(data)


def actions_state(players: int = 2, seed: int = 1, era: int = REN, hand: list[str] | None = None, **fields) -> TheLoop:
    """Player 1's action phase, in `era`, holding `hand` (others' cards moved out of the way), no rift cubes."""

    def change(core: dict) -> None:
        core.update({"phase": "actions", "drop": 0, "active": 0, "rifts": [0] * 7})
        core["agents"][0]["era"] = era
        if hand is not None:
            for card in list(core["agents"][0]["hand"]):
                _remove_card(core, card)
                core["agents"][0]["discard"].append(card)
            give(core, 0, hand)
        for key, value in fields.items():
            core[key] = value

    return edit(games.create("the-loop", players=players, seed=seed), change)


def mission_at(state: TheLoop, era: int) -> str:
    return state.tiles[era]


def kinds(events) -> list[str]:
    return [e.kind for e in events]


# ----- the ring ------------------------------------------------------------------------------------------------
def test_seven_eras_in_a_ring():
    assert ERAS == (
        "Dawn of Time", "Medieval", "Renaissance", "Industrial", "Globalization", "Age of Robots", "End of Times",
    )  # fmt: skip
    assert next_era(END) == DAW and previous_era(DAW) == END
    assert adjacent(DAW) == (END, MED) and adjacent(IND) == (REN, GLO)
    assert distance(DAW, END) == 1 and distance(DAW, IND) == 3 and distance(MED, ROB) == 3


def test_box_contents_and_starter_catalogue():
    assert len(CAT.artifacts) == 79 and len(CAT.agents) == 5 and len(CAT.missions) == 10
    assert all(len(a.artifacts) == 6 for a in CAT.agents) and len(CAT.huge_deck) == 49
    assert len(ALL_CLONES) == 28 and Counter(c[:3] for c in ALL_CLONES) == dict.fromkeys(CODES, 4)
    raw = json.loads(Path(CAT.path).read_text())
    assert all(e["source"] == "made up" for part in ("agents", "artifacts", "missions") for e in raw[part])
    assert "made up" in json.loads(Path(load_scenario("basic").path).read_text())["source"]


def test_setup():
    state = games.create("the-loop", players=3, seed=5)
    assert sum(state.revealed) == 2 and len(state.set_aside) == 3 and all(state.tiles)
    assert all(len(a["hand"]) == 3 and len(a["draw"]) == 3 for a in state.agents)
    assert len({a["code"] for a in state.agents}) == 3
    assert state.phase == "landing" and state.current_player == 0 and state.cycle == 1
    assert len(state.faux) == 6 and state.visited == [state.foo_era]
    assert state.supply("green") == 30 - 7 * 2


def test_solo_person_plays_two_agents_and_bad_player_counts():
    assert games.create("the-loop", players=2, seed=1).num_players == 2
    for n in (1, 5):
        with pytest.raises(GameError):
            games.create("the-loop", players=n)


# ----- Dr. Foo's turn ------------------------------------------------------------------------------------------
def test_drop_is_two_plus_clones_in_that_era_capped_by_the_supply():
    assert foo.drop_size(0, 30) == 2 and foo.drop_size(3, 30) == 5 and foo.drop_size(3, 4) == 4


def _foo_ready(era: int, clones: int, cycle_pos_zero: bool = True) -> TheLoop:
    """A physical table before Dr. Foo's turn: the Faux deck's top card is `era`, with `clones` clones there."""
    state = foo.start(seed=3)

    def change(core: dict) -> None:
        core["faux"] = [era] + [e for e in range(7) if e != era]
        for clone in ALL_CLONES[:clones]:
            put_clone(core, clone, era)

    return edit(state, change)


def test_foo_turn_rift_count_example():
    # Document: "Drop Rift cubes into the Machine: 2 base + 1 per Clone in that Era".
    state = _foo_ready(REN, 2)
    events = foo.foo_turn(state)
    travel = events[-1]
    assert travel.kind == "FooTravels" and travel.era == "ren"
    assert travel.drop == 2 + len(state.clones[REN]) and travel.drop >= 4
    assert state.foo_era == REN and state.visited == [REN] and state.phase == "landing"
    state = _foo_ready(REN, 2)
    state.scenario = load_scenario("basic")
    assert foo.foo_turn(state)[-1].text.startswith("Dr. Foo travels to the Renaissance Era. Drop ")


def test_foo_travel_text_example():
    event = games.the_loop.events.FooTravels("ren", 4, 2)
    assert event.text == "Dr. Foo travels to the Renaissance Era. Drop 4 rift cubes."


def test_foo_adds_clones_and_reveals_artifacts_by_the_cycle_track():
    state = games.create("the-loop", players=2, seed=8, difficulty="hard")
    bag_before = len(state.bag)
    assert bag_before == 28 - load_scenario("basic").track_value("hard", "clones", 1, 0)
    for clone in (c for era in state.clones for c in era):
        assert state.clone_era(clone) == state.clone_home(clone) != CODES.index(clone[:3])


def test_clone_bag_empty_adds_no_clone():
    state = edit(
        _foo_ready(IND, 0), lambda core: [put_clone(core, c, DAW if c[:3] != "daw" else MED) for c in ALL_CLONES]
    )
    events = foo.foo_turn(state)
    assert "NoCloneLeft" in kinds(events) and events[-1].drop == 2 + len(state.clones[IND])


def test_faux_cards_visit_every_era_once_per_cycle():
    state = foo.start(seed=11)
    for _ in range(7):
        foo.foo_turn(state)
        foo.land(state, (0, 0, 0) if state.drop == 0 else None)
        for era in range(7):  # keep the board safe: the agents clear every rift cube
            if state.rifts[era]:
                foo.enter(state, f"remove red {CODES[era]} {state.rifts[era]}")
        events = foo.end_agents_turn(state)
    assert sorted(state.visited) == [] and state.cycle == 2 and events[-1].text.startswith("Cycle 2 of 3 begins")
    assert len(state.faux) == 7


def test_observed_landing_places_cubes_in_previous_foo_and_next_era():
    state = foo.start(seed=2)
    foo.foo_turn(state)
    era, drop = state.foo_era, state.drop
    events = foo.land(state, (1, drop - 1, 0))
    assert state.rifts[previous_era(era)] == 1 and state.rifts[era] == drop - 1
    assert events[0].kind == "RiftsLanded" and state.phase == "agents"


def test_landing_must_sum_to_the_drop():
    state = games.create("the-loop", players=2, seed=1)
    assert state.drop == 2
    assert_illegal_unchanged(state, "rifts 1 2 1", "must sum to the 2 dropped")
    assert_illegal_unchanged(state, games.the_loop.engine.Rifts((-1, 3, 0)), "negative")
    assert_illegal_unchanged(state, "move med", "landing of 2 rift cubes")
    state.apply("rifts 0 2 0")
    assert state.rifts[state.foo_era] == 2 and state.phase == "actions"


def test_rifts_auto_simulates_with_the_scenario_probabilities():
    state = games.create("the-loop", players=2, seed=1)
    (landed,) = [e for e in state.apply("rifts auto") if e.kind == "RiftsLanded"]
    assert landed.simulated and sum(landed.counts) == 2
    counts = foo.simulate_landing(random.Random(0), 8000, (0.25, 0.5, 0.25))
    assert sum(counts) == 8000
    assert abs(counts[0] / 8000 - 0.25) < 0.03 and abs(counts[1] / 8000 - 0.5) < 0.03


def _vortex_table(**core_fields) -> TheLoop:
    """Physical table, Dr. Foo in the Industrial Era waiting for a landing of 2 cubes; Industrial has 3 rifts."""

    def change(core: dict) -> None:
        core.update({"phase": "landing", "drop": 2, "foo_era": IND, "rifts": [0, 0, 0, 3, 0, 0, 0]})
        core.update(core_fields)

    return edit(foo.start(seed=4), change)


def test_fourth_rift_cube_makes_a_vortex():
    state = _vortex_table()
    tile = state.tiles[IND]
    events = foo.land(state, (0, 1, 1))
    assert state.vortex[IND] and state.rifts[IND] == 0 and state.rifts[GLO] == 1
    assert state.tiles[IND] is None and tile in state.failed
    texts = [e.text for e in events]
    assert "Vortex in the Industrial Era: the mission there is lost." in texts
    assert "Two vortexes remain before defeat." in texts
    assert not state.is_over


def test_vortex_destroys_available_artifacts_and_a_revealed_mission_is_replaced():
    card = card_of("rift")

    def change(core: dict) -> None:
        core.update({"phase": "landing", "drop": 2, "foo_era": IND, "rifts": [0, 0, 0, 3, 0, 0, 0]})
        core["revealed"] = [False, False, False, True, True, False, False]
        place(core, card, IND)

    state = edit(games.create("the-loop", players=2, seed=4), change)
    events = state.apply("rifts 0 2 0")
    assert state.available[IND] == [] and card in state.destroyed
    revealed = [e for e in events if e.kind == "MissionRevealed"]
    assert revealed and revealed[0].era == "rob"  # Industrial has no tile left; Globalization is revealed already
    assert sum(state.revealed) == 2


def test_revealed_artifact_in_a_vortex_era_is_destroyed():
    state = actions_state(vortex=[False] * 6 + [True])
    end_card = next(c for c, a in CAT.artifacts.items() if a.era == END and c in state.huge)
    state.huge.remove(end_card)
    state.huge.insert(0, end_card)
    (event,) = state.reveal_artifacts(1)
    assert event.destroyed and end_card in state.destroyed and "is a vortex" in event.text


def test_defeat_second_vortex_in_one_era():
    state = _vortex_table(vortex=[False, False, False, True, False, False, False])
    events = foo.land(state, (0, 1, 1))
    assert state.is_over and not state.won and isinstance(events[-1], GameOver)
    assert events[-1].winners == () and "second vortex opened in the Industrial Era" in events[-1].text
    assert state.current_player is None and state.legal_actions() == []


def test_defeat_fourth_vortex_anywhere():
    state = _vortex_table(vortex=[True, False, True, False, False, True, False])
    events = foo.land(state, (0, 2, 0))
    assert state.is_over and "fourth vortex" in events[-1].reason
    assert "No vortexes remain" not in " ".join(e.text for e in events)


def test_three_vortexes_warn_that_the_next_one_loses():
    state = _vortex_table(vortex=[True, False, True, False, False, False, False])
    events = foo.land(state, (0, 2, 0))
    assert not state.is_over and events[-1].text == "No vortexes remain before defeat: the next one loses the game."


def test_vortexes_in_chute_order_stop_at_the_first_defeat():
    state = _vortex_table(vortex=[False, False, True, False, False, False, False], drop=4,
                          rifts=[0, 0, 3, 3, 0, 0, 0])  # fmt: skip
    events = foo.land(state, (1, 3, 0))
    assert state.is_over and "Renaissance" in events[-1].reason and not state.vortex[IND]


def test_defeat_at_the_end_of_cycle_three():
    state = actions_state(cycle=3, faux=[], visited=list(range(7)))
    events = state.apply("end")
    assert state.is_over and events[-1].reason == "Dr. Foo completed his third cycle"
    assert "Nobody wins" in events[-1].text


def test_a_new_cycle_starts_when_the_faux_deck_is_empty():
    state = actions_state(faux=[], visited=list(range(7)))
    events = state.apply("end")
    assert state.cycle == 2 and "CycleStarted" in kinds(events)
    assert len(state.faux) == 6 and len(state.visited) == 1


# ----- missions ------------------------------------------------------------------------------------------------
def test_mission_reveal_in_foos_era_or_next_clockwise_with_an_unrevealed_tile():
    state = actions_state(foo_era=GLO, revealed=[True, False, False, False, False, False, False])
    (event,) = foo.reveal_mission(state)
    assert event.era == "glo" and state.revealed[GLO]
    state.tiles[ROB] = None  # e.g. lost to a vortex
    state.set_aside.append("x")  # not checked here
    (event,) = foo.reveal_mission(state)
    assert event.era == "end"
    (event,) = foo.reveal_mission(state)
    assert event.era == "med"  # wraps around past the End of Times; Dawn of Time is revealed


def _full_mission_state(completed: int = 0, players: int = 2) -> TheLoop:
    def change(core: dict) -> None:
        core.update({"phase": "actions", "drop": 0, "active": 0, "rifts": [0] * 7, "foo_era": MED})
        core["revealed"] = [False, False, True, False, True, False, False]
        slots = CAT.missions[core["tiles"][REN]].slots
        core["progress"][REN] = list(slots)
        core["energy"] = [1] * 7
        core["agents"][0]["era"] = REN
        done = [m for m in core["set_aside"]][:completed]
        core["completed"] = done
        core["set_aside"] = [m for m in core["set_aside"] if m not in done]

    return edit(games.create("the-loop", players=players, seed=6), change)


def test_completing_a_mission_returns_cubes_reveals_a_new_one_and_the_reward():
    state = _full_mission_state(players=3)
    tile, slots = state.tiles[REN], len(state.progress[REN])
    green, red = state.supply("green"), state.supply("red")
    events = state.apply("end")
    assert tile in state.completed and state.tiles[REN] is None
    assert state.supply("green") + state.supply("red") == green + red + slots
    done = next(e for e in events if e.kind == "MissionCompleted")
    assert done.text.startswith("Mission completed in the Renaissance Era") and "1 of 4" in done.text
    new = next(e for e in events if e.kind == "MissionRevealed")
    assert new.era == "med"  # Dr. Foo's Era had an unrevealed tile
    assert len(state.reward) == 3 + 1 and state.phase == "reward" and state.current_player == 0


def test_attendance_reward_each_agent_picks_one_in_turn_order_rest_destroyed():
    state = _full_mission_state(players=2)
    state.apply("end")
    first, second, third = state.reward
    assert_illegal_unchanged(state, "take A99", "not among the revealed reward")
    assert_illegal_unchanged(state, "end", "attendance reward")
    state.apply(f"take {second}")
    assert state.agents[0]["draw"][0] == second and state.current_player == 1
    events = state.apply(f"take {third}")
    assert first in state.destroyed and "RewardDestroyed" in kinds(events)
    assert third in state.agents[1]["draw"] + state.agents[1]["hand"]  # Player 2 held 3 cards: no draw
    assert second in state.agents[0]["hand"]  # on top of the draw pile, then the refresh drew it
    assert state.active == 1 and state.phase == "landing"


def test_mission_not_completed_from_another_era_or_unfilled():
    state = _full_mission_state()
    state.agents[0]["era"] = IND
    state.apply("end")
    assert state.completed == []
    state = _full_mission_state()
    state.progress[REN].pop()
    state.apply("end")
    assert state.completed == []


def test_fourth_mission_wins():
    state = _full_mission_state(completed=3)
    events = state.apply("end")
    assert state.is_over and state.won and events[-1].winners == (0, 1) and events[-1].scores == (4, 4)
    assert "machine is destroyed" in events[-1].text and "share the win" in events[-1].text
    assert state.winners() == [0, 1] and state.scores() == [4, 4]


def test_progress_legal_and_illegal():
    def change(core: dict) -> None:
        core["revealed"][REN] = True
        core["energy"][REN] = 1
        core["rifts"][REN] = 1

    state = edit(actions_state(), change)
    slots = CAT.missions[state.tiles[REN]].slots
    colour = slots[0]
    (event,) = state.apply(f"progress {colour}")
    assert state.progress[REN] == [colour] and "slots filled" in event.text
    assert state.supply("green") + state.supply("red") + sum(state.energy) + sum(state.rifts) == 59
    if slots.count(colour) == 1:
        assert_illegal_unchanged(state, f"progress {colour}", f"no empty {colour} slot")
    else:
        assert_illegal_unchanged(state, f"progress {colour}", f"no {colour} cube")
    state = actions_state(era=IND, revealed=[False] * 7)
    assert_illegal_unchanged(state, "progress green", "no revealed mission")


# ----- agents' actions -----------------------------------------------------------------------------------------
def test_move_free_then_one_energy_then_refused():
    state = actions_state(energy=[1, 1, 1, 0, 1, 1, 1])
    events = state.apply("move ind")
    assert events[0].cost == 0 and "free move" in events[0].text and state.energy == [1, 1, 1, 0, 1, 1, 1]
    assert_illegal_unchanged(state, "move ren", "used your free move")
    state = actions_state()
    state.apply("move med")
    events = state.apply("move ren")
    assert events[0].cost == 1 and state.energy[MED] == 1 and "for 1 energy cube" in events[0].text
    assert_illegal_unchanged(state, "move glo", "adjacent to the Renaissance Era")


def test_loop_costs_1_2_3_in_a_turn():
    spiral = [c for c, a in CAT.artifacts.items() if a.dimension == "spiral"][:2]
    state = actions_state(hand=spiral, energy=[2, 2, 6, 2, 2, 2, 2])
    for cost, left in ((1, 5), (2, 3), (3, 0)):
        state.agents[0]["exhausted"] = list(spiral)
        (event,) = state.apply("loop spiral")
        assert event.cost == cost and state.energy[REN] == left
        assert state.agents[0]["exhausted"] == [] and f"for {cost} energy" in event.text


def test_loop_refused_without_energy_or_exhausted_cards():
    spiral = [c for c, a in CAT.artifacts.items() if a.dimension == "spiral"][:1]
    state = actions_state(hand=spiral, energy=[2, 2, 1, 2, 2, 2, 2])
    assert_illegal_unchanged(state, "loop spiral", "no exhausted spiral card")
    state.agents[0]["exhausted"] = list(spiral)
    state.apply("loop spiral")
    state.agents[0]["exhausted"] = list(spiral)
    assert_illegal_unchanged(state, "loop spiral", "LOOP number 2 this turn costs 2 energy")


def test_black_hole_cards_cannot_be_readied():
    hole = card_of("energy", "black hole")
    state = actions_state(hand=[hole])
    state.agents[0]["exhausted"] = [hole]
    assert_illegal_unchanged(state, "loop black hole", "Black Hole cards can never be readied")


def test_use_exhausts_and_an_exhausted_card_cannot_be_used():
    card = card_of("energy", amount=2, skip=())
    state = actions_state(hand=[card])
    events = state.apply(f"use {card} ren")
    assert card in state.agents[0]["exhausted"] and state.energy[REN] == 4
    assert events[0].text.endswith(f"({card}).") and "2 energy cubes added to the Renaissance Era." in events[1].text
    assert_illegal_unchanged(state, f"use {card} ren", "is exhausted")
    assert_illegal_unchanged(state, "use A77 ren", "not in your hand")


def test_energy_effect_range_and_empty_supply():
    card = next(c for c, a in CAT.artifacts.items() if a.effect.kind == "energy" and a.effect.range == 0)
    state = actions_state(hand=[card])
    assert_illegal_unchanged(state, f"use {card} ind", "not your Era")
    assert_illegal_unchanged(state, f"use {card}", "needs a target")
    state = actions_state(hand=[card], energy=[4, 4, 4, 4, 4, 4, 6])
    assert_illegal_unchanged(state, f"use {card} ren", "energy supply is empty")


def test_rift_effect():
    card = next(c for c, a in CAT.artifacts.items() if a.effect.kind == "rift" and a.effect.range == 1)
    state = actions_state(hand=[card], rifts=[0, 2, 0, 0, 0, 0, 0])
    assert_illegal_unchanged(state, f"use {card} ren", "no rift cubes in the Renaissance Era")
    assert_illegal_unchanged(state, f"use {card} glo", "not within 1 Era")
    state.apply(f"use {card} med")
    assert state.rifts[MED] == 2 - CAT.artifacts[card].effect.amount


def test_move_effect():
    card = next(c for c, a in CAT.artifacts.items() if a.effect.kind == "move" and a.effect.range == 2)
    state = actions_state(hand=[card])
    assert_illegal_unchanged(state, f"use {card} rob", "3 Eras away")
    assert_illegal_unchanged(state, f"use {card} ren", "already in that Era")
    state.apply(f"use {card} glo")
    assert state.agents[0]["era"] == GLO and not state.turn["free_move"]


def test_draw_and_discard_effects():
    draw = card_of("draw")
    discard = card_of("discard")
    state = actions_state(hand=[draw, discard])
    pile = len(state.agents[0]["draw"])
    state.apply(f"use {draw}")
    assert len(state.agents[0]["hand"]) == 2 + CAT.artifacts[draw].effect.amount
    assert_illegal_unchanged(state, f"use {discard} {discard}", "choose another card")
    state.apply(f"use {discard} {draw}")
    assert draw in state.agents[0]["discard"] and len(state.agents[0]["draw"]) < pile

    def empty_piles(core: dict) -> None:
        agent = core["agents"][0]
        core["destroyed"] += agent["draw"] + agent["discard"]
        agent["draw"], agent["discard"] = [], []

    state = edit(actions_state(hand=[draw]), empty_piles)
    assert_illegal_unchanged(state, f"use {draw}", "draw pile and discard pile are empty")


def test_reveal_acquire_and_destroy_artifact_effects():
    reveal, acquire, burn = card_of("reveal"), card_of("acquire"), card_of("destroy_artifact")
    target = next(c for c in CAT.huge_deck if c not in (reveal, acquire, burn))

    def change(core: dict) -> None:
        give(core, 0, [reveal, acquire, burn])
        place(core, target, IND)

    state = edit(actions_state(hand=[]), change)
    events = state.apply(f"use {reveal}")
    assert events[1].kind == "ArtifactRevealed"
    far = next(c for c in CAT.huge_deck if CAT.artifacts[c].era == ROB and c not in (reveal, acquire, burn))
    state = edit(state, lambda core: place(core, far, CAT.artifacts[far].era))
    reach = CAT.artifacts[acquire].effect.range
    assert distance(REN, ROB) > reach
    assert_illegal_unchanged(state, f"use {acquire} {far}", "not within")
    state.apply(f"use {acquire} {target}")
    assert state.agents[0]["draw"][0] == target and state.phase == "actions"
    state.apply(f"use {burn} {reveal}")
    assert reveal in state.destroyed and reveal not in state.agents[0]["hand"]
    assert_illegal_unchanged(state, f"use {burn} {reveal}", "exhausted")


def test_push_into_the_paradox_era_destroys_the_clone():
    push = card_of("push")
    state = edit(actions_state(hand=[push]), lambda core: put_clone(core, "ind1", REN))
    assert_illegal_unchanged(state, f"use {push} ind1", "say where to push it")
    assert_illegal_unchanged(state, f"use {push} ind1 to glo", "not an Era adjacent to yours")
    events = state.apply(f"use {push} ind1 to ind")
    assert kinds(events) == ["ArtifactUsed", "CloneMoved", "CloneDestroyed"]
    assert "enters its Paradox Era and is destroyed" in events[-1].text
    assert "ind1" in state.bag and state.clone_era("ind1") is None


def test_pull_and_carry_and_destroy_clone():
    pull, carry, zap = card_of("pull"), card_of("carry"), card_of("destroy_clone")

    def change(core: dict) -> None:
        give(core, 0, [pull, carry, zap])
        put_clone(core, "daw1", MED)
        put_clone(core, "glo2", REN)
        put_clone(core, "rob3", GLO)

    state = edit(actions_state(hand=[]), change)
    assert_illegal_unchanged(state, f"use {pull} rob3", "not in an Era adjacent")
    state.apply(f"use {pull} daw1")
    assert state.clone_era("daw1") == REN
    assert_illegal_unchanged(state, f"use {carry} rob3 to ind", "not in your Era")
    state.apply(f"use {carry} glo2 to ind")
    assert state.agents[0]["era"] == IND and state.clone_era("glo2") == IND
    assert_illegal_unchanged(state, f"use {zap} daw1", "not your Era")
    assert_illegal_unchanged(state, f"use {zap} ren4", "no clone ren4")
    events = state.apply(f"use {zap} glo2")
    assert "glo2" in state.bag and events[-1].text.startswith("Clone glo2 is destroyed")


def test_ability_once_per_turn():
    def change(core: dict) -> None:
        core["agents"][0]["code"] = "sweeper"  # ability: remove 1 rift cube from your Era

    state = edit(actions_state(rifts=[0, 0, 2, 0, 0, 0, 0]), change)
    events = state.apply("ability ren")
    assert state.rifts[REN] == 1 and "special ability" in events[0].text
    assert_illegal_unchanged(state, "ability ren", "once per turn")


def test_acquire_legal_then_action_phase_over():
    card = CAT.huge_deck[5]
    state = edit(actions_state(), lambda core: place(core, card, REN))
    state.apply(f"acquire {card}")
    assert state.agents[0]["draw"][0] == card and state.phase == "acquired"
    assert_illegal_unchanged(state, "move med", "action phase is over")
    assert state.legal_actions() == [games.the_loop.engine.End()]


def test_acquire_with_no_artifact_in_the_era():
    card = CAT.huge_deck[5]
    state = edit(actions_state(), lambda core: place(core, card, IND))
    assert_illegal_unchanged(state, f"acquire {card}", "not an artifact available in the Renaissance Era")


def test_refresh_discards_the_hand_and_everyone_draws_to_three():
    state = actions_state(players=3)
    state.agents[1]["discard"] += state.agents[1]["hand"][:2]
    del state.agents[1]["hand"][:2]
    hand, pile = list(state.agents[0]["hand"]), list(state.agents[0]["draw"])
    events = state.apply("end")
    assert state.agents[0]["discard"] == hand and state.agents[0]["hand"] == pile
    assert all(len(a["hand"]) == 3 for a in state.agents)
    assert kinds(events)[:2] == ["TurnEnded", "AgentTurn"] and state.active == 1 and state.phase == "landing"
    assert not any(state.turn.values())


def test_huge_deck_rebuilt_from_destroyed_pile():
    state = actions_state()

    def change(core: dict) -> None:
        core["destroyed"] += core["huge"]
        core["huge"] = []

    state = edit(state, change)
    events = state.reveal_artifacts(1)
    assert events[0].kind == "HugeDeckReshuffled" and state.destroyed == []


# ----- hidden information --------------------------------------------------------------------------------------
def test_view_hides_orders_and_face_down_tiles():
    state = games.create("the-loop", players=3, seed=9)
    twin = state.clone()
    rng = random.Random(1)
    rng.shuffle(twin.huge)
    rng.shuffle(twin.faux)
    for agent in twin.agents:
        rng.shuffle(agent["draw"])
    hidden = [e for e in range(7) if not twin.revealed[e]]
    tiles = [twin.tiles[e] for e in hidden] + twin.set_aside
    rng.shuffle(tiles)
    for e in hidden:
        twin.tiles[e] = tiles.pop()
    twin.set_aside = sorted(tiles)
    for p in (None, 0, 1, 2):
        assert twin.view(p) == state.view(p)
    text = json.dumps(state.view(0))
    for e in hidden:
        assert state.tiles[e] not in text
    assert all(card not in text for agent in state.agents for card in agent["draw"])
    assert all(era["mission"] == "?" for e, era in enumerate(state.view(0)["eras"]) if e in hidden)


def test_hands_are_open_in_a_cooperative_game():
    state = games.create("the-loop", players=2, seed=9)
    for p in (None, 0, 1):
        assert [c["code"] for c in state.view(p)["agents"][1]["hand"]] == state.agents[1]["hand"]
    assert "Player 2" in state.describe(0) and "Dr. Foo" in state.describe()


# ----- parsing and bad input -----------------------------------------------------------------------------------
TEXTS = [
    "rifts 1 2 1", "rifts auto", "move ind", "use A07", "use A07 ren", "use A07 A05", "use A14 ren2 to ind",
    "ability", "ability ren", "ability ren2 to ind", "loop spiral", "loop star", "loop stripe", "loop black hole",
    "progress green", "progress red at ind", "acquire A55", "take A55", "end", "foo", "add green ren 2",
    "remove green ren 1", "remove red ind 3", "clone ren2 to ind", "destroy ren2", "complete ind",
]  # fmt: skip


@pytest.mark.parametrize("text", TEXTS)
def test_text_forms_parse_back(text):
    action = TheLoop.parse_action(text)
    assert str(action) == text and TheLoop.parse_action(str(action)) == action


def test_parse_normalises():
    assert str(TheLoop.parse_action(" USE a7 Renaissance ")) == "use A07 ren"
    assert str(TheLoop.parse_action("move 4")) == "move ind"
    assert str(TheLoop.parse_action("move dawn")) == "move daw" and str(TheLoop.parse_action("move age")) == "move rob"
    assert str(TheLoop.parse_action("remove red ind")) == "remove red ind 1"
    assert str(TheLoop.parse_action("loop blackhole")) == "loop black hole"


@pytest.mark.parametrize(
    "text",
    ["", "fly", "rifts 1 2", "rifts x y z", "move", "move mars", "use", "use ren", "use A07 ren ind", "loop",
     "loop moon", "progress blue", "progress red ind", "acquire ren", "take", "end now", "foo bar", "add green",
     "add blue ren", "remove red ind 0", "clone ren2 ind", "clone ren9 to ind", "destroy A07", "complete"],
)  # fmt: skip
def test_parse_garbage(text):
    with pytest.raises(BadAction):
        TheLoop.parse_action(text)


@given(st.text(max_size=30))
def test_parse_never_crashes(text):
    try:
        action = TheLoop.parse_action(text)
    except BadAction:
        return
    assert TheLoop.parse_action(str(action)) == action


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("energy", [1] * 6, "state.state.energy"),
        ("rifts", [0, 0, 0, 0, 0, 0, "x"], r"state.state.rifts\[6\]"),
        ("phase", "nap", "state.state.phase"),
        ("active", 5, "state.state.active"),
        ("bag", [], "28 clone tokens"),
        ("huge", [], "exactly once"),
        ("energy", [9] * 7, "more green cubes"),
        ("turn", {"free_move": 1, "loops": 0, "ability": False}, "state.state.turn.free_move"),
        ("agents", [], "state.state.agents"),
    ],
)
def test_from_dict_names_the_broken_field(field, value, named):
    data = games.create("the-loop", seed=2).to_dict()
    data["state"][field] = value
    with pytest.raises(BadState, match=named):
        TheLoop.from_dict(data)


def test_from_dict_missing_field_and_bad_options():
    data = games.create("the-loop", seed=2).to_dict()
    del data["state"]["cycle"]
    with pytest.raises(BadState, match="cycle"):
        games.load(data)
    data = games.create("the-loop", seed=2).to_dict()
    data["options"]["difficulty"] = "insane"
    with pytest.raises(BadState, match=r"state\.options"):
        games.load(data)


@pytest.mark.parametrize(
    "options",
    [{"difficulty": "insane"}, {"scenario": "nope"}, {"scenario": 3}, {"catalogue": "/nonexistent/cat.json"},
     {"colour": "red"}],
)  # fmt: skip
def test_bad_options(options):
    with pytest.raises(GameError):
        games.create("the-loop", players=2, **options)


# ----- malformed catalogue and scenario ------------------------------------------------------------------------
def _write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def _catalogue() -> dict:
    return json.loads(Path(CAT.path).read_text())


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c["artifacts"][3]["effect"].update(kind="teleport"), "artifacts[3] (A04): effect.kind"),
        (lambda c: c["artifacts"][0].update(dimension="plaid"), "artifacts[0] (A01): dimension"),
        (lambda c: c["artifacts"][5].update(era="mars"), "artifacts[5] (A06): era"),
        (lambda c: c["artifacts"][2]["effect"].update(amount=0), "artifacts[2] (A03): effect.amount"),
        (lambda c: c["artifacts"][1].update(code="A01"), "artifacts[1]: code"),
        (lambda c: c["artifacts"][1].pop("name"), "artifacts[1] (A02): name: missing"),
        (lambda c: c["agents"][1]["artifacts"].pop(), "agents[1] (sweeper): artifacts"),
        (lambda c: c["agents"][2]["artifacts"].__setitem__(0, "A01"), "already another agent's"),
        (lambda c: c["agents"][0]["ability"]["effect"].update(kind="move", range=0), "agents[0] (chrono): ability"),
        (lambda c: c["missions"][4].update(slots=["blue"]), "missions[4] (M05): slots"),
        (lambda c: c.update(missions=c["missions"][:5]), "missions: expected at least 7"),
        (lambda c: c.pop("agents"), "agents: missing"),
    ],
)
def test_malformed_catalogue_names_file_entry_and_field(tmp_path, mutate, message):
    data = _catalogue()
    mutate(data)
    path = _write(tmp_path, "mycat.json", data)
    with pytest.raises(CatalogueError) as err:
        games.create("the-loop", players=2, catalogue=path)
    assert "mycat.json" in str(err.value) and message in str(err.value)


def test_catalogue_not_json(tmp_path):
    path = _write(tmp_path, "broken.json", "{not json")
    with pytest.raises(CatalogueError, match=r"broken.json: not valid JSON \(line 1"):
        load_catalogue(path)


def _scenario() -> dict:
    return json.loads(Path(load_scenario("basic").path).read_text())


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s["landing"].update(foo=0.9), "landing: previous/foo/next"),
        (lambda s: s["track"]["hard"]["clones"].pop(), "track.hard: clones"),
        (lambda s: s["track"]["easy"]["artifacts"][0].__setitem__(2, -1), "track.easy: artifacts"),
        (lambda s: s["setup"].update(foo_era="xyz"), "setup: foo_era"),
        (lambda s: s["setup"].update(energy_per_era="2"), "setup: energy_per_era: expected int"),
        (lambda s: s.update(clone_offsets=[0, 1, 2, 3]), "clone_offsets"),
        (lambda s: s["track"].pop("normal"), "track.normal: missing"),
    ],
)
def test_malformed_scenario_names_file_entry_and_field(tmp_path, mutate, message):
    data = _scenario()
    mutate(data)
    path = _write(tmp_path, "myscen.json", data)
    with pytest.raises(CatalogueError) as err:
        games.create("the-loop", players=2, scenario=path)
    assert "myscen.json" in str(err.value) and message in str(err.value)


def test_edited_scenario_file_is_used(tmp_path):
    data = _scenario()
    data["setup"]["energy_per_era"] = 0
    data["track"]["normal"]["clones"][0][0] = 4
    state = games.create("the-loop", players=2, seed=1, scenario=_write(tmp_path, "mine.json", data))
    assert sum(state.energy) == 0 and len(state.bag) == 24


# ----- replay --------------------------------------------------------------------------------------------------
def test_seeded_replay_and_different_seeds():
    a, b = games.create("the-loop", players=3, seed=21), games.create("the-loop", players=3, seed=21)
    assert a == b
    rng = random.Random(3)
    for _ in range(80):
        if a.is_over:
            break
        action = rng.choice(a.legal_actions(a.current_player))
        a.apply(action)
        b.apply(str(action))
        assert a == b
    c = games.create("the-loop", players=3, seed=22)
    assert (c.huge, c.faux, c.tiles) != (a.huge, a.faux, a.tiles) or c.agents != a.agents
