"""Loot Roll rules engine: every rule of the document and of the issue, legal and illegal, with messages."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import games
from games.core import BadAction, BadState, GameError, GameOver
from games.loot_roll.catalogue import load_catalogue
from games.loot_roll.engine import (
    PILES,
    Buy,
    Choose,
    Deposit,
    Done,
    Equip,
    Explore,
    Fight,
    LootRoll,
    Play,
    Roll,
)
from tests.invariants import assert_illegal_unchanged

CAT = load_catalogue()
FULL_BAG = "copper-coins copper-coins copper-coins silver-coin silver-coin old-map candle-stub"  # 7 cards, worth 16


# ----- helpers -----------------------------------------------------------------------------------------------
def position(
    players: int = 3,
    hands: list[str] | None = None,
    bags: list[str] | None = None,
    banks: list[str] | None = None,
    gear: list[dict[str, str]] | None = None,
    vendor: str = "",
    table: str = "",
    monster: str = "",
    discards: dict[str, str] | None = None,
    tops: dict[str, str] | None = None,
    **fields,
) -> LootRoll:
    """A state with the given cards (space-separated ids) where they are said to be and every other card in its
    deck, under `tops` (per pile; the last id is drawn first). `fields` overwrite other core fields. Goes through
    from_dict, so card conservation is checked."""
    state = LootRoll(players, seed=1)
    data = state.to_dict()
    core = data["state"]
    hands = hands or [""] * players
    bags = bags or [""] * players
    banks = banks or [""] * players
    gear = gear or [{} for _ in range(players)]
    discards = {pile: "" for pile in PILES} | (discards or {})
    tops = tops or {}
    placed = Counter(" ".join([*hands, *bags, *banks, vendor, table, monster]).split())
    for g in gear:
        placed.update(g.values())
    for text in [*discards.values(), *tops.values()]:
        placed.update(text.split())
    decks = {}
    for pile, cards in CAT.instances().items():
        rest = Counter(cards) - placed
        decks[pile] = " ".join(sorted(rest.elements()) + tops.get(pile, "").split())
    everything = Counter(c for cards in CAT.instances().values() for c in cards)
    assert not placed - everything, f"position uses cards the catalogue lacks: {placed - everything}"
    core.update(
        {
            "decks": decks,
            "discards": discards,
            "hands": hands,
            "bags": bags,
            "banks": banks,
            "gear": gear,
            "vendor": vendor,
            "table": table,
            "monster": monster,
        }
    )
    core.update(fields)
    data["history"] = []
    return LootRoll.from_dict(data)


def fight_position(players: int = 3, choices: list[str] | None = None, monster: str = "ogre", **kw) -> LootRoll:
    """The last fight-phase turn of a fight against `monster`: the next `done` resolves it."""
    choices = choices or ["fight"] * players
    kw.setdefault("current", (kw.get("turn", 0) + players - 1) % players)
    return position(players, monster=monster, phase="fight", choices=choices, fight_turns=players - 1, **kw)


def roll_position(players: int = 3, table: str = "silver-ring", choices: list[str] | None = None, **kw) -> LootRoll:
    choices = choices or ["fight"] * players
    rollers = kw.pop("rollers", [p for p in range(players) if choices[p] == "fight"])
    return position(
        players,
        table=table,
        phase="roll",
        choices=choices,
        rollers=rollers,
        rolls=[None] * len(rollers),
        current=rollers[0],
        **kw,
    )


def kinds(events) -> list[str]:
    return [e.kind for e in events]


def texts(events) -> list[str]:
    return [e.text for e in events]


# ----- setup -------------------------------------------------------------------------------------------------
def test_each_player_draws_one_ability_and_player_1_starts():
    state = games.create("loot-roll", players=4, seed=3)
    assert [len(h) for h in state.hands] == [1, 1, 1, 1]
    assert all(c in CAT.abilities for h in state.hands for c in h)
    assert state.current_player == 0 and state.phase == "turn" and state.dungeon == 1
    assert all(not b for b in state.bags) and [state.survivability(p) for p in range(4)] == [1, 1, 1, 1]


def test_survivability_starts_at_1_and_gear_adds_its_number():
    state = position(gear=[{"body": "chainmail", "head": "leather-cap"}, {}, {}])
    assert state.survivability(0) == 1 + 3 + 1 and state.survivability(1) == 1


# ----- explore -----------------------------------------------------------------------------------------------
def test_explore_draws_a_common_card_into_the_bag_and_ends_the_turn():
    state = position(tops={"common": "quartz"})
    events = state.apply("explore")
    assert state.bags[0] == ["quartz"] and state.current == 1 and state.turn == 1
    assert texts(events) == ["Player 1 explores the dungeon and puts a common loot card in the bag."]
    assert "quartz" not in json.dumps([e.to_dict() for e in events])  # the bag is face down


def test_gear_found_by_exploring_may_be_equipped_at_once_or_kept():
    """seeds/001, "Turn Phase Options": "Choosing to explore the dungeon means that the player draws one card from
    the common loot pile. The player may equip or use the loot if possible, or simply place it into their loot
    bag." (issue 23: until session 26 exploring ended the turn before the card could be equipped)"""
    state = position(tops={"common": "rusty-sword"}, bags=["leather-cap", "", ""], hands=["rally", "", ""])
    state.apply("explore")
    assert state.phase == "found" and state.current == 0 and state.bags[0] == ["leather-cap", "rusty-sword"]
    assert {str(a) for a in state.legal_actions()} == {"equip rusty-sword", "done"}
    assert_illegal_unchanged(state, "equip leather-cap", "only the card found (Rusty Sword)")
    assert_illegal_unchanged(state, "play rally", "only the card found")
    assert_illegal_unchanged(state, "fight", "this turn's was exploring")
    assert "Rusty Sword" in state.describe(0) and state.view(1)["found"] == "?"  # the bag is face down
    assert type(state).from_dict(json.loads(json.dumps(state.to_dict()))) == state
    events = state.apply("equip rusty-sword")
    assert state.gear[0] == {"main hand": "rusty-sword"} and state.current == 1 and state.phase == "turn"
    assert kinds(events) == ["Equipped"] and state.found == ""
    kept = position(tops={"common": "rusty-sword"})
    kept.apply("explore")
    assert kept.apply("done") == [] and kept.bags[0] == ["rusty-sword"] and kept.current == 1
    assert kept.gear[0] == {}


