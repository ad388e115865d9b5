"""Loot Roll: a party crawls three dungeons and rolls d20s for the loot (engine, catalogue, simple policy)."""
