"""Loot the Loop (solo): the rules engine, a solver that only uses what the player sees, and its benchmark."""