def test_a_saved_game_from_before_the_found_phase_loads():
    data = position().to_dict()
    del data["state"]["found"]
    assert LootRoll.from_dict(data).found == ""
    bad = position(tops={"common": "rusty-sword"})
    bad.apply("explore")
    broken = bad.to_dict()
    broken["state"]["found"] = "quartz"
    with pytest.raises(BadState, match="found"):
        LootRoll.from_dict(broken)


def test_explore_with_a_full_bag_is_refused():
    state = position(bags=[FULL_BAG, "", ""])
    assert_illegal_unchanged(state, "explore", "bag is full")
    assert Explore() not in state.legal_actions()


def test_explore_reshuffles_the_common_discard_pile_when_the_deck_is_empty():
    commons = " ".join(sorted(CAT.instances()["common"]))
    state = position(discards={"common": commons})
    assert not state.decks["common"]
    events = state.apply("explore")
    assert kinds(events)[0] == "Reshuffled" and "discard pile is shuffled" in events[0].text
    assert len(state.decks["common"]) == len(commons.split()) - 1 and not state.discards["common"]


def test_main_actions_only_on_a_dungeon_turn():
    state = position(phase="prep", monster="ogre")
    assert_illegal_unchanged(state, "explore", "main action of a dungeon turn")
    assert_illegal_unchanged(state, "discard quartz", "main action")


# ----- discard -----------------------------------------------------------------------------------------------
def test_discard_clears_loot_from_the_bag():
    state = position(bags=["quartz ruby tin-cup", "", ""])
    events = state.apply("discard ruby tin-cup")
    assert (
        state.bags[0] == ["quartz"] and state.discards["rare"] == ["ruby"] and state.discards["common"] == ["tin-cup"]
    )
    assert texts(events) == ["Player 1 discards Ruby and Tin Cup."] and state.current == 1


def test_discard_what_you_do_not_have_is_illegal():
    state = position(bags=["quartz", "", ""])
    assert_illegal_unchanged(state, "discard ruby", "no Ruby")
    assert_illegal_unchanged(state, "discard quartz quartz", "no Quartz")


# ----- equipment ---------------------------------------------------------------------------------------------
def test_equip_into_an_empty_slot():
    state = position(bags=["iron-helm", "", ""])
    (event,) = state.apply("equip iron-helm")
    assert state.gear[0] == {"head": "iron-helm"} and state.bags[0] == []
    assert event.text == "Player 1 equips Iron Helm (head)." and state.current == 0  # not a main action


def test_equip_into_an_occupied_slot_replaces_and_the_old_card_goes_to_the_bag():
    state = position(bags=["iron-helm", "", ""], gear=[{"head": "leather-cap"}, {}, {}])
    (event,) = state.apply("equip iron-helm")
    assert state.gear[0] == {"head": "iron-helm"} and state.bags[0] == ["leather-cap"]
    assert "putting Leather Cap back in the bag" in event.text


def test_two_handed_takes_both_hands_and_frees_both_when_replaced():
    state = position(bags=["war-axe", "", ""], gear=[{"main hand": "longsword", "off hand": "kite-shield"}, {}, {}])
    state.apply("equip war-axe")
    assert state.gear[0] == {"main hand": "war-axe"} and sorted(state.bags[0]) == ["kite-shield", "longsword"]
    assert state.survivability(0) == 1 + 4
    state.apply("equip kite-shield")  # an off-hand card pushes the two-handed card out of both hands
    assert state.gear[0] == {"off hand": "kite-shield"} and sorted(state.bags[0]) == ["longsword", "war-axe"]
    state.apply("equip longsword")
    assert state.gear[0] == {"main hand": "longsword", "off hand": "kite-shield"}


def test_two_handed_replacing_two_cards_needs_room_in_the_bag():
    bag = "war-axe " + FULL_BAG.rsplit(" ", 1)[0]
    state = position(bags=[bag, "", ""], gear=[{"main hand": "longsword", "off hand": "kite-shield"}, {}, {}])
    assert_illegal_unchanged(state, "equip war-axe", "no room in your bag")


def test_dequip_without_a_replacement_is_illegal():
    state = position(gear=[{"head": "iron-helm"}, {}, {}])
    assert_illegal_unchanged(state, "dequip iron-helm", "must have an equipment card to replace it")
    assert not any(str(a).startswith("dequip") for a in state.legal_actions())


def test_equip_illegal_cases():
    state = position(bags=["ruby", "", ""])
    assert_illegal_unchanged(state, "equip ruby", "no gear slot")
    assert_illegal_unchanged(state, "equip iron-helm", "no Iron Helm")
    assert_illegal_unchanged(state, "equip dragon-claw", "no card 'dragon-claw'")
    rolling = roll_position(bags=["iron-helm", "", ""])
    assert_illegal_unchanged(rolling, "equip iron-helm", "roll phase")


