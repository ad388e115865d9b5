"""Bag-O-Loot rules engine: the document's examples, every action legal and illegal, random play, bad input."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.bag_o_loot.engine import (
    LOOTER,
    NUMBERS,
    BagOLoot,
    Build,
    Challenge,
    Claim,
    Draw,
    Holdup,
    Junk,
    Knock,
    MakeBag,
    Open,
    Penalty,
    Rob,
    RoundScored,
    Steal,
    TimeUp,
    full_set,
    round_points,
)
from games.bag_o_loot.policy import greedy_policy
from games.core import Action, BadAction, BadState, GameError, GameOver, IllegalMove
from games.play import play_out
from tests.invariants import assert_illegal_unchanged, check_protocol, random_game


# ----- helpers -----------------------------------------------------------------------------------------------
def position(
    players: int = 3,
    hands: list[str] | None = None,
    cols: list[list[str]] | None = None,
    bags: list[list[str]] | None = None,
    down: bool = True,
    deck_top: str = "",
    empty_deck: bool = False,
    **fields,
) -> BagOLoot:
    """A state with the given hands ("7 7 L"), collections ("7: 7 L") and bags ("9: 9 9 9 9 L"), every other
    card in the deck (under `deck_top`, whose last card is drawn first) or, with `empty_deck`, in the junk pile;
    `fields` overwrite core fields (current, drew, ...). Goes through from_dict, so conservation is checked."""
    state = BagOLoot(players, seed=1)
    data = state.to_dict()
    core = data["state"]
    hands = hands or [""] * players
    cols = cols or [[] for _ in range(players)]
    bags = bags or [[] for _ in range(players)]
    used = Counter(deck_top.split())
    for p in range(players):
        used.update(hands[p].split())
        for part in cols[p] + bags[p]:
            used.update(part.split(":")[1].split())
    rest = Counter(full_set(players)[0]) - used
    assert not used - Counter(full_set(players)[0]), "position uses more cards than the game has"
    others = sorted(rest.elements(), key=lambda c: (c == "L", int(c) if c != "L" else 0))
    core["deck"] = "" if empty_deck else " ".join(others + deck_top.split())
    core["junk"] = " ".join(others) if empty_deck else ""
    core["hands"] = hands
    core["stashes"] = [{"collections": cols[p], "bags": bags[p], "down": [down] * len(bags[p])} for p in range(players)]
    core.update({"current": 0, "drew": True, "plays": 0, "held_up": False, "opened": [], "turn_start": None})
    core.update(fields)
    data["history"] = []
    return BagOLoot.from_dict(data)


def kinds(events) -> list[str]:
    return [e.kind for e in events]


def check_state(state: BagOLoot) -> None:
    """Conservation, public hand sizes, hidden hands and face-down cards, scores from RoundScored totals."""
    zones = state.card_zones()
    held = Counter(c for zone in zones.values() for c in zone)
    kept, removed = full_set(state.num_players)
    assert held == Counter(kept + removed), "every card exactly once"
    assert Counter(zones["removed"]) == Counter(removed)
    for p in range(state.num_players):
        view = state.view(p)
        assert view["hand"] == state.hands[p]
        assert view["hand_sizes"] == [len(h) for h in state.hands]
        assert "hands" not in view and isinstance(view["deck"], int)
        for q, stash in enumerate(view["stashes"]):
            for bag, real in zip(stash["bags"], state.stashes[q]["bags"], strict=True):
                hidden = real["down"] and q != p
                assert (bag["cards"][-1] == "?") == hidden
                assert bag["cards"][:4] == real["cards"][:4]
    spectator = state.view(None)
    assert spectator["hand"] is None
    for stash, real in zip(spectator["stashes"], state.stashes, strict=True):
        assert [b["cards"][-1] == "?" for b in stash["bags"]] == [b["down"] for b in real["bags"]]
    assert all(s >= 0 for s in state.scores())
    if state.is_over:
        assert state.current_player is None and state.legal_actions() == []


# ----- the document's examples -------------------------------------------------------------------------------
def test_example_1_nine_stash_cards_four_in_hand_scores_5():
    assert round_points(4, [4, 3, 2], 0) == (4, 0, 5)


def test_example_2_collection_of_three_and_two_bags_scores_14():
    assert round_points(4, [3], 2) == (4, 1, 14)


def test_more_hand_cards_than_stash_scores_zero():
    assert round_points(6, [2, 3], 0)[2] == 0
    assert round_points(6, [], 1)[2] == 0
    assert round_points(5, [], 1) == (5, 0, 0)


def test_bust_as_few_bags_as_possible():
    assert round_points(7, [], 3) == (7, 1, 10 + 3)  # two bags busted, 3 loose cards left


DIAGRAM = {
    "hands": ["1 1 1 1", "10 10 10 10", "11 11 11 11", "12 12 12 12"],
    "cols": [["7: 7 7 L"], [], ["2: 2 2 2", "3: 3 3 3", "4: 4 4 4"], []],
    "bags": [["5: 5 5 5 5 5", "6: 6 6 6 6 L"], ["8: 8 8 8 8 8"], [], []],
}


def test_diagram_scores_14_1_5_0():
    # The deck is out and players 2-4 are done: Player 1 knocks without a play, so the round ends.
    state = position(4, **DIAGRAM, empty_deck=True, done=[False, True, True, True])
    events = state.apply("knock")
    scored = [e for e in events if e.kind == "RoundScored"]
    assert [e.points for e in scored] == [14, 1, 5, 0]
    assert [e.bags for e in scored] == [1, 0, 0, 0]
    assert "scores 14" in scored[0].text


def _diagram_after_bag(challenger: int) -> BagOLoot:
    """The diagram's table plus a fresh genuine bag of another player, before the next player has drawn."""
    cols = [list(c) for c in DIAGRAM["cols"]]
    bags = [list(b) for b in DIAGRAM["bags"]]
    owner = 1 if challenger != 1 else 0
    bags[owner].append("9: 9 9 9 9 L")
    last = {"owner": owner, "index": len(bags[owner]) - 1, "status": "open"}
    return position(4, DIAGRAM["hands"], cols, bags, current=(owner + 1) % 4, drew=False, last_bag=last)


