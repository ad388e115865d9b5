"""The ring of seven Eras: names, short typeable codes and distances.

Codes are this program's choice (three letters, typeable), not from the document; the order and the ring are.
"""

from __future__ import annotations

ERAS: tuple[str, ...] = (
    "Dawn of Time",
    "Medieval",
    "Renaissance",
    "Industrial",
    "Globalization",
    "Age of Robots",
    "End of Times",
)
CODES: tuple[str, ...] = ("daw", "med", "ren", "ind", "glo", "rob", "end")
COUNT = len(ERAS)


def era_index(code: str) -> int | None:
    """Index of an Era code, a 1-based number, a name or a name's start of 3+ letters ("dawn"), or None."""
    text = code.strip().lower()
    if text in CODES:
        return CODES.index(text)
    if text.isascii() and text.isdigit() and 1 <= int(text) <= COUNT:
        return int(text) - 1
    names = [e.lower() for e in ERAS]
    if text in names:
        return names.index(text)
    starts = [i for i, name in enumerate(names) if len(text) >= 3 and name.startswith(text)]
    return starts[0] if len(starts) == 1 else None


def next_era(era: int) -> int:
    """Clockwise."""
    return (era + 1) % COUNT


def previous_era(era: int) -> int:
    """Counter-clockwise."""
    return (era - 1) % COUNT


def distance(a: int, b: int) -> int:
    """Steps around the ring the short way (End of Times and Dawn of Time are adjacent)."""
    d = abs(a - b) % COUNT
    return min(d, COUNT - d)


def adjacent(era: int) -> tuple[int, int]:
    """(previous, next): the two adjacent Eras."""
    return previous_era(era), next_era(era)


def era_title(era: int) -> str:
    """The name as spoken: "the Renaissance Era", "the Dawn of Time", "the Age of Robots"."""
    name = ERAS[era]
    if name in ("Medieval", "Renaissance", "Industrial", "Globalization"):
        return f"the {name} Era"
    return f"the {name}"
