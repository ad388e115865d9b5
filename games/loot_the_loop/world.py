"""A dealt Loot the Loop table in card types, played fast: what the solver's rollouts play in.

Why not the engine: a rollout plays a hundred moves, and the engine's cards, events, views and legality checks
cost more than the solver's own search. Suits never matter, so a table here is card *types* (the solver's
`Pos` encoding) with the face-down ones known, and its moves are the solver's. It follows the engine's rules to
the letter (`tests/test_loot_the_loop_world.py` plays both side by side), including the forced end: the game
is lost as soon as there is no move, or only explores that land on face-up traps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from games.loot_the_loop.engine import ACES_TO_ESCAPE, RESULT_CORNERED, RESULT_ESCAPED, RESULT_STUCK, RESULT_TRAPPED
from games.loot_the_loop.solver import ACE, DOWN, EXIT, TRAP, TYPES, Move, Pos, lands_on_trap, moves


@dataclass
class World:
    """One determinisation of a table: `cards` are the true types top first, `up` which of them are face up."""

    cards: list[int]
    up: list[bool]
    notes: list[int]
    aces: int
    trinkets: int
    idle: int = 0
    result: str = ""
    _unseen: list[int] = field(default_factory=list)  # counts by type of the face-down cards

    @classmethod
    def deal(cls, pos: Pos, idle: int, rng: random.Random) -> World:
        """The face-down slots of a visible position filled with its unseen cards in a random order."""
        hidden = [t for t in TYPES for _ in range(pos.unseen[t])]
        rng.shuffle(hidden)
        if len(hidden) != pos.deck.count(DOWN):
            raise ValueError(f"{len(hidden)} unseen cards for {pos.deck.count(DOWN)} face-down slots")
        fill = iter(hidden)
        cards = [next(fill) if t == DOWN else t for t in pos.deck]
        return cls(cards, [t != DOWN for t in pos.deck], list(pos.notes), pos.aces, pos.trinkets, idle,
                   _unseen=list(pos.unseen))  # fmt: skip

    @property
    def over(self) -> bool:
        return bool(self.result)

    @property
    def score(self) -> int:
        return self.aces + self.trinkets

    def pos(self) -> Pos:
        """What the player sees."""
        return Pos(
            deck=tuple(c if u else DOWN for c, u in zip(self.cards, self.up, strict=True)),
            notes=tuple(sorted(self.notes)),
            aces=self.aces,
            trinkets=self.trinkets,
            unseen=tuple(self._unseen),
        )

    def apply(self, move: Move) -> None:
        """Carry out a legal move (the solver's encoding), then the engine's forced-end check."""
        kind, n = move
        if kind == "look":
            for i in range(1 if self.up[1] else 2):
                self.up[i] = True
                self._unseen[self.cards[i]] -= 1
            self.idle = 0
        elif kind == "mark":
            self.notes.append(self.cards.pop(0))
            self.up.pop(0)
            self.idle += 1
        elif kind == "return":
            self.notes.remove(n)
            self.cards.insert(0, n)
            self.up.insert(0, True)
            self.idle += 1
        else:
            self._explore(n)
        if not self.result:
            self._forced_end()

    def _explore(self, n: int) -> None:
        k = n % len(self.cards)
        self.cards = self.cards[k:] + self.cards[:k]
        self.up = self.up[k:] + self.up[:k]
        self.idle += 1
        top = self.cards[0]
        if not self.up[0]:
            return
        if top == TRAP:
            self.result = RESULT_TRAPPED
        elif top == EXIT:
            if self.aces >= ACES_TO_ESCAPE:
                self.result = RESULT_ESCAPED
        else:
            self.cards.pop(0)
            self.up.pop(0)
            if top == ACE:
                self.aces += 1
            else:
                self.trinkets += 1
            self.idle = 0

    def _forced_end(self) -> None:
        pos = self.pos()
        legal = moves(pos)
        if not legal:
            self.result = RESULT_STUCK
        elif all(kind == "explore" and lands_on_trap(pos, n) for kind, n in legal):
            self.result = RESULT_CORNERED