def test_diagram_player_2_cannot_steal_locked_out():
    state = position(4, **DIAGRAM, current=1)
    assert_illegal_unchanged(state, "steal 7 from 1 with L", "locked out")


def test_diagram_player_4_cannot_challenge_with_empty_stash():
    state = _diagram_after_bag(3)
    assert_illegal_unchanged(state, "challenge by 4", "stash is empty")


def test_diagram_player_3_losing_a_challenge_loses_all_collections():
    state = _diagram_after_bag(2)
    (event,) = state.apply("challenge by 3")
    assert event.genuine and event.lost_cards == 9 and event.lost_bag == 0
    assert state.stashes[2]["collections"] == []
    assert "loses all open collections" in event.text


def test_diagram_player_1_losing_a_challenge_loses_one_bag():
    state = _diagram_after_bag(0)
    (event,) = state.apply("challenge by 1")
    assert event.genuine and event.lost_bag == 6
    assert [b["number"] for b in state.stashes[0]["bags"]] == [5]
    assert [b["number"] for b in state.stashes[1]["bags"]] == [8, 9, 6]
    assert state.stashes[0]["collections"]  # collections are kept when a bag is lost


# ----- setup -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("players", "numbers", "looters"), [(2, 12, 3), (3, 14, 4), (4, 16, 5)])
def test_card_removal_and_deal(players, numbers, looters):
    state = games.create("bag-o-loot", players=players, seed=3)
    kept, removed = full_set(players)
    assert len(kept) == numbers * 5 + looters and len(kept) + len(removed) == 85
    assert all(len(h) == 7 for h in state.hands)
    assert len(state.deck) == len(kept) - 7 * players
    assert state.dealer == 0 and state.current == 1 and not state.drew


def test_two_players_remove_the_highest_four_numbers():
    assert sorted(set(full_set(2)[1])) == sorted(["13", "14", "15", "16", "L"])
    assert Counter(full_set(3)[1]) == Counter(["15"] * 5 + ["16"] * 5 + ["L"])


def test_advanced_play_gives_each_player_a_looter_and_one_stays_in_the_deck():
    state = games.create("bag-o-loot", players=3, seed=5, advanced=True)
    assert all(len(h) == 8 and "L" in h for h in state.hands)
    looters = sum(h.count("L") for h in state.hands) + state.deck.count("L")
    assert looters == 4


def test_dealer_rotates_left_each_round_and_game_ends_after_rounds():
    state = position(3, ["1 2", "3 4", "5 6"], empty_deck=True, done=[False, True, True])
    events = state.apply("knock")
    assert state.round == 2 and state.dealer == 1 and state.current == 2
    assert "RoundStarted" in kinds(events)
    state = position(3, ["1 2", "3 4", "5 6"], empty_deck=True, done=[False, True, True], round=4)
    events = state.apply("knock")
    assert state.is_over and isinstance(events[-1], GameOver)
    assert state.current_player is None and state.legal_actions() == []
    assert_illegal_unchanged(state, "draw", "game is over")


# ----- draw, rushing, forgetting to draw ---------------------------------------------------------------------
def test_draw_then_draw_again_is_rushing():
    state = position(3, ["1 2", "3 4", "5 6"], deck_top="9", drew=False)
    (event,) = state.apply("draw")
    assert state.hands[0] == ["1", "2", "9"] and event.text == "Player 1 draws a card."
    assert_illegal_unchanged(state, "draw", "Rushing your turn")


def test_playing_before_drawing_cites_the_penalty():
    state = position(3, ["7 7 2", "3 4", "5 6"], drew=False)
    assert_illegal_unchanged(state, "open 7 7", "Forgetting to draw")
    assert_illegal_unchanged(state, "knock", "draw first")


