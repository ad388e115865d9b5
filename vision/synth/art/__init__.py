"""Procedural art for the components of the four games that have no installable real art: many designs each, so a
recogniser learns what the pieces say (numbers, colours, names), not one printing's look."""
