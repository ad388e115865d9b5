"""LOOP rules: the worked examples of the rule sheet, every action legal and illegal, rounds, seats, sets."""

from __future__ import annotations

import json
import random

import pytest

import games
from games.core import BadAction, BadState, GameError, GameOver
from games.loop.engine import (
    ALL_CARDS,
    EIGHTS,
    CardsSetAside,
    EightStop,
    Loop,
    Pass,
    Passed,
    Play,
    Played,
    RoundScored,
    RoundStarted,
    SeatTaken,
    SetAside,
    SetWon,
    TakeSeat,
    ThreeEights,
    TrickWon,
    Twist,
    Twisted,
    WentOut,
    basic_points,
    beats,
    new_total,
    rank_change,
    shape_of,
    sort_cards,
)
from games.loop.policy import greedy_policy
from games.play import play_out
from tests.invariants import assert_illegal_unchanged

HANDS4 = [["3r", "4r", "5r", "9g"], ["6r", "7r", "8r", "10g"], ["2g", "9b", "12b", "12g"], ["11r", "13b", "15r", "1b"]]
ASIDE4 = [["8g", "1r"], ["2r", "3g"], ["4g", "5g"], ["6g", "7g"]]


def position(players=4, hands=None, set_aside=None, played=None, three_eights=False, **fields):
    """A state with the given cards at each seat (unlisted cards lie aside) and fields set directly."""
    state = Loop(players, seed=1, three_eights_redeal=three_eights)
    n = players
    hands = hands if hands is not None else HANDS4[:n]
    set_aside = set_aside if set_aside is not None else ASIDE4[:n]
    played = played if played is not None else [[] for _ in range(n)]
    used = {c for zone in (hands, set_aside, played) for pile in zone for c in pile}
    state.hands = [sort_cards(h) for h in hands]
    state.set_aside = [sort_cards(h) for h in set_aside]
    state.played = [list(h) for h in played]
    state.aside = sort_cards([c for c in ALL_CARDS if c not in used])
    state.must_reveal = None
    state.phase = "play"
    for key, value in fields.items():
        setattr(state, key, value)
    return Loop.from_dict(state.to_dict())


def kinds(events):
    return [type(e) for e in events]


# ----- the rule sheet's worked examples ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("players", "table"),
    [(4, [4, 2, 1, 0]), (3, [3, 1, 0]), (2, [2, 0])],
)
def test_score_tables(players, table):
    assert [basic_points(players, rank) for rank in range(1, players + 1)] == table


def test_rank_difference_example_and_floor():
    # The seat's previous occupant came 1st; you finish 3rd of 4: 1 + (1 - 3) = -1.
    assert basic_points(4, 3) + rank_change(1, 3) == -1
    assert new_total(0, -1) == 0  # "the total score will not go below 0 pt"
    assert new_total(5, -1) == 4
    # rising two ranks: previous occupant 4th, you finish 2nd: 2 + 2
    assert basic_points(4, 2) + rank_change(4, 2) == 4
    assert rank_change(None, 3) == 0  # normal round: no Rank-card comparison


def test_everyone_starts_with_two_points_and_eleven_cards():
    for n in (2, 3, 4):
        state = games.create("loop", players=n, seed=3)
        assert state.scores() == [2] * n
        assert [len(h) for h in state.hands] == [11] * n
        assert len(state.aside) == 45 - 11 * n
        assert len(ALL_CARDS) == len(set(ALL_CARDS)) == 45


def test_shapes():
    assert shape_of(["9r"]).name == "single"
    assert shape_of(["9r", "9b"]).name == "pair"
    assert shape_of(["9r", "9b", "9g"]).name == "three of a kind"
    assert shape_of(["11r", "9r", "10r"]).name == "sequence of 3"
    assert shape_of(["9r", "10r"]).name == "sequence of 2"
    assert shape_of(["9r", "10g"]) is None  # a sequence needs one colour
    assert shape_of(["9r", "11r"]) is None  # and consecutive numbers
    # a follower's sequence is compared by its lowest card, and must be as long
    assert beats(shape_of(["5g", "6g", "7g"]), shape_of(["4r", "5r", "6r"]), twisted=False)
    assert not beats(shape_of(["5g", "6g"]), shape_of(["4r", "5r", "6r"]), twisted=False)
    assert beats(shape_of(["4r", "5r", "6r"]), shape_of(["5g", "6g", "7g"]), twisted=True)