def test_empty_deck_turn_starts_without_a_draw():
    state = position(3, ["1 2", "3 4", "5 6"], empty_deck=True, drew=False)
    (event,) = state.apply("draw")
    assert not event.drew and state.drew and state.hands[0] == ["1", "2"]
    assert "deck is empty" in event.text


def test_knock_without_play_after_deck_out_is_done_and_skipped():
    state = position(3, ["1 2", "3 4", "5 6"], empty_deck=True)
    events = state.apply("knock")
    assert kinds(events) == ["Knocked", "DoneForRound"] and state.done == [True, False, False]
    state.apply("draw")
    state.apply("knock")
    assert state.current == 2
    state.apply("draw")
    events = state.apply("knock")
    assert "RoundScored" in kinds(events) and state.round == 2


def test_playing_after_deck_out_keeps_the_player_in():
    state = position(3, ["7 7 1", "3 4", "5 6"], empty_deck=True)
    state.apply("open 7 7")
    state.apply("knock")
    assert state.done == [False, False, False] and state.current == 1


def test_done_players_are_skipped():
    state = position(3, ["1 2", "3 4", "5 6"], empty_deck=True, done=[False, True, False])
    state.apply("knock")
    assert state.current == 2


# ----- holdup ------------------------------------------------------------------------------------------------
def test_holdup_takes_the_extra_cards_at_random():
    state = position(3, ["1", "1 2 3 4 5 6 7 8 9 10", "5 6"])
    (event,) = state.apply("holdup 2")
    assert event.taken == 2 and len(state.hands[1]) == 8 and len(state.hands[0]) == 3
    assert "takes 2 of them at random" in event.text
    assert state.current == 0


def test_failed_holdup_ends_the_turn():
    state = position(3, ["1", "1 2 3 4 5 6 7 8", "5 6"])
    events = state.apply("holdup 2")
    assert events[0].taken == 0 and state.current == 1 and "turn is over" in events[0].text


def test_holdup_must_be_the_first_play():
    state = position(3, ["7 7 1", "1 2 3 4 5 6 7 8 9 10", "5 6"])
    state.apply("open 7 7")
    assert_illegal_unchanged(state, "holdup 2", "first play")
    assert_illegal_unchanged(position(3, ["1", "2", "3"]), "holdup 1", "not yourself")


# ----- open and build ----------------------------------------------------------------------------------------
def test_open_with_a_pair_or_a_looter():
    state = position(3, ["7 7 8 L 1", "3 4", "5 6"])
    (event,) = state.apply("open 7 7")
    assert event.cards == ("7", "7") and state.stashes[0]["collections"] == [{"number": 7, "cards": ["7", "7"]}]
    state.apply("open L 8")
    assert state.stashes[0]["collections"][1] == {"number": 8, "cards": ["8", "L"]}


def test_open_illegal_cases():
    state = position(3, ["7 3 L L 1", "3 4", "5 6"], cols=[["9: 9 9"], [], []])
    assert_illegal_unchanged(state, "open L L", "just looter")
    assert_illegal_unchanged(state, "open 7 3", "matching")
    assert_illegal_unchanged(state, "open 7 7", "has no 7")
    state.hands[0].append("9")
    assert_illegal_unchanged(state, "open 9 L", "build on it")


def test_build_legal_and_illegal():
    state = position(3, ["7 L L 3 1", "3 4", "5 6"], cols=[["7: 7 7", "9: 9 9 9 L"], [], []])
    (event,) = state.apply("build 7")
    assert event.size == 3 and "now hold 3 cards" in event.text
    state.apply("build L on 7")
    assert_illegal_unchanged(state, "build L on 7", "four cards")
    assert_illegal_unchanged(state, "build 3 on 9", "only a 9 or a looter")
    assert_illegal_unchanged(state, "build 3", "no collection of 3s")


# ----- steal -------------------------------------------------------------------------------------------------
def test_steal_showing_a_matching_card():
    state = position(3, ["12 1", "3 4", "5 6"], cols=[["2: 2 2"], ["12: 12 L"], []])
    (event,) = state.apply("steal 12 from 2")
    assert state.stashes[0]["collections"][1] == {"number": 12, "cards": ["12", "L", "12"]}
    assert state.stashes[1]["collections"] == [] and event.size == 3 and "showing 12" in event.text


def test_steal_showing_a_looter():
    state = position(3, ["L 1", "3 4", "5 6"], cols=[["2: 2 2"], ["12: 12 12 12"], []])
    assert_illegal_unchanged(state, "steal 12 from 2", "has no 12")
    assert_illegal_unchanged(state, "steal 12 from 2 with 3", "does not match")
    state.apply("steal 12 from 2 with L")
    assert len(state.stashes[0]["collections"][1]["cards"]) == 4


def test_steal_when_locked_out_is_illegal():
    state = position(3, ["12 1", "3 4", "5 6"], cols=[[], ["12: 12 L"], []], bags=[["9: 9 9 9 9 9"], [], []])
    assert_illegal_unchanged(state, "steal 12 from 2", "locked out")


