"""Loot the Loop's decoder: which legal move best explains the still table the camera now sees.

The table convention (the synthetic engine's `vision.synth.ltl_table` films it, a player lays it out the same
way): the deck lies as a cascade, top card nearest the camera's side of the table and fully visible, each deeper
card's top strip (with its corner index) showing beyond it, DECK_SHOWN strips in all, the rest squared under the
last; the notes and the score pile lie apart from it. During setup the three dealt piles lie side by side, left to
right as the camera sees them, each showing PILE_SHOWN strips.

What the camera sees is split by geometry alone: cards whose outlines overlap form a group; the biggest group is
the deck cascade (during setup: the three biggest are the piles), ordered along its long axis, each card's place
counted in strips from the top card. The other cards are "loose": the notes and the top of the score pile.

The decoder keeps a beam of engine states (see `tracker.decoder`). For each new snapshot every state is expanded
by its legal actions (and pairs of them, for a fast player); each result predicts what the camera should see, and
is scored by how well the seen labels, the cards' places and which regions changed agree with it. The deck is a
loop whose order the tracker keeps: a card once seen face up keeps its identity as it travels round, so an
explore is recognised from the new top card even though the cards moved are out of view.

Face-down cards are what nobody knows; their order in the engine state is one arbitrary determinisation. When a
look turns cards up, the cards at those places are set to what the camera reads there (two candidates are both
kept when the reading is split); a card turned up but not read well stays "unread" until a later snapshot reads
it, and while it is unread and on top its rank is forked over what it could be, since the rules depend on it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from games.core import FORMAT_VERSION, GameError
from games.loot_the_loop.engine import (
    ALL_CARDS,
    FACE_UP_PER_PILE,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_SETUP,
    PILE_SIZES,
    RESULT_CORNERED,
    RESULT_STUCK,
    Explore,
    LootTheLoop,
    kind,
    rank,
)
from tracker.decoder import Emitter, Hypothesis, StepRecord, TrackerEvent, posterior, step_text
from tracker.motion import REGION_CHANGED
from tracker.sightings import BACK
from tracker.snapshot import Snapshot, TableObject
from vision.recognise.crops import corner_quads

LABELS: tuple[str, ...] = (*ALL_CARDS, BACK)
UNREAD = "?"
DECK_SHOWN = 6
PILE_SHOWN = 2
LOG_LABELS = math.log(len(LABELS))
# How often a card that is there goes unseen in a snapshot, by what it is and where (measured on rendered games)
MISS_TOP = 0.1
MISS_COVERED = 0.7
MISS_BACK = 0.6
MISS_LOOSE = 0.15
LOG_EXTRA = math.log(0.05)  # a confidently read card where the state has none
LOG_EXTRA_WEAK = math.log(0.3)  # an unread outline or a back where the state has none
LOG_EXTRA_UNDER = math.log(0.5)  # a score-pile card peeking out from under the top one
LOG_DUP = math.log(0.3)  # a second object at one cascade place (a card and its index read apart)
CHANGE_AGREE = math.log(0.85)
CHANGE_DISAGREE = math.log(0.15)
LOG_NULL = math.log(0.3)  # nothing happened although the picture changed (a hand rested, the light changed)
LOG_DOUBLE = math.log(0.05)  # two actions between two still tables
PIN = 0.75  # a reading this sure sets a turned-up card's identity, where the card lies whole (a top card)
PIN_COVERED = 0.97  # where only its strip shows, misreads are common: keep it unread unless the reading is this sure
SPLIT = 0.2  # the second candidate is kept as its own hypothesis when it has at least this share
UNEXPLAINED = 6.0  # nats by which a move the rules forbid must beat every legal one to be flagged
BEAM = 48
MARGIN = 25.0  # nats below the best beyond which a hypothesis is dropped
EXPAND_TWICE = 6  # best single-action results also tried with a second action
ANCHOR_SHARE = 0.5  # the deck's top card outline is at least this share of the biggest outline on the table


# ----------------------------------------------------------------------------------------------- geometry


def _quad_area(quad: np.ndarray) -> float:
    return float(abs(cv2.contourArea(quad.astype(np.float32))))


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection of two convex outlines as a share of the smaller one."""
    area, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    small = min(_quad_area(a), _quad_area(b))
    return float(area) / small if small > 0 else 0.0


def groups(objects: Sequence[TableObject], touch: float = 0.03) -> list[list[TableObject]]:
    """Objects whose outlines overlap, transitively (connected components), biggest first."""
    n = len(objects)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in itertools.combinations(range(n), 2):
        if _overlap(objects[i].quad, objects[j].quad) > touch:
            parent[find(i)] = find(j)
    comps: dict[int, list[TableObject]] = {}
    for i in range(n):
        comps.setdefault(find(i), []).append(objects[i])
    return sorted(comps.values(), key=lambda g: (-len(g), -sum(_quad_area(o.quad) for o in g)))


def cascade_places(group: Sequence[TableObject]) -> dict[int, list[TableObject]]:
    """Each object's place in a cascade, counted in strips from the top card. The axis is the group's long axis
    (all its outline corners), pointing away from the camera's side (up the picture); an object's place is how
    far its far edge lies beyond the top card's, in steps measured from the group itself."""
    if len(group) == 1:
        axis = card_axes(group[0].quad)[0]
    else:
        points = np.concatenate([o.quad for o in group]).astype(np.float64)
        _, _, vt = np.linalg.svd(points - points.mean(axis=0), full_matrices=False)
        axis = vt[0] if vt[0][1] <= 0 else -vt[0]  # point up the picture: away from the player
    far = [float((o.quad @ axis).max()) for o in group]
    length = max(float(np.ptp(o.quad @ axis)) for o in group)
    ordered = sorted(set(round(f, 1) for f in far))
    gaps = [b - a for a, b in itertools.pairwise(ordered) if 0.12 * length <= b - a <= 0.5 * length]
    step = float(np.median(gaps)) if gaps else 0.27 * length
    top = min(far)
    places: dict[int, list[TableObject]] = {}
    for obj, f in zip(group, far, strict=True):
        places.setdefault(max(0, round((f - top) / step)), []).append(obj)
    return places