# ----- play ------------------------------------------------------------------------------------------------------
def test_leader_plays_anything_and_turn_passes_clockwise():
    state = position()
    events = state.apply("play 5r 3r 4r")  # any order of cards
    assert kinds(events) == [Played]
    assert events[0].text == "Player 1 plays a sequence of 3: 3r 4r 5r."
    assert state.table == ["3r", "4r", "5r"] and state.played[0] == ["3r", "4r", "5r"]
    assert state.current_player == 1


def test_play_illegal_cases():
    state = position()
    assert_illegal_unchanged(state, "p2 play 6r", "it is Player 1's turn")
    assert_illegal_unchanged(state, "play 6r", "6r is not in your hand")
    assert_illegal_unchanged(state, "play 1r", "set aside under your rank card")
    assert_illegal_unchanged(state, "play 3r 9g", "combination")
    assert_illegal_unchanged(state, "p7 play 3r", "there is no player 7")
    followed = position(table=["10b"], table_seat=3)
    assert_illegal_unchanged(followed, "play 3r 4r", "the table shows a single")
    assert_illegal_unchanged(followed, "play 9g", "not higher than 10b")
    seq = position(table=["2b", "3b"], table_seat=3)
    assert_illegal_unchanged(seq, "play 3r", "sequence of 2")
    assert_illegal_unchanged(seq, "play 3r 4r 5r", "sequence of 2")
    seq.apply("play 3r 4r")  # lowest card 3 beats lowest card 2


def test_follower_must_beat_and_may_pass_while_holding_a_play():
    state = position(table=["2b"], table_seat=3)
    assert Play(("9g",)) in state.legal_actions()
    state.apply("pass")  # passing with a playable card is allowed
    assert state.current_player == 1
    state.apply("play 10g")
    state.apply("play 12b")
    state.apply("pass")
    assert state.current_player == 0  # a pass does not lock you out
    assert_illegal_unchanged(state, "play 9g", "not higher than 12b")


def test_pass_legal_and_illegal_on_lead():
    state = position()
    assert_illegal_unchanged(state, "pass", "you lead this trick, so you must play")
    assert Pass() not in state.legal_actions()
    state.apply("play 9g")
    events = state.apply("pass")
    assert kinds(events) == [Passed] and events[0].text == "Player 2 passes."


def test_trick_won_when_everyone_else_passes():
    state = position()
    state.apply("play 9g")
    state.apply("play 10g")
    for _ in range(2):
        state.apply("pass")
    events = state.apply("pass")  # Player 1 passes too: back to Player 2
    assert isinstance(events[-1], TrickWon) and events[-1].leader == 1
    assert "Player 2 wins the trick" in events[-1].text
    assert state.table == [] and state.current_player == 1


def test_trick_won_by_a_player_who_went_out_passes_the_lead_on():
    state = position(hands=[["9g"], *HANDS4[1:]])
    events = state.apply("play 9g")
    assert kinds(events) == [Played, WentOut] and events[1].rank == 1
    for _ in range(2):
        state.apply("pass")
    events = state.apply("pass")
    assert events[-1].player == 0 and events[-1].leader == 1  # the next player still in leads
    assert "who is out" in events[-1].text


def test_eight_stops_the_trick_and_its_player_leads_again():
    state = position(table=["5b", "6b", "7b"], table_seat=0, turn_seat=1)
    events = state.apply("play 6r 7r 8r")
    assert kinds(events) == [Played, EightStop]
    assert events[1].leader == 1 and state.table == [] and state.current_player == 1
    assert_illegal_unchanged(state, "p3 play 9b", "8 stops the trick")
    assert_illegal_unchanged(state, "pass", "must play")
    state.apply("play 10g")  # the same player leads a fresh trick
    assert state.eight_stop is False