def test_open_a_pair_and_steal_a_three_makes_a_bag_and_ends_the_turn():
    state = position(3, ["7 7 1", "3 4", "5 6"], cols=[[], ["7: 7 7 L"], []])
    state.apply("open 7 7")
    assert_illegal_unchanged(state, "steal 7 from 2", "steal into it")
    events = state.apply("steal 7 from 2 with set")
    assert events[0].bag and "making a Bag-O-Loot" in events[0].text
    assert state.stashes[0]["bags"] == [{"number": 7, "cards": ["7", "7", "7", "7", "L"], "down": False}]
    assert state.current == 1 and state.splits == []
    assert_illegal_unchanged(state, "challenge by 2", "no Bag-O-Loot")


def test_steal_merge_over_five_cards_is_illegal():
    state = position(3, ["1", "3 4", "5 6"], cols=[["7: 7 7 L"], ["7: 7 7 L"], []])
    assert_illegal_unchanged(state, "steal 7 from 2 with set", "more than five")


def test_stolen_four_becomes_a_bag_without_showing_the_card():
    state = position(3, ["3 1", "3 4", "5 6"], cols=[["2: 2 2"], ["7: 7 7 7 L"], ["4: 4 4"]])
    assert_illegal_unchanged(state, "steal 7 from 2 with L", "bag 7 from 2")
    events = state.apply("bag 7 from 2 with 3")  # a bluff: nobody saw the card
    assert events[0].kind == "BagMade" and "3" not in events[0].text.replace("Player", "")
    assert state.stashes[0]["bags"][0]["cards"] == ["7", "7", "7", "L", "3"]
    assert state.view(1)["stashes"][0]["bags"][0]["cards"][-1] == "?"
    assert state.view(0)["stashes"][0]["bags"][0]["cards"][-1] == "3"
    (event,) = state.apply("challenge by 3")
    assert not event.genuine and state.stashes[2]["bags"][0]["number"] == 7 and "a bluff" in event.text


# ----- bags --------------------------------------------------------------------------------------------------
def test_genuine_bag_ends_the_turn_and_a_second_bag_is_refused():
    state = position(3, ["7 9 1", "3 4", "5 6"], cols=[["7: 7 7 7 L", "9: 9 9 9 9"], [], []])
    events = state.apply("bag 7 with 7")
    assert kinds(events) == ["BagMade"] and state.current == 1 and not state.drew
    assert state.last_bag == {"owner": 0, "index": 0, "status": "open"}
    assert_illegal_unchanged(state, "bag 9 with 9", "one Bag-O-Loot per turn")


def test_bag_needs_a_collection_of_four():
    state = position(3, ["7 7 1", "3 4", "5 6"], cols=[["7: 7 7 L"], [], []])
    assert_illegal_unchanged(state, "bag 7 with 7", "collection of four")


def test_bluff_bag_and_robbery_cannot_end_with_a_bluff():
    state = position(3, ["3", "3 4", "5 6"], cols=[["7: 7 7 7 L"], [], []])
    assert_illegal_unchanged(state, "bag 7 with 3", "cannot end with a bluff")
    state = position(3, ["3 1", "3 4", "5 6"], cols=[["7: 7 7 7 L"], [], []])
    state.apply("bag 7 with 3")
    assert state.stashes[0]["bags"][0]["down"]


# ----- challenge ---------------------------------------------------------------------------------------------
def _after_bag(card: str = "7") -> BagOLoot:
    state = position(3, [f"{card} 1", "3 4", "5 6"], cols=[["7: 7 7 7 L"], ["2: 2 2"], ["4: 4 4"]])
    state.apply(f"bag 7 with {card}")
    return state


def test_challenge_of_a_bluff_gives_the_challenger_the_bag():
    state = _after_bag("3")
    (event,) = state.apply("challenge by 3")
    assert not event.genuine and event.card == "3"
    assert state.stashes[0]["bags"] == [] and state.stashes[2]["bags"][0]["down"] is False
    assert state.view(1)["stashes"][2]["bags"][0]["cards"][-1] == "3"  # revealed to all


def test_challenge_twice_is_refused():
    state = _after_bag()
    state.apply("challenge by 2")
    assert state.stashes[1]["collections"] == [] and state.junk == ["2", "2"]
    assert_illegal_unchanged(state, "challenge by 3", "only once")


def test_challenge_after_the_next_turn_began_is_too_late():
    state = _after_bag()
    assert state.actors() == [1, 2]
    state.apply("draw")
    assert_illegal_unchanged(state, "challenge by 3", "too late")
    assert state.actors() == [1]


def test_cannot_challenge_your_own_bag():
    assert_illegal_unchanged(_after_bag(), "challenge by 1", "your own")