# ----- fight and preparation ---------------------------------------------------------------------------------
def test_fight_draws_a_monster_and_everyone_prepares():
    state = position(tops={"monster": "ogre"})
    (event,) = state.apply("fight")
    assert state.phase == "prep" and state.monster == "ogre" and state.current == 0
    assert event.text == (
        "Player 1 draws the Ogre, to be fought at 7 survivability: prepare and choose fight or flight."
    )


def test_choices_are_sequential_and_hidden_until_all_are_made():
    state = position(turn=1, current=1, phase="prep", monster="ogre")
    (event,) = state.apply("choose fight")
    assert event.text == "Player 2 plays a choice card face down." and state.current == 2
    assert state.view(0)["players"][1]["choice"] == "?" and state.view(1)["players"][1]["choice"] == "fight"
    assert state.view(None)["players"][1]["choice"] == "?" and state.view(0)["players"][0]["choice"] == ""
    assert "fight" not in json.dumps(state.view(2)["players"][1])
    state.apply("choose flight")
    assert state.current == 0
    events = state.apply("choose fight")
    assert kinds(events) == ["ChoiceMade", "ChoicesRevealed"]
    assert events[1].text == "The choice cards are turned over: Player 2 and Player 1 fight; Player 3 flees."
    assert state.phase == "fight" and state.current == 1
    assert [p["choice"] for p in state.view(2)["players"]] == ["fight", "fight", "flight"]


def test_all_flee_puts_the_monster_at_the_bottom_of_the_monster_deck():
    state = position(2, phase="prep", monster="ogre", choices=["flight", ""], current=1)
    events = state.apply("choose flight")
    assert kinds(events) == ["ChoiceMade", "ChoicesRevealed", "AllFled"]
    assert events[-1].text == "Everyone runs; the Ogre goes to the bottom of the monster deck."
    assert state.decks["monster"][0] == "ogre" and state.monster == "" and state.current == 1 and state.phase == "turn"


def test_choose_outside_the_preparation_phase_is_illegal():
    assert_illegal_unchanged(position(), "choose fight", "preparation phase")


def test_party_must_exceed_the_monster_document_example_wins_9_to_7():
    gear = [{"body": "chainmail", "head": "leather-cap"}, {"main hand": "longsword"}, {}]
    state = fight_position(choices=["fight", "fight", "flight"], gear=gear, tops={"common": "quartz", "rare": "ruby"})
    events = state.apply("done")
    assert events[0].text == "The party wins with 9 survivability against the Ogre's 7."
    assert events[0].won and state.phase == "roll" and state.defeated == 1
    assert state.table == ["quartz", "ruby"]  # lowest treasure value first
    assert events[1].text == "The Ogre drops Quartz and Ruby."
    assert state.discards["monster"] == ["ogre"] and state.monster == ""


def test_equal_totals_lose_and_each_fighter_loses_that_many_loot_cards_at_random():
    # Ogre: 7 against 4 + 3; it would have dropped 2 cards.
    gear = [{"body": "chainmail"}, {"main hand": "iron-dagger", "head": "leather-cap"}, {}]
    bags = ["quartz ruby tin-cup", "glass-bead", "silver-ring"]
    state = fight_position(choices=["fight", "fight", "flight"], gear=gear, bags=bags)
    events = state.apply("done")
    assert events[0].text == "The party is defeated with 7 survivability against the Ogre's 7."
    assert not events[0].won and len(state.bags[0]) == 1 and state.bags[1] == [] and state.bags[2] == ["silver-ring"]
    lost = [e for e in events if e.kind == "LootLost"]
    assert [len(e.cards) for e in lost] == [2, 1] and lost[0].text.startswith("Player 1 loses ")
    assert state.discards["monster"] == ["ogre"] and state.phase == "turn" and state.current == 1
    assert Counter(state.discards["common"] + state.discards["rare"]) == Counter(["glass-bead"]) + Counter(
        c for c in ["quartz", "ruby", "tin-cup"] if c not in state.bags[0]
    )


def test_fight_phase_gives_every_player_one_turn():
    state = position(phase="fight", monster="goblin", choices=["flight", "fight", "fight"], turn=0, current=0)
    assert state.legal_actions()[-1] == Done()
    state.apply("done")
    assert state.current == 1 and state.phase == "fight"
    state.apply("done")
    assert state.current == 2
    events = state.apply("done")
    assert events[0].kind == "FightResult"


def test_done_on_a_dungeon_turn_is_illegal():
    assert_illegal_unchanged(position(), "done", "explore, fight or discard")


# ----- cards and effects -------------------------------------------------------------------------------------
def test_magic_lute_gives_plus_2_to_the_other_fighters_only():
    state = fight_position(choices=["fight", "fight", "flight"], gear=[{"off hand": "magic-lute"}, {}, {}])
    assert CAT.loot["magic-lute"].value == 8 and CAT.loot["magic-lute"].survivability == 0
    assert state.survivability(0) == 1 and state.survivability(1) == 3 and state.survivability(2) == 1
    assert state.party_total() == 4
    alone = fight_position(choices=["fight", "flight", "flight"], gear=[{"off hand": "magic-lute"}, {}, {}])
    assert alone.party_total() == 1
    away = fight_position(choices=["flight", "fight", "fight"], gear=[{"off hand": "magic-lute"}, {}, {}])
    assert away.party_total() == 2  # the lute's owner must be in the fight


