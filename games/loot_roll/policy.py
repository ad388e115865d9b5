"""A simple Loot Roll player: gear up, fight when the party looks stronger than the monster, buy what it can
afford cheaply, bank the rest.

It reads only `state.view(player)`, the printed cards of the catalogue the view names (public: every player
can read any card) and its own legal actions (which depend only on its own cards and the open table).
"""

from __future__ import annotations

import random
from statistics import mean

from games.core import JSON, Action, GameState
from games.hints import DEFAULT_BUDGET, Budget, Hint, reseed, rollout_hint, seat_action
from games.loot_roll.catalogue import Catalogue, load_catalogue
from games.loot_roll.effects import ROLL, SURVIVABILITY
from games.loot_roll.engine import (
    Buy,
    Choose,
    Deposit,
    Discard,
    Done,
    Equip,
    Explore,
    Fight,
    LootRoll,
    Play,
    Roll,
    replaced_slots,
)

MAX_PRICE_PAID = 8  # treasure the policy will give up for one ability card (it is score lost)


def simple_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    legal = state.legal_actions(player)
    if not legal:
        return None
    view = state.view(player)
    if player != view["current"]:
        return None  # out of turn only roll cards are legal (any player's, during a roll): kept for its own roll
    cat = load_catalogue(view["catalogue"])
    phase = view["phase"]
    upgrade = _best_equip(cat, view, player, legal, for_score=phase == "end")
    if upgrade is not None and phase != "roll":
        return upgrade
    choose = {
        "turn": _turn,
        "prep": _prep,
        "fight": _fight,
        "roll": _roll,
        "town": _town,
    }.get(phase)
    action = choose(cat, view, player, legal, rng) if choose else None
    return action or _fallback(legal)


def _of(legal: list[Action], kind: type) -> list[Action]:
    return [a for a in legal if isinstance(a, kind)]


def _fallback(legal: list[Action]) -> Action:
    for kind in (Done, Roll, Choose):
        found = _of(legal, kind)
        if found:
            return found[0]
    return legal[0]


def _best_equip(cat: Catalogue, view: JSON, player: int, legal: list[Action], for_score: bool) -> Action | None:
    """The equip that gains the most survivability (at the end: the most treasure moved into the bag).

    Only strict gains count, so equipping can never go round in circles."""
    gear = view["players"][player]["gear"]
    best, best_gain = None, 0
    for action in _of(legal, Equip):
        item = cat.loot[action.card]
        replaced = [cat.loot[gear[s]] for s in replaced_slots(cat, gear, item)]
        if for_score:
            gain = sum(r.value for r in replaced) - item.value if replaced else 0
        else:
            gain = item.survivability - sum(r.survivability for r in replaced)
        if gain > best_gain:
            best, best_gain = action, gain
    return best


def _party_strength(view: JSON) -> int:
    return sum(p["survivability"] for p in view["players"])


def _turn(cat: Catalogue, view: JSON, player: int, legal: list[Action], rng: random.Random) -> Action | None:
    me = view["players"][player]
    if me["bag_size"] >= 7 and _of(legal, Discard):
        return min(_of(legal, Discard), key=lambda a: cat.loot[a.cards[0]].value)
    party = _party_strength(view)
    normal = mean(m.strength(False) for m in cat.monsters.values())
    boss = mean(m.strength(True) for m in cat.monsters.values())
    if party > boss + 2:
        return Fight(True)
    if Fight(False) not in legal:  # the boss is forced: gear up by exploring first, unless luck is needed
        return Fight(True) if party > boss or Explore() not in legal or rng.random() < 0.2 else Explore()
    if party > normal or Explore() not in legal or rng.random() < 0.25:
        return Fight(False)
    return Explore()


def _prep(cat: Catalogue, view: JSON, player: int, legal: list[Action], rng: random.Random) -> Action | None:
    monster = view["monster"]
    nothing_to_lose = view["players"][player]["bag_size"] == 0
    likely = monster["party"] > monster["survivability"]
    return Choose(likely or nothing_to_lose)