# ----- junk --------------------------------------------------------------------------------------------------
def test_junk_exchange():
    state = position(3, ["9 1", "3 4", "5 6"], bags=[[], ["9: 9 9 9 L L"], []], deck_top="12")
    (event,) = state.apply("junk 9")
    assert state.junk == ["9"] and state.hands[0] == ["1", "12"] and "junks a 9" in event.text
    assert_illegal_unchanged(state, "junk 1", "match the cards of a Bag-O-Loot")


def test_junk_needs_a_replacement_card():
    state = position(3, ["9 1", "3 4", "5 6"], bags=[[], ["9: 9 9 9 L L"], []], empty_deck=True)
    assert_illegal_unchanged(state, "junk 9", "deck is empty")


# ----- split -------------------------------------------------------------------------------------------------
def test_split_can_be_claimed_by_any_player_until_the_next_turn_ends():
    state = position(3, ["7 7 1", "3 4", "5 6"], cols=[[], ["7: 7 L"], ["4: 4 4"]])
    state.apply("open 7 7")
    state.apply("knock")
    assert len(state.splits) == 1 and {0, 2} <= set(state.actors())
    assert_illegal_unchanged(state, "claim 7 of 1 and 2 by 2", "draw")  # the current player must draw first
    (event,) = state.apply("claim 7 of 1 and 2 by 3")
    assert not event.bag and "collection of four" in event.text
    assert state.stashes[2]["collections"][1]["cards"] == ["7", "7", "7", "L"]
    assert_illegal_unchanged(state, "claim 7 of 1 and 2 by 3", "no split")


def test_split_of_five_is_a_bag_and_expires_after_the_next_turn():
    state = position(3, ["7 L 1", "3 4", "5 6"], cols=[[], ["7: 7 7 7"], []])
    state.apply("open 7 L")
    state.apply("knock")
    state.apply("draw")
    state.apply("knock")
    assert state.splits == [] and state.current == 2
    assert_illegal_unchanged(state, "claim 7 of 1 and 2 by 2", "no split")
    state = position(3, ["7 L 1", "3 4", "5 6"], cols=[[], ["7: 7 7 7"], []])
    state.apply("open 7 L")
    state.apply("knock")
    state.apply("draw")
    (event,) = state.apply("claim 7 of 1 and 2 by 2")
    assert event.bag and state.stashes[1]["bags"][0]["cards"] == ["7", "L", "7", "7", "7"]


def test_opening_and_stealing_the_match_is_no_split():
    state = position(3, ["7 7 2 1", "3 4", "5 6"], cols=[[], ["7: 7 L"], []])
    state.apply("open 7 7")
    state.apply("steal 7 from 2 with set")
    state.apply("knock")
    assert state.splits == []


# ----- robbery -----------------------------------------------------------------------------------------------
def test_robbery_takes_a_bag_and_ends_the_round():
    state = position(3, ["7 7", "3 4", "5 6"], bags=[[], ["9: 9 9 9 9 L"], []])
    state.apply("open 7 7")
    assert state.phase == "rob" and state.legal_actions() == [Rob(9, 1)]
    assert_illegal_unchanged(state, "knock", "played every card")
    events = state.apply("rob 9 from 2")
    assert events[0].kind == "Robbery" and "takes Player 2's Bag-O-Loot of 9s" in events[0].text
    scored = [e for e in events if e.kind == "RoundScored"]
    assert scored[0].points == 10 + 2 and scored[1].points == 0
    assert state.round == 2


def test_robbery_with_no_bag_on_the_table_just_ends_the_round():
    state = position(3, ["7 7", "3 4", "5 6"])
    events = state.apply("open 7 7")
    assert kinds(events)[:2] == ["Opened", "Robbery"] and state.round == 2


def test_rob_outside_a_robbery_is_illegal():
    state = position(3, ["7 7 1", "3 4", "5 6"], bags=[[], ["9: 9 9 9 9 L"], []])
    assert_illegal_unchanged(state, "rob 9 from 2", "only a player who has just played all")


def test_robbery_with_a_genuine_bag_is_allowed():
    state = position(3, ["L", "3 4", "5 6"], cols=[["7: 7 7 7 7"], [], []])
    events = state.apply("bag 7 with L")
    assert kinds(events)[:2] == ["BagMade", "Robbery"] and state.round == 2


# ----- penalty -----------------------------------------------------------------------------------------------
def test_penalty_undoes_the_turns_plays_and_skips_the_turn():
    state = position(3, ["7 7 1", "3 4", "5 6"], drew=False, deck_top="8")
    state.apply("draw")
    state.apply("open 7 7")
    events = state.apply("penalty")
    assert kinds(events) == ["Penalized"] and "undone" in events[0].text
    assert state.hands[0] == ["1", "7", "7", "8"] and state.stashes[0]["collections"] == []
    assert state.current == 1 and not state.done[0]
    assert Penalty() not in state.legal_actions()  # a referee correction, never offered as a move


def test_penalty_before_drawing_skips_the_turn():
    state = position(3, ["7 7 1", "3 4", "5 6"], drew=False)
    deck = list(state.deck)
    state.apply("penalty")
    assert state.current == 1 and state.deck == deck