def test_only_you_fight():
    state = position(phase="prep", monster="ogre", hands=["", "lone-hero", ""], choices=["fight", "", ""], current=1)
    events = state.apply("play lone-hero")
    assert kinds(events) == ["Played", "ChoicesRevealed"]
    assert events[1].text == "Only Player 2 fights this monster."
    assert state.choices == ["flight", "fight", "flight"] and state.phase == "fight"
    assert state.discards["ability"] == ["lone-hero"] and state.hands[1] == []


def test_only_you_fight_only_in_the_preparation_phase():
    state = position(hands=["lone-hero", "", ""])
    assert_illegal_unchanged(state, "play lone-hero", "during the preparation phase, not during your dungeon turn")


def test_immunity_ignores_cards_that_lower_survivability():
    hands = ["hex", "iron-will", ""]
    state = position(phase="prep", monster="ogre", hands=hands, gear=[{}, {"body": "chainmail"}, {}], current=0)
    state.apply("play hex on 2")
    assert state.survivability(1) == 1  # 4 - 3
    state.apply("choose fight")
    state.apply("play iron-will")
    assert state.survivability(1) == 4 and state.is_immune(1)
    assert state.view(0)["players"][1]["immune"]


def test_hex_lowers_a_player_who_is_not_immune_but_never_below_0():
    state = position(phase="fight", monster="ogre", hands=["sabotage", "", ""], choices=["fight"] * 3)
    state.apply("play sabotage on 2")
    assert state.survivability(1) == 0 and state.party_total() == 2


def test_party_and_monster_modifiers():
    state = position(
        phase="fight", monster="ogre", hands=["battle-cry weak-spot", "", ""], choices=["fight", "fight", "flight"]
    )
    (event,) = state.apply("play battle-cry")
    assert event.text == "Player 1 plays Battle Cry: +2 survivability to the party."
    assert state.party_total() == 6 and state.survivability(2) == 1
    state.apply("play weak-spot")
    assert state.monster_total() == 4


def test_play_illegal_cases():
    state = position(
        phase="fight", monster="ogre", hands=["hex", "", ""], bags=["magic-lute ruby", "", ""], choices=["fight"] * 3
    )
    assert_illegal_unchanged(state, "play hex", "needs a target player")
    assert_illegal_unchanged(state, "play battle-cry", "no Battle Cry")
    assert_illegal_unchanged(state, "play hex on 5", "no Player 5")
    assert_illegal_unchanged(state, "play magic-lute", "works while it is equipped")
    assert_illegal_unchanged(state, "play ruby", "no effect to use")
    assert_illegal_unchanged(state, "play ogre", "monster")


def test_usable_loot_is_played_from_the_bag_and_discarded():
    state = position(phase="fight", monster="ogre", bags=["potion-of-might", "", ""], choices=["fight"] * 3)
    state.apply("play potion-of-might")
    assert state.survivability(0) == 4 and state.bags[0] == [] and state.discards["rare"] == ["potion-of-might"]


def test_effects_beyond_the_engine_are_announced_to_resolve_by_hand():
    state = position(hands=["sixth-sense", "", ""])
    events = state.apply("play sixth-sense")
    assert (
        events[-1].text == "Resolve by hand: Look at the top card of the monster deck, then put it back (Sixth Sense)."
    )
    state = position(tops={"monster": "mimic"})
    events = state.apply("fight")
    assert kinds(events) == ["MonsterDrawn", "ResolveByHand"]
    assert events[1].text.startswith("Resolve by hand: When revealed, every player")


# ----- roll phase --------------------------------------------------------------------------------------------
def test_roll_winner_and_announcement():
    state = roll_position(choices=["fight", "fight", "flight"])
    state.apply("roll 1 12")
    events = state.apply("roll 2 17")
    assert events[-1].text == "Player 2 wins the Silver Ring with a roll of 17."
    assert state.bags[1] == ["silver-ring"] and state.phase == "turn" and state.current == 1


def test_cards_are_rolled_for_from_the_lowest_treasure_value_up():
    gear = [{"body": "chainmail"}, {"main hand": "war-axe"}, {}]
    state = fight_position(
        choices=["fight", "fight", "flight"],
        monster="orc-brute",
        gear=gear,
        tops={"common": "quartz tin-cup", "rare": "silver-ring"},
    )
    state.apply("done")
    assert state.table == ["tin-cup", "quartz", "silver-ring"]
    state.apply("roll 1 5")
    events = state.apply("roll 2 9")
    assert events[-1].text == "Player 2 wins the Tin Cup with a roll of 9." and state.table[0] == "quartz"


def test_roll_by_a_non_fighter_is_illegal():
    state = roll_position(choices=["fight", "fight", "flight"])
    assert_illegal_unchanged(state, "roll 3 20", "only players who fought roll")


def test_roll_out_of_order_or_off_the_die_is_illegal():
    state = roll_position()
    assert_illegal_unchanged(state, "roll 2 11", "Player 1 rolls for the Silver Ring first")
    assert_illegal_unchanged(state, "roll 1 21", "a d20 shows 1 to 20")
    assert_illegal_unchanged(state, "roll 1 0", "a d20 shows 1 to 20")
    state.apply("roll 1 4")
    assert_illegal_unchanged(state, "roll 1 11", "already rolled")
    assert_illegal_unchanged(position(), "roll auto", "nothing to roll for")


