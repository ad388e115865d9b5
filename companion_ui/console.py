"""What every terminal session shares: a game state, a prompt where end of input means "stop", undo, and a
hook called after every change (the CLI saves the game there, so nothing is lost if the terminal dies)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from games import GameState, NothingToUndo


class Console:
    def __init__(
        self,
        state: GameState,
        read: Callable[[str], str],
        out: TextIO,
        on_change: Callable[[GameState], None] | None = None,
    ) -> None:
        self.state = state
        self.read = read
        self.out = out
        self.on_change = on_change
        self.quit_typed = False  # the player typed 'quit' (a choice), as against input running out

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str) -> str | None:
        """The stripped answer, or None when input has ended (a closed pipe is a quit, not a crash)."""
        try:
            return self.read(prompt).strip()
        except EOFError:
            return None

    def stops(self, text: str | None) -> bool:
        """Whether an answer ends the session: 'quit', or input that has ended."""
        if text == "quit":
            self.quit_typed = True
        return text is None or text == "quit"

    def stopped(self) -> int:
        """Says so and gives the exit status: 0 when the player chose to quit (the game is saved where --save
        asked), 1 when input ran out before the game did."""
        self.say("Stopped. The game was not finished.")
        return 0 if self.quit_typed else 1

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.state)

    def undo(self) -> bool:
        """Take back the last action, saying what happened; False when there was nothing to undo."""
        try:
            self.state.undo()
        except NothingToUndo as err:
            self.say(str(err))
            return False
        self.changed()
        self.say("Undone.")
        return True