# ----- views and hidden information --------------------------------------------------------------------------
def test_views_hide_other_hands_the_deck_and_face_down_cards():
    state = _after_bag("3")
    for p in range(3):
        view = state.view(p)
        text = json.dumps(view)
        assert view["hand"] == state.hands[p] and view["deck"] == len(state.deck)
        assert view["stashes"][0]["bags"][0]["cards"][-1] == ("3" if p == 0 else "?")
        assert "hands" not in text
    assert state.view(None)["hand"] is None
    assert "Player 1" in state.describe(0) and "?" in state.describe(1)


def test_events_do_not_name_hidden_cards():
    state = position(3, ["1", "3 4", "5 6"], drew=False, deck_top="12")
    (event,) = state.apply("draw")
    assert "12" not in json.dumps(event.to_dict())


# ----- parsing and bad input ---------------------------------------------------------------------------------
ALL_TEXTS = [
    "draw",
    "holdup 2",
    "open 7 7",
    "open 7 L",
    "open L L",
    "build 7",
    "build L on 7",
    "steal 12 from 2",
    "steal 12 from 2 with L",
    "steal 12 from 2 with set",
    "bag 7 with 3",
    "bag 7 from 2 with L",
    "junk 9",
    "knock",
    "challenge by 3",
    "claim 7 of 1 and 2 by 3",
    "rob 9 from 2",
    "penalty",
]


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_text_forms_parse_back(text):
    action = BagOLoot.parse_action(text)
    assert str(action) == text and BagOLoot.parse_action(str(action)) == action


def test_parse_normalizes():
    assert str(BagOLoot.parse_action("open l 7")) == "open 7 L"
    assert str(BagOLoot.parse_action("  Steal 12 FROM 2 with 12 ")) == "steal 12 from 2"
    assert str(BagOLoot.parse_action("build 7 on 7")) == "build 7"


@pytest.mark.parametrize(
    "text", ["", "fly", "draw 2", "open 7", "open 17 17", "holdup 0", "holdup x", "steal 7 to 2", "bag 7", "junk L"]
)
def test_parse_garbage(text):
    with pytest.raises(BadAction):
        BagOLoot.parse_action(text)


@given(st.text(max_size=30))
def test_parse_never_crashes(text):
    try:
        action = BagOLoot.parse_action(text)
    except BadAction:
        return
    assert BagOLoot.parse_action(str(action)) == action


def test_unknown_player_is_a_violation():
    state = position(3, ["1", "2", "3"])
    assert_illegal_unchanged(state, "holdup 4", "no Player 4")


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("deck", 5, "state.state.deck"),
        ("hands", ["1 2"], "state.state.hands"),
        ("current", 7, "state.state.current"),
        ("phase", "dance", "state.state.phase"),
        ("stashes", [{"collections": ["x"], "bags": [], "down": []}] * 3, "collections[0]"),
        ("junk", "1 1 1 1 1 1", "exactly one set"),
        ("last_bag", {"owner": 0, "index": 0, "status": "maybe"}, "last_bag.status"),
    ],
)
def test_from_dict_names_the_broken_field(field, value, named):
    data = games.create("bag-o-loot", seed=2).to_dict()
    data["state"][field] = value
    with pytest.raises(BadState, match=named.replace("[", r"\[").replace("]", r"\]")):
        BagOLoot.from_dict(data)


def test_from_dict_open_challenge_must_point_at_a_face_down_bag():
    data = _after_bag().to_dict()
    data["state"]["last_bag"]["index"] = 3
    with pytest.raises(BadState, match=r"last_bag\.index"):
        BagOLoot.from_dict(data)


def test_from_dict_missing_field():
    data = games.create("bag-o-loot", seed=2).to_dict()
    del data["state"]["totals"]
    with pytest.raises(BadState, match="totals"):
        games.load(data)


@pytest.mark.parametrize(
    ("players", "options"),
    [(1, {}), (5, {}), (3, {"rounds": 0}), (3, {"rounds": "4"}), (3, {"advanced": 1}), (3, {"x": 1})],
)
def test_bad_options(players, options):
    with pytest.raises(GameError):
        games.create("bag-o-loot", players=players, **options)


# ----- replay and random play --------------------------------------------------------------------------------
def test_seeded_replay_and_different_seeds():
    a, b = games.create("bag-o-loot", seed=11), games.create("bag-o-loot", seed=11)
    assert a == b
    rng = random.Random(4)
    for _ in range(60):
        action = rng.choice(a.legal_actions(a.current_player))
        a.apply(action)
        b.apply(str(action))
        assert a == b
    assert games.create("bag-o-loot", seed=11).hands != games.create("bag-o-loot", seed=12).hands


def test_undo_restores_every_step():
    state = games.create("bag-o-loot", players=2, seed=9, rounds=1)
    random_game(state, random.Random(9), check_state, undo_every=1)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.integers(2, 4), advanced=st.booleans())