def test_a_full_bag_cannot_roll():
    full = FULL_BAG
    state = roll_position(bags=["", full, ""], rollers=[0, 2])
    assert_illegal_unchanged(state, "roll 2 20", "bag is full")
    # Winning a fight with a full bag: the player is left out of every roll.
    state = fight_position(
        choices=["fight", "fight", "fight"],
        bags=["", full, ""],
        gear=[{"body": "chainmail"}, {"main hand": "war-axe"}, {"main hand": "longsword"}],
        tops={"common": "tin-cup", "rare": "ruby"},
    )
    state.apply("done")
    assert state.rollers == [0, 2]


def test_one_eligible_roller_takes_the_card_and_none_discards_it():
    state = fight_position(
        2,
        choices=["fight", "flight"],
        monster="slime",
        gear=[{"body": "chainmail"}, {}],
        tops={"common": "tin-cup quartz"},
    )
    events = state.apply("done")
    assert "Player 1 takes the Tin Cup: nobody else can roll for it." in texts(events)
    assert sorted(state.bags[0]) == ["quartz", "tin-cup"] and state.phase == "turn"
    full = FULL_BAG
    state = fight_position(
        2,
        choices=["fight", "flight"],
        monster="slime",
        gear=[{"body": "chainmail"}, {}],
        bags=[full, ""],
        tops={"common": "tin-cup quartz"},
    )
    events = state.apply("done")
    assert "Nobody who fought has room in their bag for the Tin Cup; it is discarded." in texts(events)
    assert sorted(state.discards["common"]) == ["quartz", "tin-cup"]


def test_ties_are_rerolled_between_the_tied_players_only():
    state = roll_position()
    state.apply("roll 1 15")
    state.apply("roll 2 15")
    events = state.apply("roll 3 9")
    assert events[-1].text == "Player 1 and Player 2 tie at 15 and roll again for the Silver Ring."
    assert state.rollers == [0, 1] and state.current == 0
    assert_illegal_unchanged(state, "roll 3 20", "re-roll is between the tied players")
    state.apply("roll 1 3")
    events = state.apply("roll 2 8")
    assert events[-1].text == "Player 2 wins the Silver Ring with a roll of 8."


def test_roll_modifiers_can_push_a_roll_past_20():
    state = roll_position(hands=["loaded-die", "jinx", ""], choices=["fight", "fight", "flight"])
    (event,) = state.apply("play loaded-die")
    assert event.text == "Player 1 plays Loaded Die: +3 to the roll."
    events = state.apply("roll 1 20")
    assert events[0].text == "Player 1 rolls 20, 23 with modifiers."
    state.apply("play jinx on 2")
    events = state.apply("roll 2 2")
    assert events[0].total == -1  # lower than 1 is fine too
    assert events[-1].text == "Player 1 wins the Silver Ring with a roll of 23."


def test_roll_card_target_must_be_in_the_roll():
    state = roll_position(hands=["jinx", "", ""], choices=["fight", "fight", "flight"])
    assert_illegal_unchanged(state, "play jinx on 3", "not rolling for the Silver Ring")


def test_any_player_may_use_roll_cards_during_a_roll_out_of_turn():
    """seeds/001, "Roll Phase": "During a roll, players may use cards to increase their roll or decrease others
    roll (roll values can be higher than 20/lower than 1)." (issue 23: until session 26 only the player about to
    roll could play a roll card)"""
    state = roll_position(hands=["", "loaded-die", "jinx"], choices=["fight", "fight", "flight"])
    assert state.current == 0 and 2 in state.actors() and 1 in state.actors()
    assert {str(a) for a in state.legal_actions(2)} == {"play jinx on 1 by 3", "play jinx on 2 by 3"}
    events = state.apply("play jinx on 1 by 3")  # Player 3 did not fight, yet lowers Player 1's roll
    assert events[0].text.startswith("Player 3 plays Jinx on Player 1") and state.current == 0
    assert state.hands[2] == [] and state.roll_bonus(0) == -3
    state.apply("play loaded-die by 2")  # Player 2 raises their own roll before Player 1 has rolled
    assert state.roll_bonus(1) == 3 and state.current == 0
    assert_illegal_unchanged(state, "play loaded-die by 2", "Player 2 has no Loaded Die")
    state.apply("roll 1 12")
    events = state.apply("roll 2 9")
    assert events[-1].text == "Player 2 wins the Silver Ring with a roll of 12."
    # only roll cards, only in the roll phase, and raising a roll needs a roll of one's own
    bystander = roll_position(hands=["", "", "loaded-die rally"], choices=["fight", "fight", "flight"])
    assert_illegal_unchanged(bystander, "play loaded-die by 3", "not rolling for the Silver Ring")
    assert_illegal_unchanged(bystander, "play rally by 3", "out of turn only roll cards")
    assert_illegal_unchanged(position(hands=["", "jinx", ""]), "play jinx on 1 by 2", "during the roll phase")
    assert str(LootRoll.parse_action("play jinx on 1 by 3")) == "play jinx on 1 by 3"


def test_passive_roll_bonus_of_gear():
    state = roll_position(gear=[{"feet": "lucky-boots"}, {}, {}], choices=["fight", "fight", "flight"])
    state.apply("roll 1 10")
    events = state.apply("roll 2 11")
    assert events[-1].text == "Player 1 and Player 2 tie at 11 and roll again for the Silver Ring."


def test_roll_auto_draws_from_the_seed():
    a, b = roll_position(), roll_position()
    ea, eb = a.apply("roll auto"), b.apply("roll auto")
    assert ea == eb and 1 <= ea[0].value <= 20 and a.current == 1