def _helps_fight(cat: Catalogue, action: Play) -> bool:
    effects = cat.card(action.card).effects
    return action.target is None and any(
        e.kind == SURVIVABILITY and ((e.amount > 0) != (e.target == "monster")) for e in effects
    )


def _fight(cat: Catalogue, view: JSON, player: int, legal: list[Action], rng: random.Random) -> Action | None:
    monster = view["monster"]
    if view["players"][player]["choice"] == "fight" and monster["party"] <= monster["survivability"]:
        helpful = [a for a in _of(legal, Play) if _helps_fight(cat, a)]
        if helpful:
            return helpful[0]
    return Done()


def _roll(cat: Catalogue, view: JSON, player: int, legal: list[Action], rng: random.Random) -> Action | None:
    boosts = [
        a
        for a in _of(legal, Play)
        if a.target is None and any(e.kind == ROLL and e.amount > 0 for e in cat.card(a.card).effects)
    ]
    if boosts and rng.random() < 0.5:
        return boosts[0]
    return Roll()


def _town(cat: Catalogue, view: JSON, player: int, legal: list[Action], rng: random.Random) -> Action | None:
    buys = [a for a in _of(legal, Buy) if sum(cat.loot[c].value for c in a.payment) <= MAX_PRICE_PAID]
    if buys and view["town"]["bought"] == 0:
        return min(buys, key=lambda a: (sum(cat.loot[c].value for c in a.payment), -cat.abilities[a.card].price))
    deposits = _of(legal, Deposit)
    if deposits:
        return max(deposits, key=lambda a: cat.loot[a.card].value)
    return Done()


# ----- hints: the simple policy's determinised rollouts (games/hints.py) ---------------------------------------
def determinize(state: GameState, player: int, rng: random.Random) -> GameState:
    """Every card `player` cannot see (the deck orders, other players' hands, bags and banks) dealt again among
    those places, each card only where its kind could be (an ability card where one was: the backs differ),
    hidden fight/flight choices drawn again, and the dice reseeded."""
    assert isinstance(state, LootRoll)
    world = state.search_copy()
    others = [q for q in range(world.num_players) if q != player]
    zones = list(world.decks.values()) + [z[q] for z in (world.hands, world.bags, world.banks) for q in others]
    slots: dict[str, list[tuple[list[str], int]]] = {}
    for zone in zones:
        for i, card in enumerate(zone):
            slots.setdefault(_pile(world.cat, card), []).append((zone, i))
    for places in slots.values():
        cards = sorted(zone[i] for zone, i in places)  # sorted: the deal must not depend on where they lie
        rng.shuffle(cards)
        for (zone, i), card in zip(places, cards, strict=True):
            zone[i] = card
    if world.phase == "prep":  # choices are face down until the last is made
        for q in others:
            if world.choices[q]:
                world.choices[q] = rng.choice(("fight", "flight"))
    if world.found and world.current != player:
        world.found = world.bags[world.current][-1]  # the card just found went to the back of the bag
    return reseed(world, rng)


def _pile(cat: Catalogue, card: str) -> str:
    if card in cat.abilities:
        return "ability"
    return cat.loot[card].rarity if card in cat.loot else "monster"


def hint(state: GameState, player: int, rng: random.Random, budget: Budget = DEFAULT_BUDGET) -> Hint:
    return rollout_hint(state, player, rng, determinize, simple_policy, budget, _dungeon_over)


def _dungeon_over(start: GameState, now: GameState) -> bool:
    """Rollouts stop when the dungeon ends (in town): the treasure banked by then decides, and a dungeon is a
    third of a game's work."""
    assert isinstance(start, LootRoll) and isinstance(now, LootRoll)
    return now.dungeon != start.dungeon or (now.phase == "town" and start.phase != "town")


def hint_policy(state: GameState, player: int, rng: random.Random) -> Action | None:
    return seat_action(hint, state, player, rng)