def test_random_games_keep_invariants(seed, players, advanced):
    state = games.create("bag-o-loot", players=players, seed=seed, rounds=1, advanced=advanced)
    random_game(state, random.Random(seed), check_state)


def _light_random_game(seed: int, rounds: int) -> BagOLoot:
    """Random play without the harness's per-step full serialisation (which grows with the undo history),
    so many more games fit in the default suite; penalties are thrown in now and then."""
    rng = random.Random(seed)
    state = games.create("bag-o-loot", players=2 + seed % 3, seed=seed, rounds=rounds, advanced=seed % 4 == 0)
    steps = 0
    while not state.is_over:
        steps += 1
        assert steps < 20_000
        if state.phase == "turn" and rng.random() < 0.02:
            state.apply(Penalty())
        else:
            player = rng.choice(state.actors())
            state.apply(rng.choice(state.legal_actions(player)))
        check_state(state)
    check_protocol(state)
    assert len(state.winners()) >= 1
    return state


def _every_action(state: BagOLoot) -> list[Action]:
    """Every action the grammar can name at this table size, legal or not."""
    n, seats = state.num_players, range(state.num_players)
    cards = [str(c) for c in NUMBERS] + [LOOTER]
    acts: list[Action] = [Draw(), Knock(), TimeUp(), *[Holdup(q) for q in seats], *[Challenge(b) for b in seats]]
    acts += [Open(str(c), d) for c in NUMBERS for d in (str(c), LOOTER)]
    acts += [Build(c, d) for c in NUMBERS for d in cards] + [Junk(c) for c in NUMBERS]
    acts += [Steal(c, q, u) for c in NUMBERS for q in seats for u in (str(c), LOOTER, "set")]
    acts += [MakeBag(c, d, q) for c in NUMBERS for d in cards for q in (None, *seats)]
    acts += [Rob(c, q) for c in NUMBERS for q in seats]
    acts += [Claim(c, o, t, b) for c in NUMBERS for o in seats for t in seats for b in range(n)]
    return acts


@pytest.mark.parametrize("seed", range(6))
def test_legal_actions_are_every_action_the_rules_allow(seed):
    """`legal_actions` builds a short list of candidates for speed (the hint asks it at every rollout step); it must
    still be exactly the grammar's actions that pass the rules, in every phase of random play."""
    rng = random.Random(seed)
    state = games.create("bag-o-loot", players=2 + seed % 3, seed=seed, rounds=1, minutes=30 if seed % 2 else 0)
    every = _every_action(state)
    while not state.is_over:
        allowed = {a for a in every if state.is_legal(a)}
        assert set(state.legal_actions()) == allowed
        for player in range(state.num_players):
            assert set(state.legal_actions(player)) == {a for a in allowed if state._actor(a) == player}
        state.apply(rng.choice(state.legal_actions(rng.choice(state.actors()))))


@pytest.mark.parametrize("seed", range(120))
def test_many_random_games(seed):
    _light_random_game(seed, rounds=1 + seed % 2)


def test_greedy_policy_plays_whole_games_and_beats_random():
    """Against two random players (a random seat wins a third of the games). Two-player games no longer show it:
    since a split's maker may claim it (session 26), a random player that opens onto the greedy player's
    collection takes it half the time (150 seeded 2-player games: greedy won 56.7% under the old reading,
    46.7% now; 3 players: 53.3% and 51.3%)."""
    from games.policies import random_policy

    wins = 0
    for seed in range(12):
        state = games.create("bag-o-loot", players=3, seed=seed, rounds=2)
        play_out(state, {0: greedy_policy, 1: random_policy, 2: random_policy}, random.Random(seed))
        assert state.is_over
        wins += 0 in state.winners()
    assert wins >= 7


@pytest.mark.parametrize("players", [3, 4])
def test_greedy_policies_against_each_other_finish(players):
    state = games.create("bag-o-loot", players=players, seed=players, rounds=1, advanced=True)
    steps = play_out(state, dict.fromkeys(range(players), greedy_policy), random.Random(0))
    assert state.is_over and isinstance(steps[-1].events[-1], GameOver)
    check_state(state)


def test_greedy_policy_uses_only_its_view():
    state = games.create("bag-o-loot", players=3, seed=21)
    state.apply("draw")
    twin = state.clone()
    # Shuffle what player 1 (index 0) cannot see: the deck order and the other hands' cards.
    pool = twin.deck + twin.hands[1] + twin.hands[2]
    random.Random(1).shuffle(pool)
    sizes = len(state.hands[1]), len(state.hands[2])
    twin.hands[1], twin.hands[2] = pool[: sizes[0]], pool[sizes[0] : sum(sizes)]
    twin.deck = pool[sum(sizes) :]
    assert twin.view(0) == state.view(0) and twin.to_dict() != state.to_dict()
    for seed in range(20):
        assert greedy_policy(state, 0, random.Random(seed)) == greedy_policy(twin, 0, random.Random(seed))