# ----- the discard-pile monster ------------------------------------------------------------------------------
def test_discard_pile_monster_takes_loot_from_the_discard_pile():
    gear = [{"body": "chainmail"}, {"main hand": "war-axe"}, {}]
    text = CAT.monsters["scavenger"].text
    assert (
        text == "If defeated, all loot is taken from the discard pile. If the pile is empty, draw loot cards normally."
    )
    state = fight_position(
        choices=["fight", "fight", "flight"],
        monster="scavenger",
        gear=gear,
        discards={"common": "tin-cup bone-dice"},
        tops={"common": "quartz"},
    )
    state.apply("done")
    assert sorted(state.table) == ["bone-dice", "tin-cup"] and state.discards["common"] == []
    assert state.decks["common"][-1] == "quartz"


def test_discard_pile_monster_with_an_empty_pile_draws_normally():
    gear = [{"body": "chainmail"}, {"main hand": "war-axe"}, {}]
    state = fight_position(
        choices=["fight", "fight", "flight"],
        monster="scavenger",
        gear=gear,
        discards={"common": "tin-cup"},
        tops={"common": "quartz"},
    )
    state.apply("done")
    assert sorted(state.table) == ["quartz", "tin-cup"]


# ----- dungeon progression -----------------------------------------------------------------------------------
def test_boss_forced_after_4_regular_monsters():
    gear = [{"body": "chainmail"}, {}, {}]
    state = fight_position(choices=["fight", "flight", "flight"], monster="slime", gear=gear, defeated=3)
    events = state.apply("done")
    assert "BossForced" in kinds(events)
    assert "The party has defeated 4 monsters in dungeon 1: from now on it must fight the boss." in texts(events)
    assert state.defeated == 4 and state.phase == "turn"
    assert_illegal_unchanged(state, "fight", "must fight the boss")
    assert Fight(False) not in state.legal_actions() and Fight(True) in state.legal_actions()
    state.apply("fight boss")
    assert state.boss and state.phase == "prep"


def test_a_boss_can_be_fought_any_time_with_its_boss_numbers():
    state = position(tops={"monster": "ogre"})
    (event,) = state.apply("fight boss")
    assert (
        event.text
        == "Player 1 draws the Ogre, to be fought as a boss at 12 survivability: prepare and choose fight or flight."
    )
    assert state.monster_total() == 12


def test_a_defeated_boss_clears_the_dungeon_and_the_party_goes_to_town():
    gear = [{"body": "chainmail"}, {"body": "mithril-shirt"}, {}]
    state = fight_position(
        choices=["fight", "fight", "flight"],
        monster="slime",
        gear=gear,
        boss=True,
        turn=1,
        tops={"common": "tin-cup quartz", "ability": "hex rally"},
    )
    events = state.apply("done")
    assert events[0].won
    state.apply("roll 2 3")
    state.apply("roll 1 9")
    state.apply("roll 2 5")
    events = state.apply("roll 1 2")
    assert state.bags == [["tin-cup"], ["quartz"], []]
    assert "The boss is defeated: dungeon 1 of 3 is cleared." in texts(events)
    assert state.phase == "town" and state.current == 2 and len(state.vendor) == 5  # after Player 2 comes Player 3
    assert state.vendor[:2] == ["rally", "hex"]
    assert events[-1].text.startswith("The party reaches town; the vendor offers Rally, Hex, ")
    assert events[-1].text.endswith("and Player 3 starts.")
    assert state.dungeon == 1 and state.defeated == 0


# ----- town --------------------------------------------------------------------------------------------------
def town(players: int = 3, **kw) -> LootRoll:
    vendor = kw.pop("vendor", "lone-hero hex rally battle-cry loaded-die")
    start = kw.pop("start", 0)
    return position(
        players,
        phase="town",
        vendor=vendor,
        current=start,
        turn=start,
        town={"start": start, "turns": 0, "mode": "", "bought": 0},
        **kw,
    )


def test_buy_pays_with_loot_and_the_vendor_refills():
    state = town(bags=["quartz silver-coin tin-cup", "", ""], tops={"ability": "jinx"})
    (event, *_) = state.apply("buy lone-hero with quartz silver-coin")
    assert event.text == "Player 1 buys Lone Hero, paying with Quartz and Silver Coin."
    assert state.hands[0] == ["lone-hero"] and state.bags[0] == ["tin-cup"]
    assert sorted(state.discards["common"]) == ["quartz", "silver-coin"]
    assert "jinx" in state.vendor and "lone-hero" not in state.vendor and len(state.vendor) == 5
    assert state.current == 0  # up to three purchases in one turn


def test_buying_with_too_little_loot_is_illegal():
    state = town(bags=["quartz tin-cup", "", ""])
    assert_illegal_unchanged(
        state, "buy lone-hero with quartz tin-cup", "worth 5, less than the price of Lone Hero (6)"
    )
    assert_illegal_unchanged(state, "buy war-drums with quartz", "does not offer War Drums")
    assert_illegal_unchanged(state, "buy hex with ruby", "no Ruby")
    assert not [a for a in state.legal_actions() if isinstance(a, Buy) and a.card == "lone-hero"]