JUNK = 0.02  # an object whose best label is this unlikely is a duplicate whose own label went to another object
DECK_CANDIDATES = 4  # groups each hypothesis may take as its deck cascade


STEP_SHARE = 24.0 / 88.0  # the cascade step as a share of the card's length (the table convention)


def card_axes(quad: np.ndarray) -> tuple[np.ndarray, float, float]:
    """A card outline's long axis (unit, pointing up the picture: away from the player), length and width."""
    sides = [quad[1] - quad[0], quad[2] - quad[1]]
    lengths = [float(np.hypot(*v)) for v in sides]
    k = int(np.argmax(lengths))
    axis = np.asarray(sides[k], np.float64) / max(lengths[k], 1e-9)
    if axis[1] > 0:
        axis = -axis
    return axis, lengths[k], lengths[1 - k]


def corridor(
    objects: Sequence[TableObject], anchor: np.ndarray
) -> tuple[dict[int, list[TableObject]], list[TableObject]]:
    """The deck's places from the top card's outline: an object lies in the cascade when it is within half a card
    width of the top card's long axis and its far edge is 0-6 steps beyond the top card's; the rest are loose."""
    axis, length, width = card_axes(anchor)
    normal = np.array([-axis[1], axis[0]])
    step = STEP_SHARE * length
    far0 = float((anchor @ axis).max())
    side0 = float(anchor.mean(axis=0) @ normal)
    places: dict[int, list[TableObject]] = {}
    loose = []
    for obj in objects:
        offset = (float((obj.quad @ axis).max()) - far0) / step
        lateral = abs(float(obj.centre @ normal) - side0)
        if lateral <= 0.5 * width and -0.5 <= offset <= DECK_SHOWN + 0.5:
            places.setdefault(min(max(round(offset), 0), DECK_SHOWN - 1), []).append(obj)
        else:
            loose.append(obj)
    return places, loose


@dataclass
class Observation:
    """A snapshot split for Loot the Loop: groups of overlapping cards, each with its cascade places; which group
    is the deck is left to each hypothesis (the one that explains the table best), and the rest are loose. During
    setup the piles are the three biggest groups, left to right."""

    snapshot: Snapshot
    groups: list[tuple[dict[int, list[TableObject]], list[TableObject]]] = field(default_factory=list)
    piles: list[dict[int, list[TableObject]]] = field(default_factory=list)
    pile_loose: list[TableObject] = field(default_factory=list)

    @classmethod
    def of(cls, snapshot: Snapshot, anchor: np.ndarray | None = None) -> Observation:
        """With an anchor (the outline where the deck's top card lies, learned from earlier tables) the deck is
        the corridor of places beyond it; without one, each group of overlapping cards may be the deck."""
        objects = [o for o in snapshot.objects if o.best[1] >= JUNK]
        found = groups(objects)
        obs = cls(snapshot)
        if anchor is not None:
            obs.groups.append(corridor(objects, anchor))
        else:
            for g in found[:DECK_CANDIDATES]:
                obs.groups.append((cascade_places(g), [o for other in found if other is not g for o in other]))
        piles = sorted((g for g in found[:3] if len(g) >= 2), key=lambda g: float(np.mean([o.centre[0] for o in g])))
        obs.piles = [cascade_places(g) for g in piles]
        obs.pile_loose = [o for g in found if not any(g is p for p in piles) for o in g]
        return obs


# ----------------------------------------------------------------------------------------------- views


def core_cards(core: dict[str, Any]) -> Iterator[tuple[str, bool]]:
    for pile, ups in zip(core["piles"], core["piles_up"], strict=True):
        yield from zip(pile, ups, strict=True)
    yield from zip(core["deck"], core["up"], strict=True)
    for card in core["notes"] + core["score"]:
        yield card, True


def hidden_cards(core: dict[str, Any]) -> list[str]:
    return [card for card, up in core_cards(core) if not up]


def label_of(card: str, up: bool, unread: frozenset[str]) -> str:
    if not up:
        return BACK
    return UNREAD + card if card in unread else card  # which unread card: the rules may have pinned its rank


@dataclass(frozen=True)
class View:
    """What a state shows: cascades (the deck's, or each pile's) as labels top first, and the loose cards."""

    cascades: tuple[tuple[str, ...], ...]
    loose: tuple[str, ...]
    under: frozenset[str]
    setup: bool


def view_of(core: dict[str, Any], unread: frozenset[str]) -> View:
    if core["phase"] == PHASE_SETUP:
        cascades = tuple(
            tuple(label_of(c, u, unread) for c, u in zip(p[:PILE_SHOWN], ups[:PILE_SHOWN], strict=True))
            for p, ups in zip(core["piles"], core["piles_up"], strict=True)
        )
        return View(cascades, (), frozenset(), True)
    deck = tuple(
        label_of(c, u, unread) for c, u in zip(core["deck"][:DECK_SHOWN], core["up"][:DECK_SHOWN], strict=True)
    )
    score = core["score"]
    loose = tuple(label_of(c, True, unread) for c in core["notes"]) + (
        (label_of(score[-1], True, unread),) if score else ()
    )
    return View((deck,), loose, frozenset(score[:-1]), False)


# ----------------------------------------------------------------------------------------------- likelihood


@dataclass(frozen=True)
class Pool:
    """What an unread card could be: a face-down card's identity or another unread one's, of the ranks the
    rules have left it (an explore by 7 proves a 7)."""

    cards: tuple[str, ...]
    allowed: dict[str, frozenset[str]]

    @classmethod
    def of_state(cls, core: dict[str, Any], belief: Belief) -> Pool:
        return cls((*hidden_cards(core), *sorted(belief.unread)), dict(belief.allowed))

    def of(self, card: str) -> list[str]:
        ranks = self.allowed.get(card)
        return list(self.cards) if ranks is None else [c for c in self.cards if rank(c) in ranks]


