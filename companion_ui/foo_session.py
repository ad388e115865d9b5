"""`tabletop foo`: the assistant runs Dr. Foo for a physical game of The LOOP.

The agents play their turns with the real components; the assistant says what Dr. Foo does, asks where his
rift cubes landed (or simulates the chutes when nobody watches), and takes the agents' changes to the board
(cubes removed, clones moved, missions completed) so its vortex and defeat checks stay right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from companion_ui.console import Console
from companion_ui.speech import Priority, Speaker
from games import GameError, GameState
from games.core import Event
from games.the_loop.eras import CODES as ERA_CODES

HELP = """During the agents' turn, type the changes they make to the board:
  add green ERA N / remove green ERA N / remove red ERA N     cubes (ERA: {eras}, or 1-7)
  clone CLONE to ERA / destroy CLONE                         clones
  progress green|red at ERA / complete ERA                   missions
  done    the agents' turn is over: Dr. Foo goes next      board   show the board
  undo    take back the last change                         quit    stop (the game is saved with --save)""".format(
    eras=" ".join(ERA_CODES)
)


class FooSession(Console):
    """A read-eval loop; input, output and speech are injected so tests drive it with real parts."""

    def __init__(
        self,
        table: GameState,
        read: Callable[[str], str],
        out: TextIO,
        speaker: Speaker | None,
        on_change: Callable[[GameState], None] | None = None,
    ) -> None:
        super().__init__(table, read, out, on_change)
        self.speaker = speaker
        self.told = 0  # events spoken so far: each one's dedupe key

    def run(self, auto: bool = False) -> int:
        from games.the_loop import foo

        self.say(self.state.describe(None))
        while not self.state.is_over:
            if foo.awaiting_landing(self.state):
                landing = None if auto else self._ask_landing()
                if landing is False:
                    return self.stopped()
                self._announce(foo.land(self.state, landing or None))
            elif foo.awaiting_foo(self.state):
                self._announce(foo.foo_turn(self.state))
            else:
                finished = True if auto else self._agents_turn()
                if finished is None:
                    return self.stopped()
                if finished and not self.state.is_over:
                    self._announce(foo.end_agents_turn(self.state))
        self.say(self.state.describe(None))
        return 0

    def _ask_landing(self) -> tuple[int, int, int] | bool | None:
        """The observed landing (previous, Dr. Foo's, next), None to simulate it, False to quit."""
        from games.the_loop import foo

        drop = foo.pending_drop(self.state)
        while True:
            text = self.ask(
                f"Where did the {drop} rift cubes land? Previous, Dr. Foo's and next Era, e.g. "
                f"'{_example_split(drop)}' (Enter: simulate the chutes)> "
            )
            if self.stops(text):
                return False
            if text == "":
                return None
            parts = text.replace(",", " ").split()
            if len(parts) != 3 or not all(p.isdigit() for p in parts):
                self.say("Type three whole numbers: previous Era, Dr. Foo's Era, next Era.")
                continue
            counts = (int(parts[0]), int(parts[1]), int(parts[2]))
            if sum(counts) != drop:
                self.say(f"Those add up to {sum(counts)}, but {drop} cubes were dropped.")
                continue
            return counts

    def _agents_turn(self) -> bool | None:
        """Take board changes until 'done' (True). None: the players quit. False: an undo went back past the
        start of the agents' turn (to Dr. Foo's landing), so the main loop asks for that again."""
        from games.the_loop import foo

        self.say("Agents' turn. Type the changes to the board as you make them, then 'done' ('help' lists them).")
        while not self.state.is_over:
            text = self.ask("agents> ")
            if self.stops(text):
                return None
            if text == "done":
                return True
            if text == "help":
                self.say(HELP)
            elif text == "board":
                self.say(self.state.describe(None))
            elif text == "undo":
                self.undo()
                if foo.awaiting_landing(self.state) or foo.awaiting_foo(self.state):
                    return False
            elif text:
                try:
                    self._announce(foo.enter(self.state, text))
                except GameError as err:
                    self.say(f"Not taken: {getattr(err, 'reason', err)}")
        return True

    def _announce(self, events: Sequence[Event]) -> None:
        for event in events:
            self.say(event.text)
            if self.speaker is not None:  # each event is its own fact, even in words just said
                self.told += 1
                self.speaker.say(event.text, Priority.URGENT if event.urgent else Priority.NORMAL, f"event {self.told}")
        self.changed()


def _example_split(drop: int) -> str:
    middle = (drop + 1) // 2
    side = drop - middle
    return f"{side // 2} {middle} {side - side // 2}"


def start_table(scenario: str, difficulty: str, seed: int, agents: int) -> GameState:
    from games.the_loop import foo

    try:
        return foo.start(scenario, difficulty, seed=seed, agents=agents)
    except (OSError, ValueError) as err:
        raise GameError(str(err)) from err