def test_paying_more_than_the_price_is_allowed_and_gives_no_change():
    """seeds/001, "Town Phase": "When buying from the vendor players must pay (discard) loot cards equal or higher
    than the value of the ability card." (issue 23: until session 26 a card not needed was refused)"""
    state = town(bags=["quartz silver-coin tin-cup", "", ""])
    assert Buy("hex", ("quartz",)) in state.legal_actions()
    assert Buy("hex", ("quartz", "tin-cup")) in state.legal_actions()
    state.apply("buy hex with quartz tin-cup")
    assert state.bags[0] == ["silver-coin"] and "hex" in state.hands[0]
    assert sorted(state.discards["common"]) == ["quartz", "tin-cup"]  # both paid, nothing back


def test_three_purchases_end_the_town_turn():
    state = town(bags=["quartz silver-coin bronze-brooch ruby", "", ""])
    state.apply("buy rally with quartz")
    state.apply("buy hex with bronze-brooch")
    assert state.current == 0
    state.apply("buy battle-cry with ruby")
    assert state.current == 1 and state.town["turns"] == 1 and sorted(state.hands[0]) == ["battle-cry", "hex", "rally"]


def test_deposit_moves_loot_to_the_bank_and_a_turn_is_buying_or_depositing():
    state = town(bags=["quartz ruby", "", ""])
    (event,) = state.apply("deposit ruby")
    assert event.text == "Player 1 deposits a loot card in the bank." and state.banks[0] == ["ruby"]
    assert_illegal_unchanged(state, "buy rally with quartz", "either buying or depositing")
    state.apply("deposit quartz")
    state.apply("done")
    assert state.current == 1
    bought = town(bags=["quartz ruby", "", ""])
    bought.apply("buy rally with quartz")
    assert_illegal_unchanged(bought, "deposit ruby", "either buying or depositing")
    assert_illegal_unchanged(position(bags=["ruby", "", ""]), "deposit ruby", "in town")


def test_two_town_turns_each_then_the_next_dungeon():
    state = town(start=2, vendor="lone-hero hex")
    for expected in [2, 0, 1, 2, 0, 1]:
        assert state.current == expected and state.phase == "town"
        events = state.apply("done")
    assert texts(events) == ["The party enters dungeon 2 of 3; Player 3 goes first."]
    assert state.phase == "turn" and state.current == 2 and state.dungeon == 2 and state.defeated == 0
    assert sorted(state.discards["ability"]) == ["hex", "lone-hero"] and state.vendor == []


# ----- the end -----------------------------------------------------------------------------------------------
def test_third_boss_ends_the_game_bag_and_bank_count_equipped_does_not():
    gear = [{"body": "mithril-shirt"}, {"body": "chainmail"}, {}]
    state = fight_position(
        choices=["fight", "flight", "flight"],
        monster="slime",
        gear=gear,
        boss=True,
        dungeon=3,
        bags=["ruby", "", "quartz"],
        banks=["", "dragon-egg", ""],
        tops={"common": "old-map tin-cup"},
    )
    events = state.apply("done")
    assert "The boss is defeated: dungeon 3 of 3 is cleared." in texts(events) and state.phase == "end"
    assert state.current == 0 + 1  # the player after the one whose turn it was
    assert state.scores() == [8 + 1 + 1, 18, 4]  # mithril shirt (14) is equipped: not counted
    state.apply("done")
    state.apply("done")
    events = state.apply("done")
    assert kinds(events) == ["FinalRanking", "GameOver"]
    assert events[0].text == "Final ranking: 1. Player 2 with 18, 2. Player 1 with 10, 3. Player 3 with 4."
    assert isinstance(events[-1], GameOver) and events[-1].winners == (1,) and events[-1].scores == (10, 18, 4)
    assert state.is_over and state.current_player is None and state.legal_actions() == []
    assert_illegal_unchanged(state, "explore", "game is over")


def test_gear_can_be_swapped_out_at_the_end_to_count_its_value():
    state = position(
        phase="end",
        gear=[{"body": "mithril-shirt"}, {}, {}],
        bags=["cloth-tunic", "", ""],
        town={"start": 0, "turns": 0, "mode": "", "bought": 0},
    )
    assert state.scores()[0] == 2
    state.apply("equip cloth-tunic")
    assert state.scores()[0] == 14
    assert_illegal_unchanged(state, "dequip cloth-tunic", "replace it")


def test_tied_scores_share_the_win():
    state = position(
        phase="end",
        bags=["ruby", "quartz bronze-brooch", ""],
        current=2,
        turn=0,
        town={"start": 0, "turns": 2, "mode": "", "bought": 0},
    )
    events = state.apply("done")
    assert events[-1].winners == (0, 1) and state.winners() == [0, 1]
    assert events[0].text == "Final ranking: 1. Player 1 with 8, 1. Player 2 with 8, 3. Player 3 with 0."
    assert "Player 1 and Player 2 share the win" in events[-1].text


# ----- views and hidden information --------------------------------------------------------------------------
def test_views_hide_hands_bags_banks_and_decks():
    state = position(
        hands=["hex", "rally", ""],
        bags=["ruby", "quartz", ""],
        banks=["", "dragon-egg", ""],
        gear=[{"head": "iron-helm"}, {}, {}],
    )
    view = state.view(0)
    assert view["players"][0]["hand"] == ["hex"] and view["players"][0]["bag"] == ["ruby"]
    others = json.dumps(view["players"][1:])
    assert "rally" not in others and "quartz" not in others and "dragon-egg" not in others
    assert view["players"][1]["hand_size"] == 1 and view["players"][1]["bank_size"] == 1
    assert view["players"][0]["gear"] == {"head": "iron-helm"} and view["decks"]["monster"] == len(
        state.decks["monster"]
    )
    spectator = json.dumps(state.view(None))
    assert "hex" not in spectator and "ruby" not in spectator and "iron-helm" in spectator
    text = state.describe(0)
    assert "Iron Helm" in text and "Ruby" in text and "Dragon Egg" not in text