class Scorer:
    """Log-likelihood of one observation under predicted views (`first`: no earlier snapshot to compare with)."""

    def __init__(self, obs: Observation, first: bool) -> None:
        self.obs = obs
        self.first = first  # no earlier snapshot: nothing to say about change

    def evidence(self, obj: TableObject, label: str, pool: Pool) -> float:
        if label.startswith(UNREAD):
            cards = pool.of(label[len(UNREAD) :])
            if not cards:
                return 0.0
            total = sum(math.exp(obj.log_q[c]) for c in cards)
            return math.log(max(total / len(cards), 1e-12)) + LOG_LABELS
        return obj.log_q[label] + LOG_LABELS

    def change(self, obj: TableObject, predicted: bool | None) -> float:
        if self.first or predicted is None:
            return 0.0
        seen = (not obj.carried) and obj.changed >= REGION_CHANGED
        return CHANGE_AGREE if seen == predicted else CHANGE_DISAGREE

    def cascade(
        self,
        labels: Sequence[str],
        before: Sequence[str] | None,
        places: dict[int, list[TableObject]],
        shown: int,
        pool: Pool,
    ) -> float:
        total = 0.0
        for i in range(shown):
            objs = places.get(i, [])
            if i >= len(labels):
                total += sum(self.extra(o, frozenset()) for o in objs)
                continue
            label = labels[i]
            if not objs:
                total += math.log(MISS_BACK if label == BACK else MISS_TOP if i == 0 else MISS_COVERED)
                continue
            predicted = None
            if i == 0 and before is not None and not label.startswith(UNREAD):
                predicted = len(before) == 0 or before[0] != label
            terms = [self.evidence(o, label, pool) + self.change(o, predicted) for o in objs]
            total += max(terms) + (len(objs) - 1) * LOG_DUP
        return total

    def extra(self, obj: TableObject, under: frozenset[str]) -> float:
        label, p = obj.best
        if label in under:
            return LOG_EXTRA_UNDER
        if label == BACK or p < 0.5:
            return LOG_EXTRA_WEAK
        return LOG_EXTRA

    def loose(
        self,
        labels: Sequence[str],
        before: Sequence[str] | None,
        objs: Sequence[TableObject],
        under: frozenset[str],
        pool: Pool,
    ) -> float:
        """Predicted loose cards matched greedily to loose objects by evidence; the rest are misses or extras."""
        pairs = sorted(
            ((self.evidence(o, lab, pool), i, j) for i, lab in enumerate(labels) for j, o in enumerate(objs)),
            reverse=True,
        )
        used_l: set[int] = set()
        used_o: set[int] = set()
        total = 0.0
        for ev, i, j in pairs:
            if i in used_l or j in used_o:
                continue
            used_l.add(i)
            used_o.add(j)
            predicted = None if before is None or labels[i].startswith(UNREAD) else labels[i] not in before
            total += ev + self.change(objs[j], predicted)
        total += (len(labels) - len(used_l)) * math.log(MISS_LOOSE)
        total += sum(self.extra(o, under) for j, o in enumerate(objs) if j not in used_o)
        return total

    def score(self, view: View, before: View | None, pool: Pool) -> float:
        obs = self.obs
        if view.setup:
            total = 0.0
            for p, labels in enumerate(view.cascades):
                places = obs.piles[p] if p < len(obs.piles) else {}
                prior = before.cascades[p] if before is not None and before.setup else None
                total += self.cascade(labels, prior, places, PILE_SHOWN, pool)
            return total + sum(self.extra(o, frozenset()) for o in obs.pile_loose)
        deck_before = before.cascades[0] if before is not None and not before.setup else None
        loose_before = before.loose if before is not None and not before.setup else None
        return max(
            self.cascade(view.cascades[0], deck_before, places, DECK_SHOWN, pool)
            + self.loose(view.loose, loose_before, loose, view.under, pool)
            for places, loose in obs.groups or [({}, [])]
        )


# ----------------------------------------------------------------------------------------------- beliefs


def engine(core: dict[str, Any]) -> LootTheLoop:
    data = {
        "game": LootTheLoop.name,
        "format": FORMAT_VERSION,
        "players": 1,
        "seed": 0,
        "options": {},
        "chance_draws": 0,
        "state": core,
        "history": [],
    }
    return LootTheLoop.from_dict(data)


