"""LOOP (Takashi Saito): a ladder-climbing shedding game where the cards stay on the table and players change seats.

The engine lives in `games.loop.engine`, the greedy policy in `games.loop.policy`.
"""
