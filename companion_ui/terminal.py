"""Playing a game in the terminal: people at some seats, policies at the others.

Meant for learning the rules: every illegal try is answered with the rule it breaks, `undo` takes a move
back, and the table is redrawn from the human's point of view only (no peeking at other hands).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from companion_ui.console import Console
from games import GameError, GameState, IllegalMove, seat_name
from games.core import JSON, Action, BadAction, Event
from games.play import Step, play_out
from games.registry import GameInfo, Policy

HUMAN = "human"

HELP = """Type an action (its number or its text), or:
  undo   take back the last action        table  show the table again
  hint   a suggested move and why         help   this text
  quit   stop playing (the game is kept where --save says)"""


@dataclass
class Seats:
    """Who plays each seat: "human" or a policy name."""

    kinds: tuple[str, ...]

    @classmethod
    def parse(cls, text: str | None, game: GameInfo, players: int, auto: bool) -> Seats:
        """`"human,random,solver"`; missing seats are random. `--auto` allows no human seat."""
        default = "random"
        if text is None:
            kinds = [default] * players if auto else [HUMAN] + [default] * (players - 1)
        else:
            kinds = [k.strip() for k in text.split(",") if k.strip()]
            if len(kinds) > players:
                raise GameError(f"--seats names {len(kinds)} seats but the game has {players} players")
            kinds += [default] * (players - len(kinds))
        for kind in kinds:
            if kind != HUMAN:
                game.policy(kind)  # raises a clear error for an unknown policy name
        if auto and HUMAN in kinds:
            raise GameError("--auto plays unattended: no seat may be 'human'")
        return cls(tuple(kinds))

    def policies(self, game: GameInfo) -> dict[int, Policy]:
        return {p: game.policy(k) for p, k in enumerate(self.kinds) if k != HUMAN}


def auto_game(state: GameState, seats: Seats, game: GameInfo, rng: random.Random) -> JSON:
    """Play a whole game unattended and return a JSON-safe record of it."""
    steps = play_out(state, seats.policies(game), rng)
    return game_record(state, seats, steps)


def game_record(state: GameState, seats: Seats, steps: Sequence[Step]) -> JSON:
    final = state.to_dict()
    final["history"] = []  # the action log below replaces the snapshots; keeps the output readable
    return {
        "game": state.name,
        "players": state.num_players,
        "seed": state.seed,
        "options": state.options,
        "seats": list(seats.kinds),
        "actions": [
            {"player": s.player + 1, "action": str(s.action), "events": [e.to_dict() for e in s.events]} for s in steps
        ],
        "scores": state.scores(),
        "winners": [p + 1 for p in state.winners()],
        "final_state": final,
    }


class TerminalGame(Console):
    """A read-eval loop over one game. Input and output are injectable so tests can drive it."""

    def __init__(
        self,
        state: GameState,
        seats: Seats,
        game: GameInfo,
        rng: random.Random,
        read: Callable[[str], str],
        out: TextIO,
        hint: Callable[[GameState, int], str] | None = None,
        on_change: Callable[[GameState], None] | None = None,
    ) -> None:
        super().__init__(state, read, out, on_change)
        self.seats = seats
        self.game = game
        self.rng = rng
        self.hint = hint
        self.policies: Mapping[int, Policy] = seats.policies(game)
        self._declined: set[tuple[int, int, tuple[str, ...]]] = set()

    def run(self) -> int:
        self.say(f"{self.game.title}: {self.state.num_players} player(s), seed {self.state.seed}. Type 'help'.")
        human = next((p for p, k in enumerate(self.seats.kinds) if k == HUMAN), None)
        self.say(self.state.describe(human))
        while not self.state.is_over:
            if not self._step():
                return self.stopped()
        self.say(self.state.describe(human))
        self.say("Final scores: " + ", ".join(f"{seat_name(p)}: {s}" for p, s in enumerate(self.state.scores())))
        return 0

    def _act(self, player: int, action: Action) -> None:
        """Apply, save, and announce: the one place a move takes effect. Saved before it is told, so a move the
        players heard is never one a crash loses.

        A machine seat's action text can hold what the human may not see (the cards a LOOP player sets aside,
        the face-down card of a bluffed Bag-O-Loot), so for those seats only the events, which are public
        announcements, are printed.
        """
        events: Sequence[Event] = self.state.apply(action)
        self.changed()
        if self.seats.kinds[player] == HUMAN:
            self.say(f"{seat_name(player)}: {action}")
        elif not events:
            self.say(f"{seat_name(player)} has acted.")
        for event in events:
            self.say(f"  {event.text}")

    def _step(self) -> bool:
        """One action, asked in the shared driver's order: out-of-turn actors first, then the current player.

        A human who lets an out-of-turn chance pass is not asked again about the same choices.
        Returns False when the human quits or input ends.
        """
        current, *others = self.state.actors()
        for p in others:
            if p in self.policies:
                action = self.policies[p](self.state, p, self.rng)
                if action is not None:
                    self._act(p, action)
                    return True
                continue
            offer = (p, self.state.history_length, tuple(map(str, self.state.legal_actions(p))))
            if offer[2] and offer not in self._declined:
                answer = self._prompt(p, out_of_turn=True)
                if answer is None:
                    return False
                if answer:
                    return True
                self._declined.add(offer)
        if current in self.policies:
            action = self.policies[current](self.state, current, self.rng)
            if action is None:
                raise GameError(f"the {self.seats.kinds[current]} policy declined to move on its own turn")
            self._act(current, action)
            return True
        return self._prompt(current) is True

    def _prompt(self, player: int, out_of_turn: bool = False) -> bool | None:
        """Ask a human for an action. True: acted; False: let an out-of-turn chance pass; None: quit."""
        actions = self.state.legal_actions(player)
        listing = numbered(actions)
        if out_of_turn:
            self.say(f"{seat_name(player)}, you may act out of turn (Enter to let it pass): {listing}")
        else:
            self.say(f"{seat_name(player)} to act: {listing}")
        while True:
            text = self.ask(f"{seat_name(player)}> ")
            if self.stops(text):
                return None
            if text == "" and out_of_turn:
                return False
            if text == "undo":
                if self.undo():
                    self.say(self.state.describe(player))
                    return True  # the table changed: ask again from the top, with its actions listed afresh
                continue
            if text == "" or self._command(text, player):
                continue
            if self._try(player, text, actions):
                return True

    def _command(self, text: str, player: int) -> bool:
        """Handle the non-move commands; True if `text` was one."""
        if text == "help":
            self.say(HELP)
        elif text == "table":
            self.say(self.state.describe(player))
        elif text == "hint":
            self.say(self.hint(self.state, player) if self.hint is not None else "No hints for this game.")
        else:
            return False
        return True

    def _try(self, player: int, text: str, actions: Sequence[Action]) -> bool:
        if text.isdigit():
            index = int(text) - 1
            if not 0 <= index < len(actions):
                self.say(f"No action number {text}: choose 1-{len(actions)}.")
                return False
            action: Action = actions[index]
        else:
            try:
                action = self.state.parse_action(text)
            except BadAction as err:
                self.say(f"Not an action: {err}")
                return False
        if action not in self.state.legal_actions(player):
            problem = self.state.violation(action)
            reason = f"{problem.reason} [rule: {problem.rule}]" if problem else "it is not your action to take now"
            self.say(f"Illegal: {reason}")
            return False
        try:
            self._act(player, action)
        except IllegalMove as err:
            self.say(f"Illegal: {err.reason} [rule: {err.rule}]")
            return False
        if not self.state.is_over:
            self.say(self.state.describe(player))
        return True


def numbered(actions: Sequence[Action], most: int = 24) -> str:
    """`[1] look  [2] mark ...`; a long list is cut short (the numbers still work, and so does typing)."""
    shown = "  ".join(f"[{i}] {a}" for i, a in enumerate(actions[:most], 1))
    if len(actions) > most:
        shown += f"  ... and {len(actions) - most} more: type one, e.g. '{actions[-1]}'"
    return shown


def dumps(record: JSON) -> str:
    return json.dumps(record, indent=2, sort_keys=False)
