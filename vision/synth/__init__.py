"""Synthetic tabletop data: component art, photo-real scenes with exact labels, full-game videos.

Nothing here knows game rules; the full-game videos take their moves from `games/` through the CLI layer.
"""
