"""`tabletop foo`: the assistant runs Dr. Foo for a physical game of The LOOP.

The agents play their turns with the real components; the assistant says what Dr. Foo does, asks where his
rift cubes landed (or simulates the chutes when nobody watches), and takes the agents' changes to the board
(cubes removed, clones moved, missions completed) so its vortex and defeat checks stay right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from companion_ui.speech import Priority, Speaker
from games import GameError, GameState, NothingToUndo
from games.core import Event

HELP = """During the agents' turn, type the changes they make to the board:
  add green ERA N / remove green ERA N / remove red ERA N     cubes (ERA: dawn med ren ind glo rob end)
  clone CLONE to ERA / destroy CLONE                         clones
  progress green|red at ERA / complete ERA                   missions
  done    the agents' turn is over: Dr. Foo goes next      board   show the board
  undo    take back the last change                         quit    stop (the game is saved with --save)"""


class FooSession:
    """A read-eval loop; input, output and speech are injected so tests drive it with real parts."""

    def __init__(
        self,
        table: GameState,
        read: Callable[[str], str],
        out: TextIO,
        speaker: Speaker | None,
        on_change: Callable[[GameState], None] | None = None,
    ) -> None:
        self.table = table
        self.read = read
        self.out = out
        self.speaker = speaker
        self.on_change = on_change

    def run(self, auto: bool = False) -> int:
        from games.the_loop import foo

        self._print(self.table.describe(None))
        while not self.table.is_over:
            if foo.awaiting_landing(self.table):
                landing = None if auto else self._ask_landing()
                if landing is False:
                    return self._stopped()
                self._announce(foo.land(self.table, landing or None))
            elif foo.awaiting_foo(self.table):
                self._announce(foo.foo_turn(self.table))
            else:
                finished = True if auto else self._agents_turn()
                if finished is None:
                    return self._stopped()
                if finished and not self.table.is_over:
                    self._announce(foo.end_agents_turn(self.table))
        self._print(self.table.describe(None))
        return 0

    def _stopped(self) -> int:
        self._print("Stopped. The game was not finished.")
        return 1

    def _ask_landing(self) -> tuple[int, int, int] | bool | None:
        """The observed landing (previous, Dr. Foo's, next), None to simulate it, False to quit."""
        from games.the_loop import foo

        drop = foo.pending_drop(self.table)
        while True:
            text = self._input(
                f"Where did the {drop} rift cubes land? Previous, Dr. Foo's and next Era, e.g. "
                f"'{_example_split(drop)}' (Enter: simulate the chutes)> "
            )
            if text is None or text == "quit":
                return False
            if text == "":
                return None
            parts = text.replace(",", " ").split()
            if len(parts) != 3 or not all(p.isdigit() for p in parts):
                self._print("Type three whole numbers: previous Era, Dr. Foo's Era, next Era.")
                continue
            counts = (int(parts[0]), int(parts[1]), int(parts[2]))
            if sum(counts) != drop:
                self._print(f"Those add up to {sum(counts)}, but {drop} cubes were dropped.")
                continue
            return counts

    def _agents_turn(self) -> bool | None:
        """Take board changes until 'done' (True). None: the players quit. False: an undo went back past the
        start of the agents' turn (to Dr. Foo's landing), so the main loop asks for that again."""
        from games.the_loop import foo

        self._print("Agents' turn. Type the changes to the board as you make them, then 'done' ('help' lists them).")
        while not self.table.is_over:
            text = self._input("agents> ")
            if text is None or text == "quit":
                return None
            if text == "done":
                return True
            if text == "help":
                self._print(HELP)
            elif text == "board":
                self._print(self.table.describe(None))
            elif text == "undo":
                self._undo()
                if foo.awaiting_landing(self.table) or foo.awaiting_foo(self.table):
                    return False
            elif text:
                try:
                    self._announce(foo.enter(self.table, text))
                except GameError as err:
                    self._print(f"Not taken: {getattr(err, 'reason', err)}")
        return True

    def _undo(self) -> None:
        try:
            self.table.undo()
        except NothingToUndo as err:
            self._print(str(err))
            return
        self._changed()
        self._print("Undone.")

    def _announce(self, events: Sequence[Event]) -> None:
        for event in events:
            self._print(event.text)
            if self.speaker is not None:
                self.speaker.say(event.text, Priority.URGENT if event.urgent else Priority.NORMAL)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.table)

    def _print(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _input(self, prompt: str) -> str | None:
        try:
            return self.read(prompt).strip()
        except EOFError:
            return None


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