def test_eight_that_empties_the_hand_passes_the_lead_on():
    state = position(hands=[["8b"], *HANDS4[1:]])
    events = state.apply("play 8b")
    assert kinds(events) == [Played, WentOut, EightStop]
    assert events[-1].leader == 1 and state.current_player == 1


def test_twist_reverses_order_and_does_not_use_the_turn():
    state = position(table=["10b"], table_seat=3)
    assert Twist("8g") in state.legal_actions()
    events = state.apply("twist 8g")
    assert kinds(events) == [Twisted] and state.twisted
    assert "1 is now the strongest" in events[0].text
    assert state.current_player == 0  # still Player 1's turn
    state.apply("play 9g")  # 9 beats 10 after a Twist
    assert state.view(2)["seats"][0]["set_aside"] == ["?", "8g"]  # the revealed 8 is public
    assert_illegal_unchanged(state, "p3 twist 8g", "it is Player 2's turn")


def test_twist_twice_restores_the_order():
    state = position(set_aside=[["8g", "8b"], *ASIDE4[1:]], table=["10b"], table_seat=3)
    state.apply("twist 8g")
    events = state.apply("twist 8b")
    assert not state.twisted and "normal order is back" in events[0].text
    assert_illegal_unchanged(state, "twist 8g", "already revealed")
    assert_illegal_unchanged(state, "play 9g", "not higher")


def test_a_second_twist_by_another_player_also_restores():
    state = position(set_aside=[["8g", "1r"], ["8b", "3g"], *ASIDE4[2:]])
    state.apply("twist 8g")
    state.apply("play 9g")
    state.apply("twist 8b")
    assert not state.twisted
    state.apply("play 10g")


def test_twist_illegal_without_a_set_aside_eight():
    state = position(turn_seat=1, table=["10b"], table_seat=0)
    assert_illegal_unchanged(state, "twist 8r", "an 8 you set aside")  # 8r is in the hand, not set aside
    assert_illegal_unchanged(state, "twist 2r", "an 8 you set aside")
    assert not any(isinstance(a, Twist) for a in state.legal_actions())


def test_twist_resets_at_the_end_of_the_round():
    state = position(players=2, hands=[["9g"], ["10g"]], set_aside=[["8g", "1r"], ["2r", "3g"]])
    state.apply("twist 8g")
    state.apply("play 9g")
    assert not state.twisted and state.phase == "seat"


# ----- set aside -------------------------------------------------------------------------------------------------
def test_setaside_in_seat_order_from_the_start_player():
    state = games.create("loop", players=3, seed=5)
    assert state.phase == "setaside" and state.current_player == 0
    hand = list(state.hands[0])
    assert len(state.legal_actions()) == 55
    assert_illegal_unchanged(state, "p2 setaside " + " ".join(state.hands[1][:2]), "it is Player 1's turn")
    missing = next(c for c in ALL_CARDS if c not in hand)
    assert_illegal_unchanged(state, f"setaside {hand[0]} {missing}", f"{missing} is not in your hand")
    assert_illegal_unchanged(state, f"play {hand[0]}", "set aside 2 cards")
    events = state.apply(f"setaside {hand[3]} {hand[0]}")
    assert kinds(events) == [CardsSetAside] and hand[0] not in events[0].text  # hidden
    assert state.set_aside[0] == sort_cards([hand[0], hand[3]]) and len(state.hands[0]) == 9
    while state.phase == "setaside":
        state.apply(state.legal_actions()[0])
    assert state.phase == "play" and state.current_player == 0 and [len(h) for h in state.hands] == [9, 9, 9]
    assert_illegal_unchanged(state, f"setaside {state.hands[0][0]} {state.hands[0][1]}", "start of a round")