def test_greedy_policy_challenges_a_certain_bluff():
    # Every 7 and every looter is visible to Player 3, so Player 1's new bag of 7s must be a bluff.
    state = position(
        4,
        ["3 1", "1 2", "7 7 7 L L", "5"],
        cols=[["7: 7 7 L L"], ["2: 2 2"], ["4: 4 4"], []],
        bags=[[], ["9: 9 9 9 L 9"], [], []],
    )
    state.apply("bag 7 with 3")
    assert greedy_policy(state, 2, random.Random(0)) == Challenge(2)


@pytest.mark.slow
def test_thousands_of_random_games():
    for seed in range(2000):
        _light_random_game(10_000 + seed, rounds=1 + seed % 2)


# ----- misc --------------------------------------------------------------------------------------------------
def test_actions_of_the_turn_are_listed_in_a_stable_order():
    state = position(3, ["7 7 L 1", "3 4", "5 6"], cols=[["9: 9 9 9 9"], ["7: 7 7"], []], drew=False)
    assert state.legal_actions(0)[0] == Draw()
    state.apply("draw")
    legal = state.legal_actions(0)
    assert legal == state.legal_actions(0) and legal[-1] == Knock()
    assert MakeBag(9, "L") in legal and MakeBag(9, "1") in legal and Steal(7, 1, "set") not in legal


def test_illegal_move_carries_the_rule():
    state = position(3, ["1", "2", "3"])
    with pytest.raises(IllegalMove) as err:
        state.apply("open L L")
    assert err.value.rule == "open"


def test_the_player_who_made_a_split_may_claim_it_too():
    """seeds/003, "Split": "ANY player that notices the split gets to combine them into his stash as a four card
    collection or as a Bag-O-Loot." The maker is a player who may notice it (issue 23; refused before session 26)."""
    state = position(3, ["7 7 1", "3 4", "5 6"], cols=[[], ["7: 7 L"], ["4: 4 4"]])
    state.apply("open 7 7")
    state.apply("knock")
    assert "claim 7 of 1 and 2 by 1" in [str(a) for a in state.legal_actions(0)]
    (event,) = state.apply("claim 7 of 1 and 2 by 1")
    assert not event.bag and state.stashes[0]["collections"] == [{"number": 7, "cards": ["7", "7", "7", "L"]}]
    assert state.stashes[1]["collections"] == [] and state.current == 1  # out of turn: the turn stays
    assert_illegal_unchanged(state, "claim 7 of 1 and 2 by 1", "no split")


def finish_round(state: BagOLoot) -> list:
    """Play the round in progress to its end with the first legal turn actions (draw, then knock): its events."""
    start, events = state.round, []
    while not state.is_over and state.round == start:
        events += state.apply("draw" if state.is_legal("draw") else "knock")
    return events


def test_the_game_ends_after_the_agreed_rounds_score_or_time():
    """seeds/003, "Before You Begin": "Determine when and how the game will end. It can be after a number of
    rounds, at a certain time, or when an agreed upon score has been reached. (A typical game is four rounds.)"
    """
    four = BagOLoot(3, seed=1)
    for _ in range(4):
        finish_round(four)
    assert four.is_over and four.round == 4
    # a score: the game ends with the round in which a total reaches it, however many rounds that takes
    scored = BagOLoot(3, seed=1, rounds=0, target=25)
    steps = play_out(scored, dict.fromkeys(range(3), greedy_policy), random.Random(1), max_steps=20_000)
    events = [e for step in steps for e in step.events]
    totals = [
        [e.total for e in events if isinstance(e, RoundScored) and e.round == r] for r in range(1, scored.round + 1)
    ]
    assert all(max(t) < 25 for t in totals[:-1]) and max(totals[-1]) >= 25
    (over,) = [e for e in events if isinstance(e, GameOver)]
    assert "score of 25 reached" in over.text
    # a time: `time` makes the round in progress the last, and is refused without the option or a second time
    timed = BagOLoot(3, seed=1, rounds=0, minutes=90)
    finish_round(timed)
    (called,) = timed.apply("time")
    assert "round 2 is the last" in called.text and "last round" in timed.describe()
    assert_illegal_unchanged(timed, "time", "already called")
    finish_round(timed)
    assert timed.is_over and timed.round == 2
    assert_illegal_unchanged(BagOLoot(3, seed=1), "time", "minutes option")
    # a saved game keeps its end; one saved before these options existed loads with neither
    again = BagOLoot.from_dict(json.loads(json.dumps(timed.to_dict())))
    assert again == timed and again.options["minutes"] == 90
    old = BagOLoot(3, seed=1).to_dict()
    del old["options"]["target"], old["options"]["minutes"], old["state"]["time_up"]
    assert BagOLoot.from_dict(old).options["target"] == 0


def test_a_game_with_no_end_is_refused_with_the_options_named():
    with pytest.raises(GameError, match=r"rounds.*target.*minutes"):
        BagOLoot(3, seed=1, rounds=0)
    with pytest.raises(GameError, match="option target"):
        BagOLoot(3, seed=1, target=-5)
