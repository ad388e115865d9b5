"""Loot Roll catalogues: the shipped starter set, malformed files with exact messages, custom files in play."""

from __future__ import annotations

import copy
import json
import random

import pytest

import games
from games.core import GameError
from games.loot_roll.catalogue import CatalogueError, load_catalogue, parse_catalogue
from games.loot_roll.effects import IMMUNE, LOOT_FROM_DISCARD, SOLO, SURVIVABILITY
from games.play import play_out
from games.policies import random_policy

TINY = {
    "name": "tiny",
    "abilities": [
        {
            "id": "rally",
            "name": "Rally",
            "price": 2,
            "effects": [{"kind": "survivability", "amount": 1, "target": "party"}],
            "source": "made up",
        }
    ],
    "loot": [
        {
            "id": "rusty-sword",
            "name": "Rusty Sword",
            "rarity": "common",
            "slot": "main hand",
            "survivability": 1,
            "value": 2,
            "source": "made up",
        },
        {"id": "coin", "name": "Coin", "rarity": "common", "value": 1, "copies": 3, "source": "made up"},
    ],
    "monsters": [
        {"id": "rat", "name": "Rat", "survivability": [1, 2], "loot": {"normal": {"common": 1}}, "source": "made up"}
    ],
}


def write(tmp_path, data, name="bad.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def broken(tmp_path, section: str, index: int, change) -> str:
    data = copy.deepcopy(TINY)
    change(data[section][index])
    return write(tmp_path, data)


def fails(path: str) -> str:
    with pytest.raises(CatalogueError) as err:
        load_catalogue(path)
    return str(err.value)


# ----- the starter catalogue ---------------------------------------------------------------------------------
def test_starter_has_enough_cards_for_a_full_game():
    cat = load_catalogue()
    rarities = [item.rarity for item in cat.loot.values()]
    assert len(cat.abilities) >= 20 and all(a.price > 0 for a in cat.abilities.values())
    assert rarities.count("common") >= 30 and rarities.count("rare") >= 20 and rarities.count("epic") >= 10
    assert len(cat.monsters) >= 20 and all(
        m.survivability[1] > m.survivability[0] for m in cat.monsters.values() if m.id != "slime"
    )
    assert all(
        card.source in ("document", "made up")
        for card in [*cat.abilities.values(), *cat.loot.values(), *cat.monsters.values()]
    )


def test_starter_includes_the_cards_the_document_quotes():
    cat = load_catalogue()
    documented = {
        c.id for c in [*cat.abilities.values(), *cat.loot.values(), *cat.monsters.values()] if c.source == "document"
    }
    assert documented == {"lone-hero", "iron-will", "magic-lute", "scavenger"}
    assert cat.abilities["lone-hero"].text.startswith("You are the only person allowed to participate in this fight.")
    assert [e.kind for e in cat.abilities["lone-hero"].effects] == [SOLO] and cat.abilities["lone-hero"].when == (
        "prep",
    )
    assert cat.abilities["iron-will"].text.startswith("You are immune to any card that lowers your survivability.")
    assert [e.kind for e in cat.abilities["iron-will"].effects] == [IMMUNE]
    lute = cat.loot["magic-lute"]
    assert (lute.value, lute.survivability, lute.use) == (8, 0, "passive")
    assert [(e.kind, e.amount, e.target) for e in lute.effects] == [(SURVIVABILITY, 2, "others")]
    assert [e.kind for e in cat.monsters["scavenger"].effects] == [LOOT_FROM_DISCARD]


def test_monster_numbers_without_a_slash_are_used_for_both():
    cat = load_catalogue()
    slime = cat.monsters["slime"]
    assert slime.survivability == (3, 3) and slime.drops(True) == slime.drops(False) == (("common", 2),)


def test_default_when_follows_the_effects():
    cat = load_catalogue()
    assert cat.abilities["battle-cry"].when == ("prep", "fight")
    assert cat.abilities["loaded-die"].when == ("roll",)
    data = copy.deepcopy(TINY)
    data["abilities"][0]["effects"] = [{"kind": "manual"}]
    assert parse_catalogue(data, "x.json").abilities["rally"].when == ("turn", "prep", "fight", "roll", "town")


# ----- malformed catalogues ----------------------------------------------------------------------------------
def test_missing_field(tmp_path):
    path = broken(tmp_path, "loot", 0, lambda e: e.pop("value"))
    assert fails(path) == "bad.json: loot[0] 'Rusty Sword': field 'value': missing"


def test_wrong_type(tmp_path):
    path = broken(tmp_path, "loot", 0, lambda e: e.update(value="2"))
    assert fails(path) == "bad.json: loot[0] 'Rusty Sword': field 'value': expected int, got str"
    path = broken(tmp_path, "loot", 1, lambda e: e.update(value=True))
    assert fails(path) == "bad.json: loot[1] 'Coin': field 'value': expected int, got bool"


def test_bad_slot(tmp_path):
    path = broken(tmp_path, "loot", 0, lambda e: e.update(slot="hat"))
    assert fails(path) == (
        "bad.json: loot[0] 'Rusty Sword': field 'slot': expected one of head, body, legs, feet, main hand, "
        "off hand, two-handed, got 'hat'"
    )


def test_duplicate_id(tmp_path):
    data = copy.deepcopy(TINY)
    data["loot"][1]["id"] = "rusty-sword"
    assert (
        fails(write(tmp_path, data))
        == "bad.json: loot[1] 'Coin': field 'id': duplicate id 'rusty-sword' (also loot[0])"
    )
    data = copy.deepcopy(TINY)
    data["monsters"][0]["id"] = "rally"
    assert (
        fails(write(tmp_path, data))
        == "bad.json: monsters[0] 'Rat': field 'id': duplicate id 'rally' (also abilities[0])"
    )


@pytest.mark.parametrize(
    ("section", "change", "message"),
    [
        ("abilities", lambda e: e.pop("price"), "abilities[0] 'Rally': field 'price': missing"),
        (
            "abilities",
            lambda e: e.update(price=-1),
            "abilities[0] 'Rally': field 'price': expected a whole number of at least 0, got -1",
        ),
        (
            "abilities",
            lambda e: e.update(source="internet"),
            "abilities[0] 'Rally': field 'source': expected one of document, made up, got 'internet'",
        ),
        (
            "abilities",
            lambda e: e.update(id="Rally Card"),
            "abilities[0] 'Rally': field 'id': expected lowercase letters, digits and '-' (typeable in actions), "
            "got 'Rally Card'",
        ),
        (
            "abilities",
            lambda e: e.update(when=["lunch"]),
            "abilities[0] 'Rally': field 'when[0]': expected one of turn, prep, fight, roll, town, got 'lunch'",
        ),
        (
            "abilities",
            lambda e: e.update(effects=[{"kind": "teleport"}]),
            "abilities[0] 'Rally': field 'effects[0].kind': expected one of survivability, roll, solo, immune, "
            "manual, got 'teleport'",
        ),
        (
            "abilities",
            lambda e: e.update(effects=[{"kind": "roll", "amount": 2, "target": "party"}]),
            "abilities[0] 'Rally': field 'effects[0].target': expected one of self, player, got 'party'",
        ),
        (
            "abilities",
            lambda e: e.update(effects=[{"kind": "survivability"}]),
            "abilities[0] 'Rally': field 'effects[0].amount': expected int, got null",
        ),
        (
            "abilities",
            lambda e: e.update(effects=[{"kind": "solo", "amount": 1}]),
            "abilities[0] 'Rally': field 'effects[0].amount': not used by 'solo'",
        ),
        (
            "abilities",
            lambda e: e.update(effects=[{"kind": "loot_from_discard"}]),
            "abilities[0] 'Rally': field 'effects[0].kind': expected one of survivability, roll, solo, immune, "
            "manual, got 'loot_from_discard'",
        ),
        ("abilities", lambda e: e.update(prise=3), "abilities[0] 'Rally': field 'prise': unknown field (a typo?)"),
        (
            "abilities",
            lambda e: e.update(effects=[{"kind": "solo"}], when=["turn"]),
            "abilities[0] 'Rally': field 'when': a 'solo' card is played in the preparation phase only: use [\"prep\"]",
        ),
        (
            "loot",
            lambda e: e.update(rarity="legendary"),
            "loot[0] 'Rusty Sword': field 'rarity': expected one of common, rare, epic, got 'legendary'",
        ),
        (
            "loot",
            lambda e: e.update(use="passive", effects=[{"kind": "solo"}]),
            "loot[0] 'Rusty Sword': field 'effects[0].kind': expected one of survivability, roll, immune "
            "(passive gear), got 'solo'",
        ),
        (
            "loot",
            lambda e: e.update(use="passive", effects=[{"kind": "survivability", "amount": -2, "target": "player"}]),
            "loot[0] 'Rusty Sword': field 'effects[0].target': expected one of self, party, others, monster, got "
            "'player'",
        ),
        (
            "loot",
            lambda e: e.update(copies=0),
            "loot[0] 'Rusty Sword': field 'copies': expected a whole number of at least 1, got 0",
        ),
        (
            "loot",
            lambda e: (e.pop("slot"), e.update(use="passive")),
            "loot[0] 'Rusty Sword': field 'survivability': only equipable loot (with a slot) has a survivability "
            "number",
        ),
        (
            "loot",
            lambda e: e.update(use="passive", slot=None, survivability=0),
            "loot[0] 'Rusty Sword': field 'use': passive effects work while equipped, so the card needs a slot",
        ),
        (
            "monsters",
            lambda e: e.update(survivability="7"),
            "monsters[0] 'Rat': field 'survivability': expected int or list, got str",
        ),
        (
            "monsters",
            lambda e: e.update(survivability=[1, 2, 3]),
            "monsters[0] 'Rat': field 'survivability': expected a number or [normal, boss] numbers of at least "
            "0, got [1, 2, 3]",
        ),
        ("monsters", lambda e: e.update(loot={"boss": {"rare": 1}}), "monsters[0] 'Rat': field 'loot.normal': missing"),
        (
            "monsters",
            lambda e: e.update(loot={"normal": {"gold": 1}}),
            "monsters[0] 'Rat': field 'loot.normal.gold': expected a rarity (common, rare, epic)",
        ),
        (
            "monsters",
            lambda e: e.update(loot={"normal": {"rare": -1}}),
            "monsters[0] 'Rat': field 'loot.normal.rare': expected a count of at least 0, got -1",
        ),
        (
            "monsters",
            lambda e: e.update(loot={"normal": {}, "elite": {}}),
            "monsters[0] 'Rat': field 'loot.elite': expected only 'normal' and 'boss'",
        ),
        ("monsters", lambda e: e.pop("name"), "monsters[0]: field 'name': missing"),
    ],
)
def test_malformed_entries_name_file_entry_and_field(tmp_path, section, change, message):
    assert fails(broken(tmp_path, section, 0, change)) == f"bad.json: {message}"


def test_malformed_files(tmp_path):
    assert fails(write(tmp_path, "{nope", "broken.json")).startswith("broken.json: not valid JSON (line 1:")
    assert fails(str(tmp_path / "missing.json")).startswith("missing.json: cannot read the catalogue file")
    assert fails(write(tmp_path, [1, 2])) == "bad.json: expected a JSON object with abilities, loot and monsters"
    data = copy.deepcopy(TINY)
    del data["monsters"]
    assert fails(write(tmp_path, data)) == "bad.json: missing section 'monsters'"
    data = copy.deepcopy(TINY)
    data["abilities"] = []
    assert fails(write(tmp_path, data)) == "bad.json: section 'abilities': expected a non-empty list of cards"
    data = copy.deepcopy(TINY)
    data["loot"] = [data["loot"][0] | {"rarity": "rare"}]
    assert (
        fails(write(tmp_path, data))
        == "bad.json: section 'loot': needs at least one common card (exploring draws them)"
    )
    data = copy.deepcopy(TINY)
    data["loot"][0] = "sword"
    assert fails(write(tmp_path, data)) == "bad.json: loot[0]: expected an object, got str"


def test_create_with_a_malformed_catalogue_is_a_game_error(tmp_path):
    path = broken(tmp_path, "loot", 0, lambda e: e.update(slot="hat"))
    with pytest.raises(GameError, match=r"bad.json: loot\[0\] 'Rusty Sword': field 'slot'"):
        games.create("loot-roll", players=2, catalogue=path)


# ----- custom catalogues in play -----------------------------------------------------------------------------
def test_a_custom_catalogue_is_used_and_saved_with_the_game(tmp_path):
    path = write(tmp_path, TINY, "tiny.json")
    state = games.create("loot-roll", players=3, seed=5, catalogue=path)
    assert state.view(0)["catalogue"] == path and state.hands.count(["rally"]) == 1  # one ability card for three
    again = games.load(json.loads(json.dumps(state.to_dict())))
    assert again == state and again.cat.name == "tiny"


@pytest.mark.parametrize("seed", range(6))
def test_a_tiny_catalogue_plays_to_the_end_with_reshuffles(tmp_path, seed):
    path = write(tmp_path, TINY, "tiny.json")
    state = games.create("loot-roll", players=2 + seed % 3, seed=seed, catalogue=path)
    steps = play_out(state, dict.fromkeys(range(state.num_players), random_policy), random.Random(seed))
    assert state.is_over and any(e.kind == "Reshuffled" for s in steps for e in s.events)