# ----- round end, seats, the next round ---------------------------------------------------------------------------
def test_round_ends_when_one_player_is_left_and_scores_the_normal_table():
    state = position(players=2, hands=[["9g"], ["2g", "3g"]], set_aside=[["8g", "1r"], ["2r", "3r"]])
    events = state.apply("play 9g")
    assert kinds(events) == [Played, WentOut, RoundScored]
    scored = events[-1]
    assert scored.ranks == (1, 2) and scored.basic == (2, 0) and scored.change == (0, 0)
    assert scored.totals == (4, 2) and state.scores() == [4, 2]
    assert scored.text.startswith("Round 1 scores: Player 1 1st 2 points, total 4")
    assert state.phase == "seat" and state.rank_cards == [1, 2]
    assert state.current_player == 1  # the last-placed player chooses first


def _finished_round():
    """A normal round that has just ended with ranks P2 1st, P3 2nd, P1 3rd, P4 4th."""
    state = position(
        hands=[["9g"], [], [], ["11r", "13b"]],
        played=[["3r", "4r", "5r"], ["6r", "7r", "8r", "10g"], ["2g", "9b", "12b", "12g"], ["15r", "1b"]],
        finished=[1, 2],
    )
    events = state.apply("play 9g")
    assert isinstance(events[-1], RoundScored)
    return state


def test_seat_choice_rules_four_players():
    state = _finished_round()
    assert state.last_ranks == [3, 1, 2, 4]
    assert state.current_player == 3  # 4th chooses first
    assert_illegal_unchanged(state, "p2 seat 1", "it is Player 4's turn")
    assert_illegal_unchanged(state, "seat 4", "nobody takes the seat they sat in last round")
    assert_illegal_unchanged(state, "seat 5", "only 4 seats")
    assert_illegal_unchanged(state, "play 3r", "choosing seats")
    assert TakeSeat(3) not in state.legal_actions()
    events = state.apply("seat 1")
    assert kinds(events) == [SeatTaken] and events[0].text == "Player 4 takes seat 1."
    assert state.current_player == 0  # then the 3rd-placed player
    assert_illegal_unchanged(state, "seat 1", "already taken by Player 4")


def test_be_considerate_forbids_leaving_someone_only_their_own_seat():
    state = position(players=3, hands=[[], [], []], set_aside=[[], [], []], phase="seat", last_ranks=[1, 2, 3])
    state.apply("seat 2")  # Player 3 takes Player 2's seat
    assert state.current_player == 1
    assert_illegal_unchanged(state, "seat 3", "would leave a later player only their own seat")
    assert state.legal_actions() == [TakeSeat(0)]


def test_two_players_may_keep_their_seats():
    state = position(players=2, hands=[["9g"], ["2g"]], set_aside=[["8g", "1r"], ["2r", "3r"]])
    state.apply("play 9g")
    assert state.legal_actions() == [TakeSeat(0), TakeSeat(1)]
    state.apply("seat 2")  # the loser keeps their own seat


def test_next_round_hand_is_exactly_the_seats_cards_and_start_seat_stays():
    state = _finished_round()
    before = {s: sort_cards(state.hands[s] + state.set_aside[s] + state.played[s]) for s in range(4)}
    events = []
    for seat in ("seat 1", "seat 4", "seat 2", "seat 3"):  # P4, P1, P3, P2
        events += state.apply(seat)
    assert state.seat_of == [3, 2, 1, 0]
    for s in range(4):
        assert state.hands[s] == before[s]
        assert state.set_aside[s] == [] and state.played[s] == []
    started = events[-1]
    assert isinstance(started, RoundStarted) and started.round_kind == "loop" and started.round_number == 2
    assert state.start_seat == 0 and state.current_player == 3  # Player 4 sits in the start seat now
    assert started.start_player == 3
    assert state.rank_cards == [3, 1, 2, 4]  # each seat keeps the Rank card of its previous occupant