def swap(core: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    """The state with cards a and b exchanged wherever they lie (faces stay with the places)."""
    if a == b:
        return core

    def sw(cards: list[str]) -> list[str]:
        return [b if c == a else a if c == b else c for c in cards]

    return {
        **core,
        "piles": [sw(p) for p in core["piles"]],
        "deck": sw(core["deck"]),
        "notes": sw(core["notes"]),
        "score": sw(core["score"]),
    }


@dataclass(frozen=True)
class Belief:
    """What a hypothesis knows beyond the engine state: the face-up cards never read for sure, what the camera
    made of each so far (probability per card code, averaged over the tables it was seen on), and for some of
    them the ranks the rules have already pinned down (an explore by 7 proves a 7)."""

    unread: frozenset[str] = frozenset()
    allowed: tuple[tuple[str, frozenset[str]], ...] = ()
    readings: dict[str, dict[str, float]] = field(default_factory=dict)

    def ranks_for(self, card: str) -> frozenset[str] | None:
        return dict(self.allowed).get(card)

    def without(self, card: str) -> Belief:
        readings = {c: r for c, r in self.readings.items() if c != card}
        return Belief(self.unread - {card}, tuple((c, r) for c, r in self.allowed if c != card), readings)

    def renamed(self, a: str, b: str) -> Belief:
        """After swapping cards a and b in the state."""

        def ren(c: str) -> str:
            return b if c == a else a if c == b else c

        return Belief(
            frozenset(ren(c) for c in self.unread),
            tuple((ren(c), r) for c, r in self.allowed),
            {ren(c): r for c, r in self.readings.items()},
        )

    def with_unread(self, cards: frozenset[str]) -> Belief:
        return Belief(self.unread | cards, self.allowed, self.readings)

    def pinned(self, card: str, ranks: frozenset[str]) -> Belief:
        allowed = (*tuple((x, s) for x, s in self.allowed if x != card), (card, ranks))
        return Belief(self.unread | {card}, allowed, self.readings)

    def remember(self, card: str, objs: Sequence[TableObject]) -> Belief:
        """Fold what is seen where an unread card lies into its readings (a running mean over tables)."""
        if not objs:
            return self
        total = {c: sum(math.exp(o.log_q[c]) for o in objs) for c in ALL_CARDS}
        norm = sum(total.values()) or 1.0
        new = {c: v / norm for c, v in total.items()}
        old = self.readings.get(card)
        mixed = new if old is None else {c: (old[c] + new[c]) / 2 for c in ALL_CARDS}
        return Belief(self.unread, self.allowed, {**self.readings, card: mixed})


def _hypothesis_json(h: Hypothesis) -> dict[str, Any]:
    b: Belief = h.info["belief"]
    return {
        "log_p": h.log_p,
        "core": h.core,
        "steps": [list(step) for step in h.steps],
        "unread": sorted(b.unread),
        "allowed": [[card, sorted(ranks)] for card, ranks in b.allowed],
        # what the camera made of each unread card, to 4 places and without the cards it all but ruled out (a
        # journal holds one checkpoint per committed table: the demo's last one 702 KB -> 389 KB)
        "readings": {card: {c: round(v, 4) for c, v in r.items() if v >= 1e-4} for card, r in b.readings.items()},
    }


def _hypothesis_of(data: dict[str, Any]) -> Hypothesis:
    belief = Belief(
        frozenset(data["unread"]),
        tuple((str(card), frozenset(ranks)) for card, ranks in data["allowed"]),
        {str(card): {c: float(r.get(c, 0.0)) for c in ALL_CARDS} for card, r in data["readings"].items()},
    )
    steps = tuple(tuple(str(a) for a in step) for step in data["steps"])
    return Hypothesis(dict(data["core"]), float(data["log_p"]), steps, {"belief": belief})


def resolve(
    core: dict[str, Any], belief: Belief, card: str, objs: Sequence[TableObject], covered: bool = False
) -> list[tuple[dict, Belief, float]]:
    """Set an unread card's identity from the objects seen where it lies: the hidden or unread card the reading
    favours (one hypothesis, or two when the reading is split), or leave it unread when nothing is sure."""
    if not objs:
        return [(core, belief, 0.0)]
    pool = Pool.of_state(core, belief).of(card)
    if card not in pool:
        pool.append(card)
    weights = np.array([sum(math.exp(o.log_q[c]) for o in objs) for c in pool])  # several objects: a mixture
    shares = weights / weights.sum()
    order = np.argsort(-shares)
    best = int(order[0])
    second = int(order[1]) if len(order) > 1 else best

    def pinned(target: str) -> tuple[dict, Belief]:
        new_belief = belief.renamed(card, target).without(target)
        return swap(core, card, target), new_belief

    pin = PIN_COVERED if covered else PIN
    if shares[best] >= pin:
        c, b = pinned(pool[best])
        return [(c, b, 0.0)]
    if shares[best] + shares[second] >= pin and shares[second] >= SPLIT:
        total = shares[best] + shares[second]
        out = []
        for k in (best, second):
            c, b = pinned(pool[k])
            out.append((c, b, math.log(shares[k] / total)))
        return out
    return [(core, belief.remember(card, objs), 0.0)]


Place = tuple[int, int]  # (pile, place) during setup; (-1, place) in the deck


def visible_unread(
    core: dict[str, Any], belief: Belief, obs: Observation
) -> dict[Place, tuple[str, list[TableObject], bool]]:
    """Unread cards in view by place, each with the objects seen there and whether only its strip shows."""
    out: dict[Place, tuple[str, list[TableObject], bool]] = {}
    if core["phase"] == PHASE_SETUP:
        for p, (pile, ups) in enumerate(zip(core["piles"], core["piles_up"], strict=True)):
            places = obs.piles[p] if p < len(obs.piles) else {}
            for i, (c, u) in enumerate(zip(pile[:PILE_SHOWN], ups, strict=False)):
                if u and c in belief.unread:
                    out[(p, i)] = (c, places.get(i, []), i > 0)
        return out
    places = deck_places(core, belief, obs)
    for i, (c, u) in enumerate(zip(core["deck"][:DECK_SHOWN], core["up"][:DECK_SHOWN], strict=True)):
        if u and c in belief.unread:
            out[(-1, i)] = (c, places.get(i, []), i > 0)
    return out


def deck_places(core: dict[str, Any], belief: Belief, obs: Observation) -> dict[int, list[TableObject]]:
    """The group this state takes for its deck: the one whose cascade best fits its labels."""
    if not obs.groups:
        return {}
    view = view_of(core, belief.unread)
    scorer = Scorer(obs, first=True)
    pool = Pool.of_state(core, belief)
    return max(obs.groups, key=lambda g: scorer.cascade(view.cascades[0], None, g[0], DECK_SHOWN, pool))[0]


def read_visible(core: dict[str, Any], belief: Belief, obs: Observation) -> list[tuple[dict, Belief, float]]:
    """Every unread card in view resolved against what is seen at its place (forking where a reading is split).
    Places, not names, are visited: pinning one card swaps names, which can rename a card not yet visited."""
    results = [(core, belief, 0.0)]
    for place in visible_unread(core, belief, obs):
        step = []
        for c, b, w in results:
            seen = visible_unread(c, b, obs).get(place)
            if seen is None:
                step.append((c, b, w))
                continue
            card, objs, covered = seen
            step += [(c2, b2, w + w2) for c2, b2, w2 in resolve(c, b, card, objs, covered)]
        results = step
    return results


def rank_variants(
    core: dict[str, Any], belief: Belief, cards: Sequence[str], group: Callable[[str], str] = rank
) -> list[tuple[dict, Belief, float]]:
    """Unread cards about to decide what the rules allow (the deck's top two, the top pile's during setup, or the
    card an explore lands on) are forked over what they could be, grouped by `group` (rank, or the card's kind
    where only trap, exit, jewel or trinket matters), each group weighted by its share of what the reading where
    the card lies says (with no reading: by how many such cards are still unaccounted for); each variant holds a
    card of that group there, its ranks pinned to the group's (an explore by 7 proves a 7)."""
    results = [(core, belief, 0.0)]
    for card in cards:
        step = []
        for c, b, w in results:
            if card not in b.unread:
                step.append((c, b, w))
                continue
            allowed = b.ranks_for(card)
            pool = [x for x in [*hidden_cards(c), card] if allowed is None or rank(x) in allowed]
            by_group: dict[str, list[str]] = {}
            for x in pool:
                by_group.setdefault(group(x), []).append(x)
            if len(by_group) == 1 and card in pool:  # already settled as far as this grouping goes
                step.append((c, b, w))
                continue
            reading = b.readings.get(card)
            weight = {x: max(reading.get(x, 0.0), 1e-4) if reading else 1.0 for x in pool}
            total = sum(weight.values())
            for members in by_group.values():
                target = max(members, key=weight.__getitem__) if card not in members else card
                share = sum(weight[x] for x in members) / total
                nb = b.renamed(card, target).pinned(target, frozenset(rank(x) for x in members))
                step.append((swap(c, card, target), nb, w + math.log(max(share, 1e-9))))
        results = step
    return results


def landing_variants(core: dict[str, Any], belief: Belief, action: Any) -> list[tuple[dict, Belief, float]]:
    """An explore that lands on a face-up card nobody has read: what happens (a nab, a trap, the exit) depends
    on its kind, so the state is forked over the kinds it could be before the engine carries the move out."""
    if not isinstance(action, Explore) or not core["deck"]:
        return [(core, belief, 0.0)]
    k = action.count % len(core["deck"])
    if not core["up"][k]:
        return [(core, belief, 0.0)]
    return rank_variants(core, belief, [core["deck"][k]], group=kind)


def top_unread(core: dict[str, Any], belief: Belief) -> bool:
    """Whether the deck's top two cards include one not read yet: then its stand-in's rank must not decide
    whether the game is lost."""
    return any(c in belief.unread for c in core["deck"][:2])


def settle(core: dict[str, Any], belief: Belief) -> dict[str, Any]:
    """The state with the loss the rules declare now (stuck or cornered), judged only once the deck's top two
    cards are known (see `_apply`)."""
    if core["phase"] != PHASE_PLAY or top_unread(core, belief):
        return core
    end = engine(core).forced_end()
    return core if end is None else {**core, "phase": PHASE_OVER, "result": end}


def deciding_cards(core: dict[str, Any], action: Any = None) -> list[str]:
    """The face-up cards whose ranks decide the next move: the deck's top two, or the piles' tops during setup
    (the pile stacked on top becomes the deck's top)."""
    if core["phase"] == PHASE_SETUP:
        pile = action.order[0] if action is not None else 0
        return [c for c, u in zip(core["piles"][pile][:2], core["piles_up"][pile][:2], strict=True) if u]
    return [c for c, u in zip(core["deck"][:2], core["up"][:2], strict=True) if u]


# ----------------------------------------------------------------------------------------------- decoder


@dataclass
class Params:
    """Switches for the decoder; the frame-wise baseline is legal_only=False, beam=1, depth=1."""

    beam: int = BEAM
    legal_only: bool = True
    depth: int = 2


def _key(h: Hypothesis) -> tuple:
    core, belief = h.core, h.info["belief"]
    masked = tuple((UNREAD if c in belief.unread else c, u) for c, u in zip(core["deck"], core["up"], strict=True))
    return (
        h.steps,
        core["phase"],
        masked,
        tuple(core["notes"]),
        tuple(core["score"]),
        tuple(map(tuple, core["piles"])),
        tuple(sorted(belief.unread)),
        core["result"],
    )


def merge(children: list[Hypothesis]) -> list[Hypothesis]:
    """Hypotheses that differ only in which face-down or unread card is which are one: their weights add."""
    best: dict[tuple, Hypothesis] = {}
    for h in children:
        k = _key(h)
        if k not in best:
            best[k] = h
            continue
        other = best[k]
        hi, lo = (h, other) if h.log_p > other.log_p else (other, h)
        hi.log_p = hi.log_p + math.log1p(math.exp(lo.log_p - hi.log_p))
        best[k] = hi
    return list(best.values())


def prune(beam: list[Hypothesis], width: int) -> list[Hypothesis]:
    beam = sorted(beam, key=lambda h: -h.log_p)
    top = beam[0].log_p
    return [h for h in beam[:width] if h.log_p >= top - MARGIN]


def setup_core(piles: Sequence[Sequence[str]]) -> dict[str, Any]:
    """A setup state whose piles show the given cards on top (PILE_SHOWN each); the other cards are a
    determinisation of what nobody has seen."""
    shown = [c for p in piles for c in p]
    rest = iter([c for c in ALL_CARDS if c not in shown])
    full = [list(p) + [next(rest) for _ in range(size - len(p))] for p, size in zip(piles, PILE_SIZES, strict=True)]
    ups = [[i < FACE_UP_PER_PILE for i in range(size)] for size in PILE_SIZES]
    return {
        "phase": PHASE_SETUP,
        "piles": full,
        "piles_up": ups,
        "deck": [],
        "up": [],
        "notes": [],
        "score": [],
        "result": "",
        "idle": 0,
    }


def play_core(deck: Sequence[str | None], notes: Sequence[str], score: Sequence[str]) -> dict[str, Any]:
    state = LootTheLoop.from_table(list(deck), list(notes), list(score))
    return state.to_dict()["state"]


class LootTheLoopDecoder:
    """The decoder for Loot the Loop (see the module docstring)."""

    game = "loot-the-loop"

    def __init__(self, params: Params | None = None) -> None:
        self.params = params or Params()
        self.beam: list[Hypothesis] = []
        self.before: list[Hypothesis] = []  # the beam before the last committed step (for corrections)
        self.emitter = Emitter()
        self.pending: Snapshot | None = None  # a snapshot no legal move explains, awaiting a correction
        self.flagged = False
        self.anchor: np.ndarray | None = None  # where the deck's top card lies (learned)

    # ----- start
    def _start(self, snapshot: Snapshot) -> list[TrackerEvent]:
        obs = Observation.of(snapshot)
        if len(obs.piles) >= 2:  # a game starts from three piles side by side (one may be missed)
            placeholder = iter(ALL_CARDS)
            piles = [[next(placeholder) for _ in range(PILE_SHOWN)] for _ in range(3)]
            core = setup_core(piles)
            belief = Belief(frozenset(c for p in piles for c in p))
        else:
            deck: list[str | None] = [None] * (len(ALL_CARDS))
            core = play_core(deck, [], [])
            belief = Belief()
        start = [Hypothesis(c, w, (), {"belief": b}) for c, b, w in read_visible(core, belief, obs)]
        scorer = Scorer(obs, first=True)
        for h in start:
            h.log_p += scorer.score(view_of(h.core, h.info["belief"].unread), None, self._pool(h))
        self.beam = prune(merge(start), self.params.beam)
        phase = "setup: three piles" if core["phase"] == PHASE_SETUP else "a deck already stacked"
        return [TrackerEvent("event", snapshot.t, snapshot.frame, f"Tracking Loot the Loop from {phase}.")]

    @staticmethod
    def _pool(h: Hypothesis) -> Pool:
        return Pool.of_state(h.core, h.info["belief"])

    # ----- expansion
    def _apply(self, h: Hypothesis, action: Any, legal: bool) -> Hypothesis | None:
        state = engine(h.core)
        try:
            if legal:
                state.apply(action)
            else:
                state.force(action)
        except (GameError, ValueError, IndexError):
            return None
        core = state.to_dict()["state"]
        if not legal:
            try:
                engine(core)  # a forced move can leave a table no game reaches (a trap in the notes)
            except GameError:
                return None
        belief: Belief = h.info["belief"]
        turned = [c for c, u in zip(core["deck"], core["up"], strict=True) if u] if core["phase"] != PHASE_SETUP else []
        was_up = {c for c, u in core_cards(h.core) if u}
        newly = frozenset(c for c in turned if c not in was_up)
        belief = belief.with_unread(newly)
        open_end = core["result"] in (RESULT_STUCK, RESULT_CORNERED) and top_unread(core, belief)
        if open_end:  # the engine judged the end by stand-ins for cards not read yet: `settle` judges it once they are
            core = {**core, "phase": PHASE_PLAY, "result": ""}
        return Hypothesis(core, h.log_p, h.steps, {"belief": belief, "open_end": open_end})

    def _children(self, h: Hypothesis, obs: Observation, legal: bool) -> list[tuple[Hypothesis, str]]:
        out = []
        belief: Belief = h.info["belief"]
        if h.core["phase"] == PHASE_SETUP:
            setups = engine(h.core).legal_actions()
            plans = [
                (c, b, w, [a], len(setups))
                for a in setups
                for c, b, w in rank_variants(h.core, belief, deciding_cards(h.core, a))
            ]
        else:
            plans = []
            for c, b, w in rank_variants(h.core, belief, deciding_cards(h.core)):
                try:
                    state = engine(c)
                except GameError:
                    continue
                actions = state.legal_actions() if legal else [a for a in self._grammar(state) if not state.is_legal(a)]
                plans.append((c, b, w, actions, len(actions)))
        for core, b, w, actions, count in plans:
            for action in actions:
                for vcore, vb, vw in landing_variants(core, b, action):
                    base = Hypothesis(vcore, h.log_p + w + vw, h.steps, {"belief": vb})
                    child = self._apply(base, action, legal or core["phase"] == PHASE_SETUP)
                    if child is not None:
                        child.log_p += math.log((1 - math.exp(LOG_NULL)) / max(count, 1))
                        out.append((child, str(action)))
        return out

    @staticmethod
    def _grammar(state: LootTheLoop) -> list[Any]:
        """Every move a player could physically make, legal or not (the frame-wise baseline and the check for
        illegal moves use it)."""
        if state.phase == PHASE_SETUP:
            return state.legal_actions()
        moves: list[Any] = [LootTheLoop.parse_action("look"), LootTheLoop.parse_action("mark")]
        moves += [LootTheLoop.parse_action(f"explore {n}") for n in range(1, 14)]
        moves += [LootTheLoop.parse_action(f"return {c}") for c in state.notes]
        return moves

    def _score_all(
        self, children: list[Hypothesis], parents: dict[int, Hypothesis], obs: Observation
    ) -> list[Hypothesis]:
        scorer = Scorer(obs, first=False)
        out = []
        for child in children:
            parent = parents[id(child)]
            before = view_of(parent.core, parent.info["belief"].unread)
            for core, belief, w in read_visible(child.core, child.info["belief"], obs):
                open_end = bool(child.info.get("open_end"))
                if open_end:
                    core = settle(core, belief)
                    open_end = top_unread(core, belief)  # settled, or still waiting for a reading
                prior = child.log_p + w
                h = Hypothesis(
                    core, prior, child.steps, {**child.info, "belief": belief, "prior": prior, "open_end": open_end}
                )
                h.log_p += scorer.score(view_of(core, belief.unread), before, self._pool(h))
                out.append(h)
        return out

    def _expand(self, obs: Observation, legal: bool) -> list[Hypothesis]:
        children: list[Hypothesis] = []
        parents: dict[int, Hypothesis] = {}
        for h in self.beam:
            info = {"belief": h.info["belief"], "open_end": h.info.get("open_end")}
            null = Hypothesis(h.core, h.log_p + LOG_NULL, (*h.steps, ()), info)
            children.append(null)
            parents[id(null)] = h
            for child, text in self._children(h, obs, legal):
                child.steps = (*h.steps, (text,))
                children.append(child)
                parents[id(child)] = h
        scored = self._score_all(children, parents, obs)
        if self.params.depth >= 2 and legal:
            firsts = sorted((c for c in scored if c.steps[-1]), key=lambda c: -c.log_p)[:EXPAND_TWICE]
            seconds: list[Hypothesis] = []
            second_parents: dict[int, Hypothesis] = {}
            root = {id(c): next(p for p in self.beam if p.steps == c.steps[:-1]) for c in firsts}
            for first in firsts:
                unscored = Hypothesis(first.core, first.info["prior"], first.steps, first.info)
                for child, text in self._children(unscored, obs, legal):
                    child.steps = (*first.steps[:-1], first.steps[-1] + (text,))
                    child.log_p += LOG_DOUBLE
                    seconds.append(child)
                    second_parents[id(child)] = root[id(first)]
            scored += self._score_all(seconds, second_parents, obs)
        return scored

    # ----- the interface
    def update(self, snapshot: Snapshot) -> list[TrackerEvent]:
        if not self.beam:
            return self._start(snapshot)
        obs = Observation.of(snapshot, self.anchor)
        children = merge(self._expand(obs, legal=True))
        events: list[TrackerEvent] = []
        best = max(children, key=lambda h: h.log_p)
        if self.params.legal_only and best.steps[-1]:
            events += self._illegal_check(obs, best, snapshot)
            if self.pending is snapshot:
                return events
        if not self.params.legal_only:
            illegal = self._expand(obs, legal=False)
            children = merge(children + illegal)
        self.before = self.beam
        self.beam = prune(children, self.params.beam)
        self.pending = None
        self.flagged = False
        self.emitter.add_step(snapshot.t, snapshot.frame)
        events += self.emitter.emit(self.beam, snapshot.t, snapshot.frame)
        self._learn_anchor(obs)
        return events

    def regions(self) -> list[tuple[np.ndarray, list[np.ndarray]]]:
        """Where the deck's covered cards lie (the top card's outline moved one step per place) and the two
        corner regions of each one's visible end, for the pipeline to read directly: the finder often misses a
        strip that shows only its index."""
        if self.anchor is None:
            return []
        axis, length, _ = card_axes(self.anchor)
        out = []
        for i in range(1, DECK_SHOWN):
            quad = (self.anchor + axis * STEP_SHARE * length * i).astype(np.float32)
            corners = sorted(corner_quads(quad), key=lambda q: -float(q.mean(axis=0) @ axis))
            strip = quad.copy()
            near = np.argsort(quad @ axis)[:2]  # the near end lies under the cards above: only the far end shows
            strip[near] = quad[near] + axis * (1 - STEP_SHARE) * length
            out.append((strip, corners[:2]))
        return out

    def _learn_anchor(self, obs: Observation) -> None:
        """The most likely state's deck group gives the top card's outline: the biggest object at place 0. Once
        known it only moves a little (a nudged deck), so a misplaced group cannot drag it across the table."""
        best = self.best()
        if best is None or best.core["phase"] != PHASE_PLAY or not obs.groups:
            return
        core, unread = best.core, best.info["belief"].unread
        if not core["up"][0] or core["deck"][0] in unread:
            return  # only a face-up top card read for sure says where the top is
        agree = sum(
            w
            for h, w in zip(self.beam, posterior(self.beam), strict=True)
            if h.core["phase"] == PHASE_PLAY and h.core["deck"][:1] == core["deck"][:1]
        )
        if agree < 0.8:
            return
        places = deck_places(core, best.info["belief"], obs)
        top = [o for o in places.get(0, []) if o.best[0] == core["deck"][0] and o.best[1] >= 0.5]
        if not top:
            return
        quad = max((o.quad for o in top), key=_quad_area)
        biggest = max(_quad_area(o.quad) for o in obs.snapshot.objects)
        if _quad_area(quad) < ANCHOR_SHARE * biggest:  # an index box, not a whole card: no outline to go by
            return
        if self.anchor is None:
            self.anchor = quad
            return
        _, length, _ = card_axes(self.anchor)
        close = float(np.hypot(*(quad.mean(axis=0) - self.anchor.mean(axis=0)))) < 0.3 * length
        if close and 0.7 <= _quad_area(quad) / max(_quad_area(self.anchor), 1.0) <= 1.4:
            self.anchor = quad

    def _illegal_check(self, obs: Observation, best: Hypothesis, snapshot: Snapshot) -> list[TrackerEvent]:
        """A move the rules forbid that explains the table much better than any legal one is flagged, not
        applied: the snapshot waits for a correction (or for a later table that a legal move explains)."""
        top = max(self.beam, key=lambda h: h.log_p)
        saved = self.beam
        self.beam = [top]
        try:
            illegal = self._expand(obs, legal=False)
        finally:
            self.beam = saved
        moves = [h for h in illegal if h.steps[-1]]
        if not moves:
            return []
        forbidden = max(moves, key=lambda h: h.log_p)
        if forbidden.log_p <= best.log_p + UNEXPLAINED:
            return []
        self.pending = snapshot
        if self.flagged:
            return []
        self.flagged = True
        move = forbidden.steps[-1][0]
        reason = engine(top.core).violation(move)
        why = f": {reason.reason}" if reason is not None else ""
        return [
            TrackerEvent(
                "check",
                snapshot.t,
                snapshot.frame,
                f"Please check: the table looks like '{move}', which the rules do not allow{why}.",
                candidates=(move,),
                confidence=0.0,
            )
        ]

    def correct(self, actions: Sequence[str], t: float, frame: int, replace: bool = True) -> list[TrackerEvent]:
        """The player's word for what happened since the last still table (or, if nothing is pending, instead
        of the last committed step; with `replace` False, after it: a move the camera missed): applied to the most
        likely state, checked by the rules."""
        if self.pending is not None or not replace:
            base = candidates = self.beam
        elif not self.before:
            return [TrackerEvent("check", t, frame, "That correction does not fit: no move has been read yet.")]
        else:  # the beam one step back, on the history the player has been told (the best now, less its last step)
            base = self.before
            best = self.best()
            told = best.steps[:-1] if best is not None else ()
            candidates = [h for h in base if h.steps == told] or base
        top = max(candidates, key=lambda h: h.log_p)
        state = engine(top.core)
        try:
            for text in actions:
                state.apply(text)
        except GameError as err:
            return [TrackerEvent("check", t, frame, f"That correction does not fit the rules: {err}")]
        core = state.to_dict()["state"]
        belief: Belief = top.info["belief"]
        was_up = {c for c, u in core_cards(top.core) if u}
        belief = belief.with_unread(frozenset(c for c, u in core_cards(core) if u and c not in was_up))
        step = tuple(actions)
        if self.pending is not None or not replace:
            self.emitter.add_step(t, frame)
        steps = (*top.steps, step)
        self.before = base
        self.beam = [Hypothesis(core, 0.0, steps, {"belief": belief})]
        self.pending = None
        self.flagged = False
        return self.emitter.emit(self.beam, t, frame)

    def answer(self, step: int, actions: Sequence[str], t: float, frame: int) -> list[TrackerEvent]:
        """The player's reply to a "please check" about `step`: only the beliefs that read it so are kept. The
        question named readings the beam held, so nothing is decoded again; a reading the camera has ruled out
        since (or a step never asked about) is refused, and the beam is left as it was."""
        chosen = tuple(actions)
        kept = [h for h in self.beam if step < len(h.steps) and h.steps[step] == chosen]
        if not 0 <= step < len(self.emitter.records) or not kept:
            return [
                TrackerEvent(
                    "check",
                    t,
                    frame,
                    f"That answer does not fit: nothing the camera saw since allows {step_text(chosen)} there. "
                    "Enter the moves since then instead.",
                )
            ]
        self.beam = kept
        self.before = [h for h in self.before if step >= len(h.steps) or h.steps[step] == chosen] or self.before
        self.emitter.records[step].answered = True
        return self.emitter.emit(self.beam, t, frame)

    def finish(self, t: float, frame: int) -> list[TrackerEvent]:
        if not self.beam:
            return []
        return self.emitter.emit(self.beam, t, frame, final=True)

    def best(self) -> Hypothesis | None:
        return max(self.beam, key=lambda h: h.log_p) if self.beam else None

    # ----- journal (a camera session's checkpoints: companion_ui/session.py)
    def checkpoint(self) -> dict[str, Any]:
        """The decoder as JSON: every history it holds (the state, every step, what it believes of the cards it
        never read for sure, how likely), those of a step back (for a correction of the last step), what was said
        of each step, and where the deck lies: what later tables may still revise survives a crash too."""
        return {
            "beam": [_hypothesis_json(h) for h in self.beam],
            "before": [_hypothesis_json(h) for h in self.before],
            "records": [dataclasses.asdict(r) for r in self.emitter.records],
            "anchor": None if self.anchor is None else self.anchor.tolist(),
        }

    @classmethod
    def restore(cls, data: dict[str, Any], params: Params | None = None) -> LootTheLoopDecoder:
        """A decoder carrying on from a `checkpoint`; a checkpoint that does not hold one is a ValueError."""
        decoder = cls(params)
        try:
            decoder.beam = [_hypothesis_of(h) for h in data["beam"]]
            decoder.before = [_hypothesis_of(h) for h in data["before"]]
            decoder.emitter.records = [
                StepRecord(**{**r, "said": None if r["said"] is None else tuple(r["said"])}) for r in data["records"]
            ]
            decoder.anchor = None if data["anchor"] is None else np.asarray(data["anchor"], np.float32).reshape(4, 2)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"not a Loot the Loop tracker checkpoint ({type(err).__name__}: {err})") from err
        return decoder

    def state(self) -> dict[str, Any]:
        """The most likely table now, as the player may know it: the deck top first ('?' unread, None face down),
        notes, score pile, score, and the actions so far."""
        h = self.best()
        if h is None:
            return {}
        core, unread = h.core, h.info["belief"].unread
        shown = [
            None if not u else (UNREAD if c in unread else c) for c, u in zip(core["deck"], core["up"], strict=True)
        ]
        confidence = max(posterior(self.beam))
        return {
            "phase": core["phase"],
            "deck": shown,
            "notes": [UNREAD if c in unread else c for c in core["notes"]],
            "score_pile": [UNREAD if c in unread else c for c in core["score"]],
            "score": len(core["score"]),
            "result": core["result"],
            "actions": [a for step in h.steps for a in step],
            "steps": [list(step) for step in h.steps],
            "step_frames": [r.frame for r in self.emitter.records],
            "unsure_steps": [k for k, r in enumerate(self.emitter.records) if r.said is not None and not r.sure],
            "said_steps": [list(r.said) if r.said is not None else None for r in self.emitter.records],
            "confidence": round(confidence, 4),
        }
