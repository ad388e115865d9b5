"""Bag-O-Loot: a set-collection card game with steals, holdups and bluffed Bags-O-Loot."""