def test_loop_round_scoring_by_the_seats_rank_card():
    # Seats' Rank cards: seat 1 was 1st, seat 2 was 2nd, seat 3 was 3rd, seat 4 was 4th. Players 1 and 4 are
    # already out (1st, 2nd); Player 2 (seat 4) goes out 3rd, Player 3 (seat 1) is left 4th.
    state = position(
        hands=[["9g"], [], [], ["11r"]],
        played=[["3r", "4r", "5r"], ["6r", "7r", "8r", "10g"], ["2g", "9b", "12b", "12g"], ["15r", "1b", "13b"]],
        seat_of=[1, 3, 0, 2],
        rank_cards=[1, 2, 3, 4],
        finished=[0, 3],
        turn_seat=3,
        points=[5, 5, 0, 5],
        round_number=2,
    )
    events = state.apply("play 11r")
    scored = events[-1]
    assert scored.ranks == (1, 3, 4, 2)
    assert scored.basic == (4, 1, 0, 2)
    # P1 in seat 2 (was 2nd) finished 1st: +1; P2 in seat 4 (was 4th) 3rd: +1;
    # P3 in seat 1 (was 1st) 4th: -3; P4 in seat 3 (was 3rd) 2nd: +1
    assert scored.change == (1, 1, -3, 1)
    assert scored.totals == (10, 7, 0, 8)  # Player 3: 0 + 0 - 3 floors at 0
    assert state.rank_cards == [4, 1, 2, 3]


# ----- game and set end ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("players", "target"), [(2, 7), (3, 10), (4, 12)])
def test_game_ends_at_the_target(players, target):
    first = basic_points(players, 1)
    for start, over in ((target - first, True), (target - first - 1, False)):
        hands = [["9g"], *[["14b", "15b"] if p == 1 else [] for p in range(1, players)]]
        finished = list(range(2, players))
        state = position(players=players, hands=hands, set_aside=ASIDE4[:players], finished=finished)
        state.points = [2] * players
        state.points[finished[0] if finished else 0] = start
        events = state.apply("play 9g")
        assert state.is_over is over
        if over:
            assert isinstance(events[-1], GameOver)
            assert max(state.scores()) >= target
            assert state.current_player is None and state.legal_actions() == []
            assert_illegal_unchanged(state, "pass", "game is over")


def _finished_round_with_points(points):
    state = position(
        hands=[["9g"], [], [], ["11r", "13b"]],
        played=[["3r", "4r", "5r"], ["6r", "7r", "8r", "10g"], ["2g", "9b", "12b", "12g"], ["15r", "1b"]],
        finished=[2, 1],
        points=points,
    )
    state.apply("play 9g")
    return state


def test_tie_break_with_equal_totals():
    # P3 1st (+4) and P2 2nd (+2): both end on 12; P3 finished better.
    state = _finished_round_with_points([2, 10, 8, 2])
    assert state.scores()[1] == state.scores()[2] == 12
    assert state.winners() == [2]


def test_long_game_plays_sets_until_two_are_won():
    state = Loop(2, seed=9, long_game=True)
    for set_number in (1, 2):
        state = Loop.from_dict(state.to_dict())
        state.hands = [["9g"], ["2g", "3g"]]
        state.set_aside = [["8g", "1r"], ["2r", "3r"]]
        state.played = [[], []]
        state.aside = sort_cards([c for c in ALL_CARDS if c not in {"9g", "2g", "3g", "8g", "1r", "2r", "3r"}])
        state.phase, state.points, state.turn_seat = "play", [5, 2], 0
        events = state.apply("play 9g")
        won = next(e for e in events if isinstance(e, SetWon))
        assert won.player == 0 and won.set_number == set_number
        if set_number == 1:
            assert not state.is_over and state.sets_won == [1, 0]
            assert state.scores() == [2, 2] and state.set_number == 2 and state.round_number == 1
            assert isinstance(events[-1], RoundStarted) and events[-1].round_kind == "normal"
            assert [len(h) for h in state.hands] == [11, 11] and state.phase == "setaside"
    assert state.is_over and state.winners() == [0] and isinstance(events[-1], GameOver)
    assert "won 2 sets" in events[-1].text