def test_the_spectator_view_and_describe_during_a_roll():
    state = roll_position(table="tin-cup silver-ring")
    text = state.describe(None)
    assert "To roll for: Tin Cup, Silver Ring" in text and state.view(None)["table"] == ["tin-cup", "silver-ring"]


# ----- parsing and bad input ---------------------------------------------------------------------------------
ALL_TEXTS = [
    "explore",
    "fight",
    "fight boss",
    "discard quartz",
    "discard quartz ruby",
    "equip iron-helm",
    "dequip iron-helm",
    "play hex on 2",
    "play rally",
    "choose fight",
    "choose flight",
    "done",
    "roll 2 17",
    "roll auto",
    "buy hex with quartz ruby",
    "deposit ruby",
]


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_text_forms_parse_back(text):
    action = LootRoll.parse_action(text)
    assert str(action) == text and LootRoll.parse_action(str(action)) == action


def test_parse_normalizes():
    assert str(LootRoll.parse_action("  Discard RUBY quartz ")) == "discard quartz ruby"
    assert LootRoll.parse_action("ROLL 2 17") == Roll(1, 17)
    assert LootRoll.parse_action("choose fight") == Choose(True)
    assert LootRoll.parse_action("buy hex with ruby quartz") == Buy("hex", ("quartz", "ruby"))
    assert LootRoll.parse_action("play hex on 3") == Play("hex", 2)
    assert LootRoll.parse_action("deposit ruby") == Deposit("ruby") and LootRoll.parse_action("equip x") == Equip("x")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "dance",
        "explore now",
        "fight dragon",
        "discard",
        "equip",
        "play",
        "play hex at 2",
        "play hex on 0",
        "roll 2",
        "roll 0 5",
        "roll x 5",
        "roll 2 x",
        "buy hex",
        "buy hex for ruby",
        "deposit",
        "choose run",
        "equip -x",
        "equip a_b",
        "done now",
    ],
)
def test_parse_garbage(text):
    with pytest.raises(BadAction):
        LootRoll.parse_action(text)


@given(st.text(max_size=30))
def test_parse_never_crashes(text):
    try:
        action = LootRoll.parse_action(text)
    except BadAction:
        return
    assert LootRoll.parse_action(str(action)) == action


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("phase", "dance", "state.state.phase"),
        ("dungeon", 4, "state.state.dungeon"),
        ("current", 3, "state.state.current"),
        ("hands", ["hex", "", ""], "exactly once"),
        ("hands", ["ruby", "", ""], "state.state.hands[0]"),
        ("bags", [FULL_BAG + " quartz", "", ""], "state.state.bags[0]"),
        ("bags", ["", ""], "state.state.bags"),
        ("gear", [{"hat": "iron-helm"}, {}, {}], "state.state.gear[0].hat"),
        ("gear", [{"head": "ruby"}, {}, {}], "state.state.gear[0].head"),
        ("choices", ["maybe", "", ""], "state.state.choices[0]"),
        ("decks", {"ability": ""}, "state.state.decks"),
        ("monster", "dragon-lord", "state.state.monster"),
        ("town", {"start": 0}, "state.state.town"),
        ("mods", [{"owner": 0}], "state.state.mods[0]"),
    ],
)
def test_from_dict_names_the_broken_field(field, value, named):
    data = games.create("loot-roll", seed=2).to_dict()
    data["state"][field] = value
    with pytest.raises(BadState, match=named.replace("[", r"\[").replace("]", r"\]")):
        LootRoll.from_dict(data)


def test_from_dict_missing_field_and_bad_catalogue_option():
    data = games.create("loot-roll", seed=2).to_dict()
    del data["state"]["defeated"]
    with pytest.raises(BadState, match="defeated"):
        games.load(data)
    data = games.create("loot-roll", seed=2).to_dict()
    data["options"]["catalogue"] = "/nonexistent/cards.json"
    with pytest.raises(BadState, match=r"state.options.catalogue: cards.json: cannot read"):
        games.load(data)


@pytest.mark.parametrize(
    ("players", "options"),
    [(1, {}), (7, {}), (3, {"catalogue": 5}), (3, {"catalogue": "/nonexistent/cards.json"}), (3, {"rounds": 2})],
)
def test_bad_options(players, options):
    with pytest.raises(GameError):
        games.create("loot-roll", players=players, **options)


# ----- replay ------------------------------------------------------------------------------------------------
def test_seeded_replay_and_different_seeds():
    a, b = games.create("loot-roll", seed=11), games.create("loot-roll", seed=11)
    assert a == b
    rng = random.Random(4)
    for _ in range(150):
        if a.is_over:
            break
        action = rng.choice(a.legal_actions())
        a.apply(action)
        b.apply(str(action))
        assert a == b
    assert games.create("loot-roll", seed=11).decks != games.create("loot-roll", seed=12).decks


def test_actions_are_listed_in_a_stable_order_and_only_for_the_current_player():
    state = position(bags=["iron-helm ruby", "", ""], hands=["sixth-sense", "hex", ""])
    legal = state.legal_actions()
    assert legal == state.legal_actions(0) and state.legal_actions(1) == []
    assert legal[:3] == [Explore(), Fight(False), Fight(True)] and Equip("iron-helm") in legal
    assert Play("sixth-sense") in legal and state.actors() == [0]
