"""Loot the Loop: rules, views, saving, observed tables (rules: seeds/000_8222c7c5b5392494.txt)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.core import BadAction, BadState, GameError, GameOver
from games.loot_the_loop.engine import (
    ALL_CARDS,
    BadTable,
    Escaped,
    Flipped,
    Landed,
    LootTheLoop,
    Marked,
    Returned,
    Stuck,
    Trapped,
    rotate,
    trinket_value,
)
from tests.invariants import assert_illegal_unchanged, random_game

D = None  # a face-down slot in `table`


def table(top: list[str | None], notes: tuple[str, ...] = (), score: tuple[str, ...] = ()) -> LootTheLoop:
    """A playing position: the deck starts with `top` ("7H" face up, "7H?" face down), then every other card
    face down in canonical order."""
    cards = [c.rstrip("?") for c in top if c is not None]
    rest = [c for c in ALL_CARDS if c not in cards and c not in notes and c not in score]
    state = LootTheLoop(seed=0)
    state.phase, state.piles, state.piles_up = "play", [], []
    state.deck = cards + rest
    state.up = [not c.endswith("?") for c in top if c is not None] + [False] * len(rest)
    state.notes, state.score = list(notes), list(score)
    return state


def kinds(events: list) -> list[str]:
    return [e.kind for e in events]


# ----- setup ---------------------------------------------------------------------------------------------
def test_setup_cuts_18_18_17_with_top_two_face_up_and_view_shows_them():
    state = games.create("loot-the-loop", seed=5)
    assert [len(p) for p in state.piles] == [18, 18, 17]
    view = state.view(0)
    for pile, shown in zip(state.piles, view["piles"], strict=True):
        assert shown[:2] == pile[:2]
        assert shown[2:] == [None] * (len(pile) - 2)
    assert len(view["unseen"]) == 53 - 6
    assert [str(a) for a in state.legal_actions()][:2] == ["order 1 2 3", "order 1 3 2"]


def test_order_puts_the_first_named_pile_on_top():
    state = LootTheLoop(seed=9)
    p1, p2, p3 = (list(p) for p in state.piles)
    events = state.apply("order 2 1 3")
    assert state.deck == p2 + p1 + p3
    assert state.up[:2] == [True, True] and state.up[18:20] == [True, True] and state.up[36:38] == [True, True]
    assert events[0].text.startswith("You stack the piles in the order 2, 1, 3")


def test_order_illegal_cases():
    state = LootTheLoop(seed=1)
    assert_illegal_unchanged(state, "order 1 1 2", "once each")
    assert_illegal_unchanged(state, "order 1 2 4", "once each")
    assert_illegal_unchanged(state, "look", "stack the three piles first")
    state.apply("order 3 2 1")
    if not state.is_over:
        assert_illegal_unchanged(state, "order 1 2 3", "already stacked")


# ----- look around ---------------------------------------------------------------------------------------
def test_look_flips_the_top_two_cards():
    state = table(["3H?", "KS?", "5H"])
    events = state.apply("look")
    assert state.up[:3] == [True, True, True]
    assert events == [Flipped(("3H", "KS"))]
    assert events[0].text == "You look around and turn up 3H and KS."


def test_look_flips_only_the_top_card_when_the_second_is_face_up():
    state = table(["2H?", "KS", "5H?"])
    events = state.apply("look")
    assert state.up[:3] == [True, True, False]
    assert events == [Flipped(("2H",))]


def test_look_illegal_when_top_is_face_up():
    assert_illegal_unchanged(table(["5H", "KS?"]), "look", "top card must be face down")


# ----- explore and landing -------------------------------------------------------------------------------
def test_explore_counts_the_top_two_cards_and_keeps_order():
    state = table(["3H", "7S", "2C?", "4D?", "9C?"])
    before = list(state.deck)
    events = state.apply("explore 3")
    assert state.deck == before[3:] + before[:3]
    assert events == [Landed(3, "?", "nothing")]


def test_explore_by_either_of_two_trinkets():
    for count in (3, 7):
        state = table(["3H", "7S"])
        state.apply(f"explore {count}")
        assert state.deck[-count:][:2] == ["3H", "7S"]


def test_explore_by_the_only_face_up_trinket():
    state = table(["KS", "4D"])
    assert [str(a) for a in state.legal_actions()] == ["explore 4"]
    assert_illegal_unchanged(state, "explore 5", "only explore by the value of a face-up trinket on top: 4")


def test_explore_ignores_a_face_down_trinket():
    state = table(["4D?", "6S?"])
    assert_illegal_unchanged(state, "explore 4", "neither of the top two cards is a face-up trinket")


def test_explore_illegal_without_trinkets():
    state = table(["KS", "AS"], notes=("5C",))
    assert_illegal_unchanged(state, "explore 2", "neither of the top two cards is a face-up trinket")


def test_landing_face_down_nothing_happens():
    state = table(["2H", "KS", "AS?"])
    events = state.apply("explore 2")
    assert events == [Landed(2, "?", "nothing")] and state.score == [] and not state.is_over
    assert "face-down card: nothing happens" in events[0].text


def test_landing_on_a_face_up_trap_loses():
    state = table(["2H", "5S", "KS", "9D"])
    events = state.apply("explore 2")
    assert kinds(events) == ["Landed", "Trapped", "GameOver"]
    assert events[1] == Trapped("KS")
    assert state.is_over and state.result == "trapped" and state.winners() == [] and state.current_player is None
    assert state.legal_actions() == []
    assert events[-1] == GameOver((), (0,), "You landed on a trap")


def test_landing_on_a_face_up_ace_nabs_it():
    state = table(["2H", "5S", "AS", "9D"])
    events = state.apply("explore 2")
    assert events == [Landed(2, "AS", "nabbed")]
    assert state.score == ["AS"] and "AS" not in state.deck and state.deck[0] == "9D"
    assert state.scores() == [1]


def test_landing_on_a_face_up_trinket_nabs_it():
    state = table(["2H", "5S", "8C", "9D"])
    state.apply("explore 2")
    assert state.score == ["8C"] and state.deck[0] == "9D"


def test_landing_on_the_exit_without_four_jewels_does_nothing():
    state = table(["2H", "5S", "JOKER", "9D"], score=("AS", "AH", "AD"))
    events = state.apply("explore 2")
    assert events == [Landed(2, "JOKER", "exit-locked")]
    assert state.deck[0] == "JOKER" and not state.is_over


def test_landing_on_the_exit_with_four_jewels_escapes():
    state = table(["2H", "5S", "JOKER", "9D"], score=("AS", "AH", "AD", "AC", "7C"))
    events = state.apply("explore 2")
    assert kinds(events) == ["Landed", "Escaped", "GameOver"]
    assert events[1] == Escaped(5)
    assert state.is_over and state.result == "escaped" and state.winners() == [0] and state.scores() == [5]
    assert events[-1].winners == (0,)


def test_flipping_the_exit_with_a_look_is_not_landing():
    state = table(["JOKER?", "5S"], score=("AS", "AH", "AD", "AC"))
    state.apply("look")
    assert not state.is_over and state.deck[0] == "JOKER"


def test_wrap_around_counts_round_the_loop():
    assert rotate([1, 2, 3, 4, 5], 7) == [3, 4, 5, 1, 2]
    assert rotate([1, 2, 3], 3) == [1, 2, 3]
    assert rotate([], 4) == []


# ----- mark and return -----------------------------------------------------------------------------------
def test_mark_moves_the_top_trinket_to_the_notes():
    state = table(["7H", "KS", "AS?"])
    assert state.apply("mark") == [Marked("7H")]
    assert state.notes == ["7H"] and state.deck[0] == "KS"


def test_mark_illegal_when_top_is_not_a_face_up_trinket():
    assert_illegal_unchanged(table(["KS", "4D"]), "mark", "top card must be a face-up trinket")
    assert_illegal_unchanged(table(["7H?", "4D"]), "mark", "top card must be a face-up trinket")


def test_notes_hold_at_most_three_and_there_is_no_swap():
    state = table(["2H", "3H", "4H", "5H", "6H"])
    for _ in range(3):
        state.apply("mark")
    assert state.notes == ["2H", "3H", "4H"]
    assert_illegal_unchanged(state, "mark", "at most three notes")


def test_return_puts_the_chosen_note_on_top_face_up():
    state = table(["KS", "9D"], notes=("2H", "7C"))
    assert state.apply("return 7C") == [Returned("7C")]
    assert state.deck[:2] == ["7C", "KS"] and state.up[0] and state.notes == ["2H"]


def test_return_illegal_cases():
    assert_illegal_unchanged(table(["5H", "KS"]), "return 5H", "no marked paths")
    assert_illegal_unchanged(table(["KS", "9D"], notes=("2H",)), "return 3H", "not in your notes")


def test_mark_return_cycle_is_legal_and_counted_as_idle():
    state = table(["5H", "KS", "QS"])
    for _ in range(3):
        state.apply("mark")
        state.apply("return 5H")
    assert not state.is_over and state.idle == 6 and state.view(0)["idle"] == 6


# ----- losing without a trap -----------------------------------------------------------------------------
def test_stuck_when_no_action_is_left():
    # explore 5 nabs AS, leaving face-up KS then QS on top, and no notes: no action at all
    state = table(["5H", "2C?", "3C?", "4C?", "6C?", "AS", "KS", "QS"])
    events = state.apply("explore 5")
    assert kinds(events) == ["Landed", "Stuck", "GameOver"]
    assert events[1] == Stuck("stuck") and state.result == "stuck" and state.scores() == [1]
    assert "no legal action" in events[-1].text


def test_cornered_when_every_explore_lands_on_a_trap():
    # after nabbing AS the top is KS, 3H: the only move, explore 3, lands on the face-up JS
    state = table(["5H", "2C?", "3C?", "4C?", "6C?", "AS", "KS", "3H", "8D?", "JS"])
    events = state.apply("explore 5")
    assert kinds(events) == ["Landed", "Stuck", "GameOver"]
    assert state.result == "cornered" and state.winners() == []
    assert "Every explore left would land on a trap" in events[-1].text


def test_a_note_keeps_the_player_alive():
    state = table(["5H", "2C?", "3C?", "4C?", "6C?", "AS", "KS", "3H", "8D?", "JS"], notes=("9S",))
    state.apply("explore 5")
    assert not state.is_over
    assert [str(a) for a in state.legal_actions()] == ["explore 3", "return 9S"]


def test_a_suicidal_explore_is_still_legal_when_other_moves_exist():
    state = table(["2H", "5S", "KS", "9D"])
    assert state.is_legal("explore 2") and state.is_legal("explore 5") and state.is_legal("mark")


# ----- views, saving, replay -----------------------------------------------------------------------------
def check_state(state: LootTheLoop) -> None:
    zones = state.card_zones()
    every = [c for cards in zones.values() for c in cards]
    assert sorted(every) == sorted(ALL_CARDS), "every card exactly once"
    assert state.scores() == [len(state.score)]
    assert state.winners() == ([0] if state.result == "escaped" else [])
    assert len(state.notes) <= 3 and all(trinket_value(c) for c in state.notes)
    hidden = {c for c, up in zip(state.deck, state.up, strict=True) if not up}
    for pile, ups in zip(state.piles, state.piles_up, strict=True):
        hidden |= {c for c, up in zip(pile, ups, strict=True) if not up}
    for player in (0, None):
        view = state.view(player)
        shown = set(view["deck"]) | {c for p in view["piles"] for c in p}
        assert not hidden & shown, "face-down cards must not be shown"
        assert set(view["unseen"]) == hidden and view["unseen"] == sorted(view["unseen"], key=ALL_CARDS.index)
        assert [c is None for c in view["deck"]] == [not u for u in state.up]
    if state.phase != "setup" and any(trinket_value(c) for c in state.deck):
        assert len(state.deck) >= 14, "a deck with a trinket never needs wrap-around"


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9))
def test_random_games_keep_every_invariant(seed):
    state = random_game(games.create("loot-the-loop", seed=seed), random.Random(seed), check_state)
    assert state.is_over and state.result in ("escaped", "trapped", "stuck", "cornered")


@pytest.mark.slow
def test_many_random_games():
    for seed in range(2000):
        random_game(LootTheLoop(seed=seed), random.Random(seed), check_state)


def test_view_hides_face_down_cards_and_their_order():
    a, b = table(["5H", "KS", "2C?", "3C?"]), table(["5H", "KS", "3C?", "2C?"])
    assert a.deck != b.deck and a.view(0) == b.view(0) == a.view(None)
    assert a.view(0)["deck"][:4] == ["5H", "KS", None, None]
    assert "2C" in a.view(0)["unseen"]
    assert "?x" in a.describe(0) and "2C" not in a.describe(0)


def test_seeded_replay_and_different_seeds():
    def play(seed: int) -> LootTheLoop:
        state = LootTheLoop(seed=seed)
        rng = random.Random(1)
        while not state.is_over and state.history_length < 40:
            state.apply(rng.choice(state.legal_actions()))
        return state

    assert play(3) == play(3)
    assert LootTheLoop(seed=3).piles != LootTheLoop(seed=4).piles


def test_undo_restores_exactly():
    state = table(["2H", "5S", "AS", "9D"])
    before = state.to_dict()
    state.apply("explore 2")
    state.undo()
    assert state.to_dict() == before


def test_every_event_has_one_sentence():
    events = [
        Flipped(("AS", "KS")),
        Landed(3, "?", "nothing"),
        Landed(3, "7H", "nabbed"),
        Landed(3, "KS", "trap"),
        Landed(3, "JOKER", "exit-locked"),
        Landed(3, "JOKER", "exit"),
        Marked("7H"),
        Returned("7H"),
        Escaped(9),
        Trapped("KS"),
        Stuck("stuck"),
        Stuck("cornered"),
    ]
    for event in events:
        assert event.text.endswith((".", "!")) and event.text.count(". ") == 0
        assert event.to_dict()["type"] == event.kind


# ----- bad inputs ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", "jump", "explore", "explore x", "return 11H", "return", "order 1 2", "mark 2"])
def test_parse_garbage_is_a_bad_action(text):
    with pytest.raises(BadAction, match="expected"):
        LootTheLoop.parse_action(text)


@pytest.mark.parametrize("text", ["look", "mark", "explore 7", "return 10S", "return JOKER", "order 3 1 2"])
def test_parse_round_trip(text):
    assert str(LootTheLoop.parse_action(text)) == text
    assert LootTheLoop.parse_action(text.upper().replace("JOKER", "joker")) == LootTheLoop.parse_action(text)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("deck", ["XX"], "deck"),
        ("up", [True], "up"),
        ("notes", ["KS"], "notes"),
        ("phase", "dancing", "phase"),
        ("result", "won", "result"),
        ("idle", -1, "idle"),
        ("score", "AS", "score"),
    ],
)
def test_from_dict_with_a_broken_field_names_it(field, value, message):
    data = table(["5H", "KS"]).to_dict()
    data["state"][field] = value
    with pytest.raises(BadState, match=message):
        LootTheLoop.from_dict(data)


def test_from_dict_missing_or_duplicated_card():
    data = table(["5H", "KS"]).to_dict()
    data["state"]["deck"][1] = "5H"
    with pytest.raises(BadState, match="exactly once"):
        LootTheLoop.from_dict(data)


def test_bad_options_and_players():
    with pytest.raises(GameError, match="unknown option"):
        games.create("loot-the-loop", fast=True)
    with pytest.raises(GameError, match="players"):
        games.create("loot-the-loop", players=2)


# ----- observed tables -----------------------------------------------------------------------------------
def observed_deck() -> list[str | None]:
    return ["7H", "KS", None, None, "AS", *[None] * 40]


def test_from_table_fills_face_down_slots_with_unseen_cards():
    deck = observed_deck()
    notes, score = ("2C", "3C"), ("AD", "9H", "4S", "5S", "6S", "8S")
    state = LootTheLoop.from_table(deck, notes, score, seed=4)
    check_state(state)
    assert state.view(0)["deck"] == deck and state.notes == list(notes) and state.score == list(score)
    assert state == LootTheLoop.from_table(deck, notes, score, seed=4)
    other = LootTheLoop.from_table(deck, notes, score, seed=5)
    assert other.deck != state.deck and other.view(0) == state.view(0)
    assert not state.is_over and state.legal_actions()


def test_from_table_accepts_lowercase_and_question_marks():
    deck = ["7h", "ks", "?", *[None] * (53 - 3)]
    state = LootTheLoop.from_table(deck)
    assert state.view(0)["deck"][:3] == ["7H", "KS", None]


def test_from_table_of_a_lost_position_is_over():
    state = LootTheLoop.from_table(["KS", "QS", *[None] * 51])
    assert state.is_over and state.result == "stuck"


@pytest.mark.parametrize(
    ("deck", "notes", "score", "message"),
    [
        (["7H", "7H", *[None] * 50], (), (), "seen twice"),
        (["7H", *[None] * 51], ("7H",), (), "seen twice"),
        (["ZZ", *[None] * 52], (), (), "not a card code"),
        ([*[None] * 49], ("2C", "3C", "4C", "5C"), (), "at most 3 notes"),
        ([*[None] * 52], ("KS",), (), "only be trinkets"),
        ([*[None] * 52], (), ("QS",), "never be in the score pile"),
        ([*[None] * 50], (), (), "all 53 cards"),
    ],
)
def test_from_table_errors(deck, notes, score, message):
    with pytest.raises(BadTable, match=message):
        LootTheLoop.from_table(deck, notes, score)