# ----- optional three 8s -------------------------------------------------------------------------------------------
def test_three_eights_must_be_revealed_for_a_point_and_a_redeal():
    hands = [["1g", "2g"], ["8r", "8g", "8b", "3g"]]
    state = position(players=2, hands=hands, set_aside=[[], []], phase="setaside", must_reveal=1, three_eights=True)
    assert state.current_player == 1 and [str(a) for a in state.legal_actions()] == ["reveal"]
    assert_illegal_unchanged(state, "setaside 3g 8r", "must reveal them first")
    draws = state.chance_draws
    events = state.apply("reveal")
    assert kinds(events) == [ThreeEights] and "three 8s" in events[0].text
    assert state.scores() == [2, 3] and state.chance_draws == draws + 1
    assert [len(h) for h in state.hands] == [11, 11] and len(state.aside) == 23


def test_three_eights_detected_after_the_deal_only_with_the_option():
    seed = next(s for s in range(500) if Loop(4, s, three_eights_redeal=True).must_reveal is not None)
    state = Loop(4, seed, three_eights_redeal=True)
    holder = state.must_reveal
    assert set(state.hands[state.seat_of[holder]]) >= EIGHTS
    assert Loop(4, seed).must_reveal is None
    plain = Loop(4, seed)
    assert_illegal_unchanged(plain, "reveal", "not in play")
    other = Loop(4, 0, three_eights_redeal=True)
    if other.must_reveal is None:
        assert_illegal_unchanged(other, "reveal", "only a player dealt all three 8s")


def test_three_eights_checked_when_picking_up_a_seat():
    state = position(
        players=2,
        hands=[["9g"], ["2g"]],
        set_aside=[["8r", "1r"], ["2r", "3r"]],
        played=[["8g", "8b"], []],
        three_eights=True,
    )
    state.apply("play 9g")
    state.apply("seat 2")
    events = state.apply("seat 1")
    assert isinstance(events[-1], RoundStarted)
    assert state.must_reveal == 0 and state.current_player == 0  # Player 1 kept seat 1 with all three 8s
    state.apply("reveal")
    assert state.round_number == 2 and state.rank_cards == [1, 2]  # still a loop round, Rank cards stay


# ----- seeds, text, saved states, options -------------------------------------------------------------------------
def test_seeded_replay_and_different_seeds():
    a, b = Loop(3, 42), Loop(3, 42)
    rng = random.Random(0)
    while not a.is_over:
        action = greedy_policy(a, a.current_player, rng)
        a.apply(action)
        b.apply(str(action))
    assert a == b
    assert Loop(3, 1).hands != Loop(3, 2).hands


@pytest.mark.parametrize(
    "text",
    ["play 9r 10r 11r", "pass", "twist 8g", "setaside 3r 15b", "seat 3", "reveal", "p2 play 9r", "p4 seat 1"],
)
def test_action_text_round_trips(text):
    assert str(Loop.parse_action(text)) == text
    assert Loop.parse_action(str(Loop.parse_action(text))) == Loop.parse_action(text)


def test_parse_is_forgiving_about_order_and_case():
    assert Loop.parse_action("PLAY 11R 9r 10r") == Play(("9r", "10r", "11r"))
    assert Loop.parse_action("setaside 15b 3r") == SetAside(("3r", "15b"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "dance",
        "play",
        "play 16r",
        "play 9x",
        "play 9r 9r",
        "pass 9r",
        "twist",
        "twist 8g 8b",
        "setaside 3r",
        "seat",
        "seat 0",
        "seat two",
        "p0 pass",
        "reveal now",
        "p2",
        "play r9",
    ],
)
def test_garbage_is_a_bad_action(text):
    with pytest.raises(BadAction):
        Loop.parse_action(text)


def test_bad_options_are_refused():
    with pytest.raises(GameError, match="long_game"):
        games.create("loop", long_game="yes")
    with pytest.raises(GameError, match="players"):
        games.create("loop", players=5)
    with pytest.raises(GameError, match="unknown option"):
        games.create("loop", jokers=True)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("phase", "dancing", "phase"),
        ("hands", "1r 2r", "hands"),
        ("hands", ["1r 2r", 5, "", ""], "hands"),
        ("hands", ["1r 99q", "", "", ""], "hands"),
        ("seat_of", [0, 0, 1, 2], "seat_of"),
        ("points", [2, 2, -1, 2], "points"),
        ("twisted", "no", "twisted"),
        ("aside", "", "45 cards must each lie in exactly one place"),
        ("table", "3r 9g", "table"),
        ("rank_cards", [1, 2, 3, 9], "rank_cards"),
        ("turn_seat", 7, "turn_seat"),
    ],
)
def test_broken_saved_state_names_the_field(field, value, message):
    data = games.create("loop", seed=1).to_dict()
    data["state"][field] = value
    with pytest.raises(BadState, match=message):
        games.load(data)


def test_missing_field_is_named():
    data = games.create("loop", seed=1).to_dict()
    del data["state"]["played"]
    with pytest.raises(BadState, match="played"):
        Loop.from_dict(data)


# ----- views and text ----------------------------------------------------------------------------------------------
def test_view_hides_hands_and_set_aside_cards():
    state = position()
    view = state.view(1)
    assert view["seats"][1]["hand"] == sort_cards(HANDS4[1])
    assert view["seats"][0]["hand"] == ["?"] * 4 and view["seats"][0]["hand_count"] == 4
    assert view["seats"][0]["set_aside"] == ["?", "?"]
    assert view["seats"][1]["set_aside"] == sort_cards(ASIDE4[1])
    spectator = json.dumps(state.view(None))
    assert not any(f'"{c}"' in spectator for h in HANDS4 for c in h)


def test_describe_and_event_sentences():
    state = position(table=["2b"], table_seat=3)
    text = state.describe(0)
    assert "Seat 1 (start): Player 1" in text and "3r 4r 5r 9g" in text and "Player 1 to play or pass" in text
    assert "3r" not in state.describe(1).split("\n")[2]
    rng = random.Random(2)
    game = Loop(4, 11, long_game=True)
    while not game.is_over:
        for event in game.apply(greedy_policy(game, game.current_player, rng)):
            assert event.text.endswith(".")
            assert isinstance(event, GameOver) or ". " not in event.text
            json.dumps(event.to_dict())


# ----- greedy policy --------------------------------------------------------------------------------------------------
def test_greedy_beats_random_and_finishes():
    info = games.info("loop")
    wins = 0
    for seed in range(20):
        state = games.create("loop", players=3, seed=seed, three_eights_redeal=True)
        policies = {0: info.policy("greedy"), 1: info.policy("random"), 2: info.policy("random")}
        play_out(state, policies, random.Random(seed))
        wins += state.winners() == [0]
    assert wins >= 12


def test_greedy_choices():
    state = position(table=["2b"], table_seat=3)
    assert greedy_policy(state, 0, random.Random(0)) == Play(("3r",))  # weakest play that beats the table
    assert greedy_policy(state, 1, random.Random(0)) is None  # not its turn
    lead = position()
    assert greedy_policy(lead, 0, random.Random(0)) == Play(("3r", "4r", "5r"))  # long sequence first
    hopeless = position(table=["15b"], table_seat=3)
    assert greedy_policy(hopeless, 0, random.Random(0)) == Twist("8g")  # twisting makes 15 the weakest
    fresh = Loop(4, 3)
    pick = greedy_policy(fresh, 0, random.Random(0))
    assert isinstance(pick, SetAside) and not set(pick.cards) & EIGHTS


def test_greedy_uses_only_its_view():
    state = position(table=["2b"], table_seat=3)
    other = position(hands=[HANDS4[0], HANDS4[2], HANDS4[1], HANDS4[3]], table=["2b"], table_seat=3)
    assert state.view(0) == other.view(0)
    assert greedy_policy(state, 0, random.Random(0)) == greedy_policy(other, 0, random.Random(0))
