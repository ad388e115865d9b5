"""The LOOP (cooperative; seeds/004, the Board Game Arena rules summary): agents against Dr. Foo.

Players are the AGENTS, 2-4. A solo person plays two agents (as on Board Game Arena's solo mode, where one
player runs several agents): create a 2-player game and enter both agents' moves. The assistant runs Dr. Foo
(`games.the_loop.foo`). Agents, artifacts, missions and scenario numbers are catalogue data
(`games/the_loop/data`, documented in CATALOGUE.md); the shipped starter set is made up.

A turn: Dr. Foo's phase runs by itself and stops at the landing of the rift cubes, which is physical (they roll
out of the 3D machine), so the next action is the observed landing ``rifts P F N`` or ``rifts auto``. Then the
agent acts (move / use / ability / loop / progress), may acquire one artifact, and ends with ``end``
(mission completion, attendance reward picks with ``take``, refresh, maybe a new cycle, then Dr. Foo again).

Action text grammar (Eras: daw med ren ind glo rob end, or 1-7; cards: A01...; clones: PARADOX-ERA + 1-4,
e.g. ren2; `parse_action(str(a)) == a`)::

    rifts P F N                  the observed landing: cubes in the previous Era, Dr. Foo's Era, the next Era
    rifts auto                   nobody watched: simulate the landing (the scenario's probabilities)
    move ERA                     to an adjacent Era: the free move first, then 1 energy from your Era
    use CARD [TARGET] [to ERA]   use a ready artifact (TARGET: an Era, a card, a clone; push/carry: to ERA)
    ability [TARGET] [to ERA]    your agent's special ability, once per turn
    loop spiral|star|stripe      ready your exhausted cards of that dimension (1st LOOP 1 energy, 2nd 2 ...)
    progress green|red           move a cube of that colour from your Era onto the mission there
    acquire CARD                 take an artifact available in your Era onto your draw pile (ends actions)
    end                          finish the turn: complete the mission here if full, refresh, next agent
    take CARD                    attendance reward: the agent whose pick it is takes one revealed artifact

Physical table (`foo.start`, option table="physical"): ``foo`` (Dr. Foo's phase), the landing as above, then
board edits while the agents play off-engine: ``add green ERA N``, ``remove green ERA N``,
``remove red ERA N``, ``clone CLONE to ERA``, ``destroy CLONE``, ``progress green|red at ERA``,
``complete ERA``, and ``end``.

Box contents used here are public facts about the published game, not from the document: 79 artifact cards,
7 Faux cards, 28 clone tokens (4 per Era), 30 red and 30 green cubes, 10 mission tiles, 3 vortex tiles (a
fourth vortex loses, so it never needs a tile), 5 agents, and the machine whose chutes lead into Dr. Foo's Era
and its two neighbours.

Rule interpretations (the summary is silent or ambiguous; none of this is from the document):

* Setup (numbers from the scenario file, made up): the 10 mission tiles are shuffled, one is placed face down
  in each Era and 3 stay out of the game unseen; the machine starts at the scenario's Era and two missions are
  revealed with the normal reveal rule (that Era, then the next clockwise Era with an unrevealed tile); each
  Era gets the scenario's energy and rift cubes; the scenario's number of artifacts is revealed; agents are
  drawn at random from the catalogue and start in their own Era; decks are shuffled and each draws 3.
* Clone tokens: clone ren1-ren4 have the Renaissance as Paradox Era; token k is placed in the Era
  `clone_offsets[k-1]` steps clockwise of its Paradox Era (never the Paradox Era itself). Clones are drawn from
  the bag at random when added, so the bag has no order to hide.
* Turn order: agents in seat order; each turn begins with Dr. Foo's phase (21 turns at most).
* The drop is capped by the rift cubes in the supply; an empty supply drops nothing (no landing to enter).
* Vortex checks run in chute order (previous, Dr. Foo's, next); the game ends at the first defeat. A vortex
  Era still receives rift cubes, and a 4th there is the second vortex in one Era. A revealed artifact whose
  Origin Era is a vortex is destroyed at once.
* Missions: every slot needs a green (energy) or red (rift) cube; ``progress`` moves such a cube from the
  agent's Era onto the mission (so progress on red slots also clears rifts). A full mission in the agent's Era
  is completed at ``end`` (completing is never worse, so it is not optional here); its cubes return to the
  supply; a new mission is revealed. The fourth completed mission wins at once (no reward is handed out).
* Attendance reward: players + 1 artifacts are revealed; the agents pick one each, starting with the active
  agent, onto the top of their draw pile (like an acquired artifact); the rest are destroyed.
* Phases are kept in order: after ``acquire`` (phase III) no more actions, only ``end``. The free move is used
  by the first move of a turn; later moves cost 1 energy from the Era you leave. A LOOP needs at least one
  exhausted card of its dimension in hand. Each agent's ability is usable once per turn.
* Empty draw pile: the discard pile is shuffled into a new draw pile. The Huge Deck, when empty, is rebuilt
  from the destroyed pile (rules summary).
* Information: a cooperative game has no secrets between agents, so hands are open to everyone; the order of
  the Huge Deck, of the Faux deck and of each draw pile, and face-down mission tiles, are hidden from all
  (views show counts; contents without order where the table could know them).
* Scores: every agent scores the number of completed missions; all agents win together or nobody does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from games.core import (
    JSON,
    Action,
    BadAction,
    BadState,
    Event,
    GameError,
    GameOver,
    GameState,
    Violation,
    require,
    seat_name,
)
from games.the_loop import effects, foo
from games.the_loop import events as ev
from games.the_loop.catalogue import (
    DIFFICULTIES,
    ELEMENTARY,
    Artifact,
    Catalogue,
    CatalogueError,
    Effect,
    Scenario,
    load_catalogue,
    load_scenario,
)
from games.the_loop.eras import CODES, COUNT, adjacent, era_index, era_title

GREEN_CUBES = 30  # public fact (box contents)
RED_CUBES = 30  # public fact (box contents)
CLONES_PER_ERA = 4  # rules summary: a bag of 28 clones, four from each Era
HAND_SIZE = 3  # rules summary
MISSIONS_TO_WIN = 4  # rules summary
LAST_CYCLE = 3  # rules summary
ALL_CLONES = tuple(f"{code}{k}" for code in CODES for k in range(1, CLONES_PER_ERA + 1))
FAUX = tuple(f"F-{code}" for code in CODES)  # card codes for card_zones only
PHASES = ("foo", "landing", "actions", "acquired", "reward", "agents", "over")
TABLES = ("digital", "physical")

GRAMMAR = (
    "expected one of: 'rifts P F N', 'rifts auto', 'move ERA', 'use CARD [TARGET] [to ERA]', "
    "'ability [TARGET] [to ERA]', 'loop spiral|star|stripe', 'progress green|red [at ERA]', 'acquire CARD', "
    "'take CARD', 'end', 'foo', 'add green ERA N', 'remove green|red ERA N', 'clone CLONE to ERA', "
    "'destroy CLONE', 'complete ERA' (Eras: daw med ren ind glo rob end or 1-7; cards like A07; clones like ren2)"
)
_CARD_RE = re.compile(r"a(\d{1,3})")
_CLONE_RE = re.compile(rf"({'|'.join(CODES)})([1-{CLONES_PER_ERA}])")


# ----- actions -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rifts(Action):
    """The observed landing (previous, Foo's, next), or `counts` None for a simulated one."""

    counts: tuple[int, int, int] | None

    def __str__(self) -> str:
        return "rifts auto" if self.counts is None else "rifts " + " ".join(map(str, self.counts))


@dataclass(frozen=True)
class Move(Action):
    era: str

    def __str__(self) -> str:
        return f"move {self.era}"


@dataclass(frozen=True)
class Use(Action):
    """`card` None: the agent's special ability."""

    card: str | None
    target: str | None = None
    dest: str | None = None

    def __str__(self) -> str:
        words = ["ability" if self.card is None else f"use {self.card}"]
        words += [self.target] if self.target else []
        words += [f"to {self.dest}"] if self.dest else []
        return " ".join(words)


@dataclass(frozen=True)
class Loop(Action):
    dimension: str

    def __str__(self) -> str:
        return f"loop {self.dimension}"


@dataclass(frozen=True)
class Progress(Action):
    colour: str
    era: str | None = None  # physical table: which Era's mission

    def __str__(self) -> str:
        return f"progress {self.colour}" + (f" at {self.era}" if self.era else "")


@dataclass(frozen=True)
class Acquire(Action):
    card: str

    def __str__(self) -> str:
        return f"acquire {self.card}"


@dataclass(frozen=True)
class Take(Action):
    card: str

    def __str__(self) -> str:
        return f"take {self.card}"


@dataclass(frozen=True)
class End(Action):
    def __str__(self) -> str:
        return "end"


@dataclass(frozen=True)
class FooTurn(Action):
    def __str__(self) -> str:
        return "foo"


@dataclass(frozen=True)
class Cubes(Action):
    """Physical-table edit: `change` > 0 adds, < 0 removes."""

    colour: str
    era: str
    change: int

    def __str__(self) -> str:
        verb = "add" if self.change > 0 else "remove"
        return f"{verb} {self.colour} {self.era} {abs(self.change)}"


@dataclass(frozen=True)
class CloneTo(Action):
    clone: str
    era: str

    def __str__(self) -> str:
        return f"clone {self.clone} to {self.era}"


@dataclass(frozen=True)
class DestroyClone(Action):
    clone: str

    def __str__(self) -> str:
        return f"destroy {self.clone}"


@dataclass(frozen=True)
class Complete(Action):
    era: str

    def __str__(self) -> str:
        return f"complete {self.era}"


PHYSICAL_EDITS = (Cubes, CloneTo, DestroyClone, Complete)


# ----- the game ------------------------------------------------------------------------------------------------
class TheLoop(GameState):
    name: ClassVar[str] = "the-loop"

    def __init__(
        self,
        players: int,
        seed: int,
        scenario: str = "basic",
        difficulty: str = "normal",
        catalogue: str | None = None,
        table: str = "digital",
    ) -> None:
        options: JSON = {"scenario": scenario, "difficulty": difficulty, "table": table}
        if catalogue is not None:
            options["catalogue"] = catalogue
        super().__init__(players, seed, options)
        self._configure()
        self._setup()

    # ----- configuration -------------------------------------------------------------------------------------
    def _configure(self) -> None:
        """Options -> loaded scenario and catalogue; bad options are a GameError (BadState when loading)."""
        opts = self.options
        for key in ("scenario", "difficulty", "table"):
            if not isinstance(opts.get(key), str):
                raise GameError(f"the-loop: option {key} must be text, got {opts.get(key)!r}")
        if opts["difficulty"] not in DIFFICULTIES:
            known = ", ".join(DIFFICULTIES)
            raise GameError(f"the-loop: difficulty must be one of {known}, got {opts['difficulty']!r}")
        if opts["table"] not in TABLES:
            raise GameError(f"the-loop: table must be one of {', '.join(TABLES)}, got {opts['table']!r}")
        if "catalogue" in opts and not isinstance(opts["catalogue"], str):
            raise GameError(f"the-loop: option catalogue must be a path, got {opts['catalogue']!r}")
        if not isinstance(self.num_players, int) or not 2 <= self.num_players <= 4:
            raise GameError(f"the-loop: 2-4 agents, got {self.num_players}")
        self.scenario: Scenario = load_scenario(opts["scenario"])
        self.catalogue: Catalogue = load_catalogue(opts.get("catalogue"))
        if len(self.catalogue.agents) < self.num_players:
            raise CatalogueError(f"the catalogue has {len(self.catalogue.agents)} agents, {self.num_players} needed")
        self.difficulty: str = opts["difficulty"]
        self.physical: bool = opts["table"] == "physical"

    def _setup(self) -> None:
        cat, scen = self.catalogue, self.scenario
        self.energy = [scen.energy_per_era] * COUNT
        self.rifts = [scen.rifts_per_era] * COUNT
        self.vortex = [False] * COUNT
        self.clones: list[list[str]] = [[] for _ in range(COUNT)]
        self.bag = list(ALL_CLONES)
        self.available: list[list[str]] = [[] for _ in range(COUNT)]
        tiles = list(cat.missions)
        self.chance().shuffle(tiles)
        self.tiles: list[str | None] = list(tiles[:COUNT])
        self.set_aside = sorted(tiles[COUNT:])
        self.revealed = [False] * COUNT
        self.progress: list[list[str]] = [[] for _ in range(COUNT)]
        self.completed: list[str] = []
        self.failed: list[str] = []
        self.foo_era = scen.foo_era
        self.cycle = 1
        self.faux = list(range(COUNT))
        self.chance().shuffle(self.faux)
        self.visited: list[int] = []
        self.huge: list[str] = [] if self.physical else list(cat.huge_deck)
        self.chance().shuffle(self.huge)
        self.destroyed: list[str] = []
        self.reward: list[str] = []
        self.picked = 0
        self.active = 0
        self.phase = "foo"
        self.drop = 0
        self.turn = {"free_move": False, "loops": 0, "ability": False}
        self.over = False
        self.won = False
        self.reason = ""
        picks = [a.code for a in cat.agents]
        self.chance().shuffle(picks)
        self.agents: list[dict[str, Any]] = [self._new_agent(code) for code in picks[: self.num_players]]
        chosen = set(picks[: self.num_players])
        self.out_of_game = sorted(c for a in cat.agents if a.code not in chosen for c in a.artifacts)
        for _ in range(2):
            foo.reveal_mission(self)
        self.reveal_artifacts(scen.setup_artifacts)
        if not self.physical:
            for p in range(self.num_players):
                self.draw_cards(p, HAND_SIZE)
            foo.foo_phase(self)

    def _new_agent(self, code: str) -> dict[str, Any]:
        agent = self.catalogue.agent(code)
        deck = [] if self.physical else list(agent.artifacts)
        self.chance().shuffle(deck)
        return {"code": code, "era": agent.start_era, "draw": deck, "hand": [], "exhausted": [], "discard": []}

    # ----- protocol: whose turn, legal actions ----------------------------------------------------------------
    @property
    def current_player(self) -> int | None:
        if self.over:
            return None
        if self.phase == "reward":
            return (self.active + self.picked) % self.num_players
        return self.active

    @property
    def is_over(self) -> bool:
        return self.over

    def legal_actions(self, player: int | None = None) -> list[Action]:
        if self.over or (player is not None and player != self.current_player):
            return []
        return [a for a in self._candidates() if self._violation(a) is None]

    def _candidates(self) -> list[Action]:
        """Every action worth checking in this phase, in a stable order (filtered by `_violation`)."""
        phase = self.phase
        if phase == "foo":
            return [FooTurn()]
        if phase == "landing":
            n = self.drop
            return [Rifts(None)] + [Rifts((a, b, n - a - b)) for a in range(n + 1) for b in range(n - a + 1)]
        if phase == "reward":
            return [Take(c) for c in self.reward]
        if phase == "agents":
            return self._edit_candidates()
        if phase == "acquired":
            return [End()]
        agent = self.agents[self.active]
        here = agent["era"]
        acts: list[Action] = [Move(CODES[e]) for e in adjacent(here)]
        for card in agent["hand"]:
            effect = self.artifact(card).effect
            acts += [Use(card, t, d) for t, d in effects.candidates(self, effect)]
        acts += [Use(None, t, d) for t, d in effects.candidates(self, self._ability())]
        acts += [Loop(d) for d in ELEMENTARY]
        acts += [Progress(c) for c in ("green", "red")]
        acts += [Acquire(c) for c in sorted(self.available[here])]
        return [*acts, End()]

    def _edit_candidates(self) -> list[Action]:
        acts: list[Action] = []
        for code in CODES:
            acts += [Cubes("green", code, 1), Cubes("green", code, -1), Cubes("red", code, -1)]
            acts += [Progress(c, code) for c in ("green", "red")] + [Complete(code)]
        for clone in self._board_clones():
            acts += [CloneTo(clone, code) for code in CODES] + [DestroyClone(clone)]
        return [*acts, End()]

    def _board_clones(self) -> list[str]:
        return [c for era in range(COUNT) for c in sorted(self.clones[era])]

    # ----- protocol: violations -------------------------------------------------------------------------------
    def _violation(self, action: Action) -> Violation | None:
        checks = {
            FooTurn: self._check_foo,
            Rifts: self._check_rifts,
            Take: self._check_take,
            Move: self._check_move,
            Use: self._check_use,
            Loop: self._check_loop,
            Progress: self._check_progress,
            Acquire: self._check_acquire,
            End: self._check_end,
            Cubes: self._check_cubes,
            CloneTo: self._check_clone_to,
            DestroyClone: self._check_clone_to,
            Complete: self._check_complete,
        }
        check = checks.get(type(action))
        if check is None:
            return Violation("action", f"'{action}' is not an action of The LOOP")
        return check(action)

    def _phase_problem(self, rule: str, *phases: str) -> Violation | None:
        """Actions belong to phases; say what the table is waiting for instead."""
        if self.phase in phases:
            return None
        waiting = {
            "foo": "Dr. Foo's turn ('foo')",
            "landing": f"the landing of {self.drop} rift cubes ('rifts P F N' or 'rifts auto')",
            "actions": f"{seat_name(self.active)}'s actions",
            "acquired": f"{seat_name(self.active)} to end the turn (after acquiring, the action phase is over)",
            "reward": f"{seat_name(self.current_player or 0)} to take an attendance reward artifact",
            "agents": "the agents' board changes or 'end' (physical table)",
        }[self.phase]
        return Violation(rule, f"not now: the table is waiting for {waiting}")

    def _check_foo(self, action: Action) -> Violation | None:
        return self._phase_problem("Foo phase", "foo")

    def _check_rifts(self, action: Rifts) -> Violation | None:
        problem = self._phase_problem("rift landing", "landing")
        if problem or action.counts is None:
            return problem
        if min(action.counts) < 0:
            return Violation("rift landing", "landed rift cube counts cannot be negative")
        if sum(action.counts) != self.drop:
            return Violation(
                "rift landing",
                f"the landed rift cubes must sum to the {self.drop} dropped, got {sum(action.counts)}",
            )
        return None

    def _check_take(self, action: Take) -> Violation | None:
        problem = self._phase_problem("attendance reward", "reward")
        if problem is None and action.card not in self.reward:
            return Violation("attendance reward", f"{action.card} is not among the revealed reward artifacts")
        return problem

    def _check_move(self, action: Move) -> Violation | None:
        problem = self._phase_problem("move", "actions")
        if problem:
            return problem
        here = self.agents[self.active]["era"]
        if CODES.index(action.era) not in adjacent(here):
            return Violation("move", f"you can only move to an Era adjacent to {era_title(here)}")
        if self.turn["free_move"] and self.energy[here] < 1:
            return Violation(
                "move",
                f"you have used your free move, and a move costs 1 energy from your Era: {era_title(here)} has none",
            )
        return None

    def _check_use(self, action: Use) -> Violation | None:
        rule = "ability" if action.card is None else "use an artifact"
        problem = self._phase_problem(rule, "actions")
        if problem:
            return problem
        agent = self.agents[self.active]
        if action.card is None:
            if self.turn["ability"]:
                return Violation(rule, "your agent's special ability is usable once per turn")
        elif action.card not in agent["hand"]:
            return Violation(rule, f"{action.card} is not in your hand")
        elif action.card in agent["exhausted"]:
            return Violation(rule, f"{action.card} is exhausted; a LOOP in its dimension readies it")
        effect = self._effect_of(action.card)
        reason = effects.problem(self, effect, action.target, action.dest, action.card)
        return Violation(rule, reason) if reason else None

    def _check_loop(self, action: Loop) -> Violation | None:
        problem = self._phase_problem("LOOP", "actions")
        if problem:
            return problem
        if action.dimension not in ELEMENTARY:
            return Violation("LOOP", "Black Hole cards can never be readied: LOOPs are for spiral, star or stripe")
        cost = self.turn["loops"] + 1
        energy = self.energy[self.agents[self.active]["era"]]
        if not self._exhausted_of(action.dimension):
            return Violation("LOOP", f"you have no exhausted {action.dimension} card in hand to ready")
        if energy < cost:
            return Violation("LOOP", f"LOOP number {cost} this turn costs {cost} energy from your Era; it has {energy}")
        return None

    def _check_progress(self, action: Progress) -> Violation | None:
        rule = "mission progress"
        if action.era is None:
            problem = self._phase_problem(rule, "actions")
            era = self.agents[self.active]["era"]
        else:
            problem = self._phase_problem(rule, "agents")
            era = CODES.index(action.era)
        if problem:
            return problem
        tile = self.tiles[era]
        if not tile or not self.revealed[era]:
            return Violation(rule, f"there is no revealed mission in {era_title(era)}")
        needed = self.catalogue.missions[tile].slots.count(action.colour)
        if self.progress[era].count(action.colour) >= needed:
            return Violation(rule, f"the mission in {era_title(era)} has no empty {action.colour} slot")
        cubes = self.energy[era] if action.colour == "green" else self.rifts[era]
        if cubes < 1:
            return Violation(rule, f"there is no {action.colour} cube in {era_title(era)} to place")
        return None

    def _check_acquire(self, action: Acquire) -> Violation | None:
        problem = self._phase_problem("acquire", "actions")
        if problem:
            return problem
        here = self.agents[self.active]["era"]
        if action.card not in self.available[here]:
            return Violation("acquire", f"{action.card} is not an artifact available in {era_title(here)}")
        return None

    def _check_end(self, action: End) -> Violation | None:
        return self._phase_problem("refresh", "actions", "acquired", "agents")

    def _check_cubes(self, action: Cubes) -> Violation | None:
        problem = self._phase_problem("board change", "agents")
        if problem:
            return problem
        era = CODES.index(action.era)
        if action.change == 0:
            return Violation("board change", "a change of 0 cubes changes nothing")
        if action.colour == "red" and action.change > 0:
            return Violation("board change", "rift cubes only come from Dr. Foo's machine (enter them with 'rifts')")
        if action.change > 0 and self.supply("green") < action.change:
            return Violation("board change", f"the supply has only {self.supply('green')} energy cubes")
        there = self.energy[era] if action.colour == "green" else self.rifts[era]
        if action.change < 0 and there < -action.change:
            return Violation("board change", f"{era_title(era)} has only {there} {action.colour} cubes")
        return None

    def _check_clone_to(self, action: CloneTo | DestroyClone) -> Violation | None:
        problem = self._phase_problem("board change", "agents")
        if problem:
            return problem
        era = self.clone_era(action.clone)
        if era is None:
            return Violation("board change", f"there is no clone {action.clone} on the board")
        if isinstance(action, CloneTo) and CODES[era] == action.era:
            return Violation("board change", f"clone {action.clone} is already in {era_title(era)}")
        return None

    def _check_complete(self, action: Complete) -> Violation | None:
        problem = self._phase_problem("complete a mission", "agents")
        if problem:
            return problem
        era = CODES.index(action.era)
        if not self.tiles[era] or not self.revealed[era]:
            return Violation("complete a mission", f"there is no revealed mission in {era_title(era)}")
        if not self._mission_full(era):
            return Violation("complete a mission", f"the mission in {era_title(era)} still has empty progress slots")
        return None

    # ----- protocol: doing -----------------------------------------------------------------------------------
    def _do(self, action: Action) -> list[Event]:
        if isinstance(action, FooTurn):
            return foo.foo_phase(self)
        if isinstance(action, Rifts):
            if action.counts is None:
                counts = foo.simulate_landing(self.chance(), self.drop, self.scenario.landing)
                return foo.resolve_landing(self, counts, simulated=True)
            return foo.resolve_landing(self, action.counts, simulated=False)
        if isinstance(action, Take):
            return self._do_take(action)
        if isinstance(action, Move):
            return self._do_move(action)
        if isinstance(action, Use):
            return self._do_use(action)
        if isinstance(action, Loop):
            return self._do_loop(action)
        if isinstance(action, Progress):
            return self._do_progress(action)
        if isinstance(action, Acquire):
            self.phase = "acquired"
            return self.acquire(action.card)
        if isinstance(action, End):
            return self._do_end()
        return self._do_edit(action)

    def _do_move(self, action: Move) -> list[Event]:
        agent = self.agents[self.active]
        source = agent["era"]
        cost = 1 if self.turn["free_move"] else 0
        self.energy[source] -= cost
        self.turn["free_move"] = True
        agent["era"] = CODES.index(action.era)
        return [ev.AgentMoved(self.active, CODES[source], action.era, cost)]

    def _do_use(self, action: Use) -> list[Event]:
        agent = self.agents[self.active]
        if action.card is None:
            self.turn["ability"] = True
            used = ev.ArtifactUsed(self.active, "", "")
        else:
            agent["exhausted"].append(action.card)
            used = ev.ArtifactUsed(self.active, action.card, self.artifact(action.card).name)
        effect = self._effect_of(action.card)
        return [used, *effects.resolve(self, effect, action.target, action.dest, action.card)]

    def _do_loop(self, action: Loop) -> list[Event]:
        agent = self.agents[self.active]
        cost = self.turn["loops"] + 1
        self.turn["loops"] = cost
        self.energy[agent["era"]] -= cost
        readied = tuple(self._exhausted_of(action.dimension))
        agent["exhausted"] = [c for c in agent["exhausted"] if c not in readied]
        return [ev.Looped(self.active, action.dimension, cost, readied)]

    def _do_progress(self, action: Progress) -> list[Event]:
        era = self.agents[self.active]["era"] if action.era is None else CODES.index(action.era)
        if action.colour == "green":
            self.energy[era] -= 1
        else:
            self.rifts[era] -= 1
        self.progress[era].append(action.colour)
        slots = len(self.catalogue.missions[self.tiles[era] or ""].slots)
        return [ev.MissionProgress(CODES[era], action.colour, len(self.progress[era]), slots)]

    def _do_end(self) -> list[Event]:
        events: list[Event] = []
        here = self.agents[self.active]["era"]
        if not self.physical and self.tiles[here] and self.revealed[here] and self._mission_full(here):
            events += self._complete(here)
            if self.over or self.phase == "reward":
                return events
        return events + self._refresh()

    def _do_take(self, action: Take) -> list[Event]:
        player = self.current_player or 0
        self.reward.remove(action.card)
        self.agents[player]["draw"].insert(0, action.card)
        self.picked += 1
        events: list[Event] = [ev.RewardTaken(player, action.card, self.artifact(action.card).name)]
        if self.reward and self.picked < self.num_players:
            return events
        if self.reward:
            events.append(ev.RewardDestroyed(tuple(self.reward)))
            self.destroyed += self.reward
            self.reward = []
        self.picked = 0
        return events + self._refresh()

    def _do_edit(self, action: Action) -> list[Event]:
        if isinstance(action, Cubes):
            era = CODES.index(action.era)
            counts = self.energy if action.colour == "green" else self.rifts
            counts[era] += action.change
            return [ev.CubesChanged(action.era, action.colour, action.change)]
        if isinstance(action, CloneTo):
            return self.move_clone(action.clone, CODES.index(action.era))
        if isinstance(action, DestroyClone):
            return [self.destroy_clone(action.clone, paradox=False)]
        assert isinstance(action, Complete)
        return self._complete(CODES.index(action.era))

    def _complete(self, era: int) -> list[Event]:
        """Phase IV: cubes back to the supply, the tile to the completed pile, a win or a new mission + reward."""
        tile = self.tiles[era] or ""
        self.completed.append(tile)
        self.tiles[era], self.revealed[era], self.progress[era] = None, False, []
        events: list[Event] = [
            ev.MissionCompleted(tile, self.catalogue.missions[tile].name, CODES[era], len(self.completed))
        ]
        if len(self.completed) >= MISSIONS_TO_WIN:
            return [*events, self.finish(True, "Four missions are complete: Dr. Foo's machine is destroyed")]
        events += foo.reveal_mission(self)
        count = self.num_players + 1
        if self.physical:
            return [*events, ev.RevealInstruction(count, "reward")]
        revealed = self._take_from_huge(count)
        events += revealed[1]
        self.reward = revealed[0]
        if self.reward:
            self.phase = "reward"
            self.picked = 0
            events.append(ev.RewardRevealed(tuple(self.reward)))
        return events

    def _refresh(self) -> list[Event]:
        """Phase V, then the next agent's turn (Dr. Foo's phase first)."""
        agent = self.agents[self.active]
        events: list[Event] = [ev.TurnEnded(self.active)]
        agent["discard"] += agent["hand"]
        agent["hand"], agent["exhausted"] = [], []
        self.turn = {"free_move": False, "loops": 0, "ability": False}
        if not self.physical:
            for p in range(self.num_players):
                self.draw_cards(p, HAND_SIZE - len(self.agents[p]["hand"]))
        if not self.faux:
            if self.cycle >= LAST_CYCLE:
                return [*events, self.finish(False, "Dr. Foo completed his third cycle")]
            self.cycle += 1
            self.faux = list(range(COUNT))
            self.chance().shuffle(self.faux)
            self.visited = []
            events.append(ev.CycleStarted(self.cycle))
        self.active = (self.active + 1) % self.num_players
        self.phase = "foo"
        if self.physical:
            return events
        return events + foo.foo_phase(self)

    # ----- shared board operations (used by foo and effects) ------------------------------------------------
    def supply(self, colour: str) -> int:
        """Cubes in the supply: everything not on the board or on a mission (so cubes are always conserved)."""
        if colour == "green":
            return GREEN_CUBES - sum(self.energy) - sum(p.count("green") for p in self.progress)
        return RED_CUBES - sum(self.rifts) - sum(p.count("red") for p in self.progress)

    def clone_era(self, clone: str) -> int | None:
        return next((e for e in range(COUNT) if clone in self.clones[e]), None)

    def clone_home(self, clone: str) -> int:
        """The designated Era a new clone is placed in (made-up offsets from its Paradox Era, see docstring)."""
        return (CODES.index(clone[:3]) + self.scenario.clone_offsets[int(clone[3]) - 1]) % COUNT

    def add_clone(self) -> Event:
        if not self.bag:
            return ev.NoCloneLeft()
        clone = self.bag.pop(self.chance().randrange(len(self.bag)))
        era = self.clone_home(clone)
        self.clones[era].append(clone)
        return ev.CloneAdded(clone, CODES[era])

    def move_clone(self, clone: str, era: int) -> list[Event]:
        """A clone entering its Paradox Era is destroyed at once and goes back to the bag."""
        source = self.clone_era(clone)
        assert source is not None
        self.clones[source].remove(clone)
        self.clones[era].append(clone)
        moved = ev.CloneMoved(clone, CODES[source], CODES[era])
        if CODES[era] == clone[:3]:
            return [moved, self.destroy_clone(clone, paradox=True)]
        return [moved]

    def destroy_clone(self, clone: str, paradox: bool) -> Event:
        era = self.clone_era(clone)
        assert era is not None
        self.clones[era].remove(clone)
        self.bag = sorted([*self.bag, clone], key=ALL_CLONES.index)
        return ev.CloneDestroyed(clone, CODES[era], paradox)

    def artifact(self, code: str) -> Artifact:
        return self.catalogue.artifacts[code]

    def agent_name(self, player: int) -> str:
        return self.catalogue.agent(self.agents[player]["code"]).name

    def _take_from_huge(self, count: int) -> tuple[list[str], list[Event]]:
        """Up to `count` cards off the Huge Deck, rebuilding it from the destroyed pile when it runs out."""
        cards: list[str] = []
        events: list[Event] = []
        for _ in range(count):
            if not self.huge and self.destroyed:
                self.huge, self.destroyed = self.destroyed, []
                self.chance().shuffle(self.huge)
                events.append(ev.HugeDeckReshuffled(len(self.huge)))
            if not self.huge:
                break
            cards.append(self.huge.pop(0))
        return cards, events

    def reveal_artifacts(self, count: int) -> list[Event]:
        """Into their Origin Eras; a vortex Era takes no artifact, so it is destroyed at once."""
        if count <= 0:
            return []
        if self.physical:
            return [ev.RevealInstruction(count, "origin")]
        cards, events = self._take_from_huge(count)
        for card in cards:
            art = self.artifact(card)
            if self.vortex[art.era]:
                self.destroyed.append(card)
            else:
                self.available[art.era].append(card)
            events.append(ev.ArtifactRevealed(card, art.name, CODES[art.era], self.vortex[art.era]))
        return events

    def artifacts_destroyed_in(self, era: int) -> int:
        lost = self.available[era]
        self.destroyed += lost
        self.available[era] = []
        return len(lost)

    def acquire(self, card: str) -> list[Event]:
        era = next(e for e in range(COUNT) if card in self.available[e])
        self.available[era].remove(card)
        self.agents[self.active]["draw"].insert(0, card)
        return [ev.CardMoved(self.active, card, self.artifact(card).name, "goes on top of the draw pile")]

    def can_draw(self, player: int) -> bool:
        agent = self.agents[player]
        return bool(agent["draw"] or agent["discard"])

    def draw_cards(self, player: int, count: int) -> int:
        """Draw up to `count`; an empty draw pile is rebuilt from the shuffled discard pile."""
        agent = self.agents[player]
        drawn = 0
        for _ in range(count):
            if not agent["draw"] and agent["discard"]:
                agent["draw"], agent["discard"] = agent["discard"], []
                self.chance().shuffle(agent["draw"])
            if not agent["draw"]:
                break
            agent["hand"].append(agent["draw"].pop(0))
            drawn += 1
        return drawn

    def leave_hand(self, player: int, card: str) -> None:
        agent = self.agents[player]
        agent["hand"].remove(card)
        if card in agent["exhausted"]:
            agent["exhausted"].remove(card)

    def finish(self, won: bool, reason: str) -> GameOver:
        self.over, self.won, self.reason = True, won, reason
        self.phase = "over"
        self.drop = 0
        winners = tuple(range(self.num_players)) if won else ()
        return GameOver(winners, tuple(self.scores()), reason)

    def _mission_full(self, era: int) -> bool:
        return len(self.progress[era]) == len(self.catalogue.missions[self.tiles[era] or ""].slots)

    def _ability(self) -> Effect:
        return self.catalogue.agent(self.agents[self.active]["code"]).ability

    def _effect_of(self, card: str | None) -> Effect:
        return self._ability() if card is None else self.artifact(card).effect

    def _exhausted_of(self, dimension: str) -> list[str]:
        agent = self.agents[self.active]
        return [c for c in agent["hand"] if c in agent["exhausted"] and self.artifact(c).dimension == dimension]

    # ----- scores and results ----------------------------------------------------------------------------------
    def scores(self) -> list[int]:
        return [len(self.completed)] * self.num_players

    def winners(self) -> list[int]:
        return list(range(self.num_players)) if self.over and self.won else []

    # ----- data --------------------------------------------------------------------------------------------------
    def _core(self) -> JSON:
        return {
            "energy": list(self.energy),
            "rifts": list(self.rifts),
            "vortex": list(self.vortex),
            "clones": [list(c) for c in self.clones],
            "bag": list(self.bag),
            "available": [list(a) for a in self.available],
            "tiles": list(self.tiles),
            "set_aside": list(self.set_aside),
            "revealed": list(self.revealed),
            "progress": [list(p) for p in self.progress],
            "completed": list(self.completed),
            "failed": list(self.failed),
            "foo_era": self.foo_era,
            "cycle": self.cycle,
            "faux": list(self.faux),
            "visited": list(self.visited),
            "huge": list(self.huge),
            "destroyed": list(self.destroyed),
            "reward": list(self.reward),
            "picked": self.picked,
            "active": self.active,
            "phase": self.phase,
            "drop": self.drop,
            "turn": dict(self.turn),
            "over": self.over,
            "won": self.won,
            "reason": self.reason,
            "agents": [{k: (list(v) if isinstance(v, list) else v) for k, v in a.items()} for a in self.agents],
            "out_of_game": list(self.out_of_game),
        }

    def _load(self, core: JSON) -> None:
        w = "state.state"
        try:
            self._configure()
        except GameError as err:
            raise BadState(f"state.options: {err}") from err
        self.energy = _counts(core, "energy", 0, GREEN_CUBES, w)
        self.rifts = _counts(core, "rifts", 0, RED_CUBES, w)
        self.vortex = [_bool(v, f"{w}.vortex[{i}]") for i, v in enumerate(_seven(core, "vortex", w))]
        self.clones = [_strs(c, f"{w}.clones[{i}]") for i, c in enumerate(_seven(core, "clones", w))]
        self.bag = _strs(require(core, "bag", list, w), f"{w}.bag")
        self.available = [_strs(a, f"{w}.available[{i}]") for i, a in enumerate(_seven(core, "available", w))]
        self.tiles = [_opt_str(t, f"{w}.tiles[{i}]") for i, t in enumerate(_seven(core, "tiles", w))]
        self.set_aside = _strs(require(core, "set_aside", list, w), f"{w}.set_aside")
        self.revealed = [_bool(v, f"{w}.revealed[{i}]") for i, v in enumerate(_seven(core, "revealed", w))]
        self.progress = [_strs(p, f"{w}.progress[{i}]") for i, p in enumerate(_seven(core, "progress", w))]
        self.completed = _strs(require(core, "completed", list, w), f"{w}.completed")
        self.failed = _strs(require(core, "failed", list, w), f"{w}.failed")
        self.foo_era = _ranged(core, "foo_era", 0, COUNT - 1, w)
        self.cycle = _ranged(core, "cycle", 1, LAST_CYCLE, w)
        self.faux = [_era_int(v, f"{w}.faux[{i}]") for i, v in enumerate(require(core, "faux", list, w))]
        self.visited = [_era_int(v, f"{w}.visited[{i}]") for i, v in enumerate(require(core, "visited", list, w))]
        self.huge = _strs(require(core, "huge", list, w), f"{w}.huge")
        self.destroyed = _strs(require(core, "destroyed", list, w), f"{w}.destroyed")
        self.reward = _strs(require(core, "reward", list, w), f"{w}.reward")
        self.picked = _ranged(core, "picked", 0, self.num_players, w)
        self.active = _ranged(core, "active", 0, self.num_players - 1, w)
        self.phase = require(core, "phase", str, w)
        if self.phase not in PHASES:
            raise BadState(f"{w}.phase: expected one of {', '.join(PHASES)}, got '{self.phase}'")
        self.drop = _ranged(core, "drop", 0, RED_CUBES, w)
        turn = require(core, "turn", dict, w)
        self.turn = {
            "free_move": require(turn, "free_move", bool, f"{w}.turn"),
            "loops": _ranged(turn, "loops", 0, GREEN_CUBES, f"{w}.turn"),
            "ability": require(turn, "ability", bool, f"{w}.turn"),
        }
        self.over = require(core, "over", bool, w)
        self.won = require(core, "won", bool, w)
        self.reason = require(core, "reason", str, w)
        agents = require(core, "agents", list, w)
        if len(agents) != self.num_players:
            raise BadState(f"{w}.agents: expected one agent per player ({self.num_players}), got {len(agents)}")
        self.agents = [self._load_agent(a, f"{w}.agents[{i}]") for i, a in enumerate(agents)]
        self.out_of_game = _strs(require(core, "out_of_game", list, w), f"{w}.out_of_game")
        self._check_conservation(w)

    def _load_agent(self, data: Any, where: str) -> dict[str, Any]:
        code = require(data, "code", str, where)
        if code not in {a.code for a in self.catalogue.agents}:
            raise BadState(f"{where}.code: unknown agent '{code}'")
        agent: dict[str, Any] = {"code": code, "era": _ranged(data, "era", 0, COUNT - 1, where)}
        for pile in ("draw", "hand", "exhausted", "discard"):
            agent[pile] = _strs(require(data, pile, list, where), f"{where}.{pile}")
        if not set(agent["exhausted"]) <= set(agent["hand"]):
            raise BadState(f"{where}.exhausted: expected cards of the hand")
        return agent

    def _check_conservation(self, where: str) -> None:
        """Cubes, clone tokens, cards and tiles: each exactly once, or the saved state is refused."""
        for colour in ("green", "red"):
            if self.supply(colour) < 0:
                raise BadState(f"{where}: more {colour} cubes on the board than the box holds (30)")
        tokens = sorted([*self.bag, *(c for era in self.clones for c in era)])
        if tokens != sorted(ALL_CLONES):
            raise BadState(f"{where}.clones: the bag and the Eras must hold each of the 28 clone tokens once")
        cards = sorted(c for zone in self.card_zones().values() for c in zone)
        expected = sorted([*self.catalogue.artifacts, *self.catalogue.missions, *FAUX])
        if cards != expected:
            raise BadState(f"{where}: the piles, hands, Eras and tiles must hold each card and tile exactly once")

    def card_zones(self) -> dict[str, list[str]]:
        """Artifacts, mission tiles and Faux cards, each in exactly one zone (physical: artifacts untracked)."""
        zones: dict[str, list[str]] = {
            "huge deck": list(self.huge),
            "destroyed": list(self.destroyed),
            "reward": list(self.reward),
            "out of game": list(self.out_of_game),
            "missions set aside": list(self.set_aside),
            "missions completed": list(self.completed),
            "missions failed": list(self.failed),
            "mission tiles": [t for t in self.tiles if t],
            "faux deck": [FAUX[e] for e in self.faux],
            "faux revealed": [FAUX[e] for e in self.visited],
        }
        for e in range(COUNT):
            zones[f"available {CODES[e]}"] = list(self.available[e])
        for p, agent in enumerate(self.agents):
            for pile in ("draw", "hand", "discard"):
                zones[f"{seat_name(p)} {pile}"] = list(agent[pile])
        if self.physical:
            zones["physical table (not tracked)"] = sorted(
                set(self.catalogue.artifacts) - set(self.out_of_game) - set(self.destroyed)
            )
        return zones

    # ----- views -------------------------------------------------------------------------------------------------
    def view(self, player: int | None) -> JSON:
        """Open information only: the same for every agent (cooperative: hands are open), orders hidden."""
        eras = []
        for e in range(COUNT):
            tile = self.tiles[e]
            mission: JSON | str | None = None
            if tile and self.revealed[e]:
                m = self.catalogue.missions[tile]
                mission = {"code": tile, "name": m.name, "slots": list(m.slots), "progress": list(self.progress[e])}
            elif tile:
                mission = "?"
            eras.append(
                {
                    "code": CODES[e],
                    "energy": self.energy[e],
                    "rifts": self.rifts[e],
                    "vortex": self.vortex[e],
                    "clones": sorted(self.clones[e]),
                    "artifacts": sorted(self.available[e]),
                    "mission": mission,
                    "agents": [p for p, a in enumerate(self.agents) if a["era"] == e],
                }
            )
        return {
            "game": self.name,
            "you": player,
            "table": self.options["table"],
            "scenario": self.scenario.name,
            "difficulty": self.difficulty,
            "phase": self.phase,
            "current": self.current_player,
            "active": self.active,
            "cycle": self.cycle,
            "faux_left": len(self.faux),
            "visited": [CODES[e] for e in self.visited],
            "foo_era": CODES[self.foo_era],
            "drop": self.drop,
            "eras": eras,
            "supply": {"green": self.supply("green"), "red": self.supply("red")},
            "bag": len(self.bag),
            "huge_deck": len(self.huge),
            "destroyed": sorted(self.destroyed),
            "reward": list(self.reward),
            "completed": list(self.completed),
            "failed": list(self.failed),
            "vortexes": sum(self.vortex),
            "turn": dict(self.turn),
            "agents": [self._agent_view(p) for p in range(self.num_players)],
            "over": self.over,
            "won": self.won,
            "reason": self.reason,
        }

    def _agent_view(self, player: int) -> JSON:
        agent = self.agents[player]
        info = self.catalogue.agent(agent["code"])
        hand = []
        for card in agent["hand"]:
            art = self.artifact(card)
            hand.append(
                {
                    "code": card,
                    "name": art.name,
                    "dimension": art.dimension,
                    "ready": card not in agent["exhausted"],
                    "effect": art.effect.to_json(),
                    "text": art.text,
                }
            )
        return {
            "agent": info.name,
            "era": CODES[agent["era"]],
            "ability": {"text": info.ability_text, "effect": info.ability.to_json()},
            "hand": hand,
            "draw": len(agent["draw"]),
            "discard": sorted(agent["discard"]),
        }

    def describe(self, player: int | None = None) -> str:
        v = self.view(player)
        lines = [
            f"The LOOP ({self.scenario.title}, {self.difficulty}) - cycle {v['cycle']}/3, Faux card "
            f"{COUNT - v['faux_left']}/7; Dr. Foo in {era_title(self.foo_era)}; vortexes {v['vortexes']}/4; "
            f"missions {len(v['completed'])}/4; supply {v['supply']['green']} green, {v['supply']['red']} red; "
            f"clone bag {v['bag']}"
        ]
        for e, era in enumerate(v["eras"]):
            mission = era["mission"]
            if isinstance(mission, dict):
                mission = f"{mission['name']} [{' '.join(mission['slots'])}] has [{' '.join(mission['progress'])}]"
            marks = ("  <- Dr. Foo" if e == self.foo_era else "") + ("  VORTEX" if era["vortex"] else "")
            who = "" if self.physical else ", ".join(seat_name(p) for p in era["agents"])
            lines.append(
                f"  {era['code']} {ERA_PAD[e]} energy {era['energy']} rift {era['rifts']}/3 | clones "
                f"{' '.join(era['clones']) or '-'} | artifacts {' '.join(era['artifacts']) or '-'} | mission "
                f"{mission or '-'}{' | ' + who if who else ''}{marks}"
            )
        for p, a in enumerate([] if self.physical else v["agents"]):
            hand = " ".join(f"{c['code']}{'' if c['ready'] else '(x)'}" for c in a["hand"]) or "-"
            lines.append(
                f"{seat_name(p)} {a['agent']} in {a['era']}: hand {hand}; draw {a['draw']}, discard "
                f"{len(a['discard'])}; ability: {a['ability']['text']}"
            )
        if v["reward"]:
            lines.append(f"Attendance reward on offer: {' '.join(v['reward'])}")
        if self.over:
            lines.append(f"Game over: {'the agents win' if self.won else 'the agents lose'}. {self.reason}.")
        else:
            lines.append(f"Now: {self._phase_problem('', '-').reason.removeprefix('not now: the table is ')}")
        return "\n".join(lines)

    # ----- parsing ---------------------------------------------------------------------------------------------
    @classmethod
    def parse_action(cls, text: str) -> Action:
        if not isinstance(text, str):
            raise BadAction(f"expected text, got {type(text).__name__}: {GRAMMAR}")
        words = text.strip().lower().split()
        if not words:
            raise BadAction(f"empty action: {GRAMMAR}")
        verb, args = words[0], words[1:]
        parser = _PARSERS.get(verb)
        if parser is None:
            raise BadAction(f"unknown action '{verb}': {GRAMMAR}")
        return parser(args)


ERA_PAD = tuple(name.ljust(13) for name in ("Dawn of Time", "Medieval", "Renaissance", "Industrial",
                                              "Globalization", "Age of Robots", "End of Times"))  # fmt: skip


# ----- parsing helpers -----------------------------------------------------------------------------------------------
def _era(word: str) -> str:
    index = era_index(word)
    if index is None:
        raise BadAction(f"'{word}' is not an Era: use daw med ren ind glo rob end or 1-7")
    return CODES[index]


def _card(word: str) -> str:
    match = _CARD_RE.fullmatch(word)
    if match is None:
        raise BadAction(f"'{word}' is not an artifact card code like A07")
    return f"A{int(match.group(1)):02d}"


def _target(word: str) -> str:
    """An artifact (A07), a clone (ren2) or an Era."""
    if _CARD_RE.fullmatch(word):
        return _card(word)
    if _CLONE_RE.fullmatch(word):
        return word
    try:
        return _era(word)
    except BadAction:
        raise BadAction(f"'{word}' is not a target: expected an Era, a card like A07 or a clone like ren2") from None


def _clone(word: str) -> str:
    if not _CLONE_RE.fullmatch(word):
        raise BadAction(f"'{word}' is not a clone: its Paradox Era code and 1-4, like ren2")
    return word


def _count(word: str) -> int:
    if not (word.isascii() and word.isdigit()) or not 1 <= int(word) <= RED_CUBES:
        raise BadAction(f"'{word}' is not a number of cubes 1-30")
    return int(word)


def _arity(verb: str, args: list[str], low: int, high: int) -> None:
    if not low <= len(args) <= high:
        raise BadAction(f"'{verb}' takes {low}-{high} words after it, got {len(args)}: {GRAMMAR}")


def _parse_rifts(args: list[str]) -> Action:
    if args == ["auto"]:
        return Rifts(None)
    if len(args) != 3 or not all(a.isascii() and a.isdigit() and int(a) <= RED_CUBES for a in args):
        raise BadAction(
            "'rifts' needs three counts (previous Era, Dr. Foo's Era, next Era) like 'rifts 1 2 1', or 'auto'"
        )
    a, b, c = (int(x) for x in args)
    return Rifts((a, b, c))


def _parse_use(args: list[str], ability: bool) -> Action:
    card = None
    if not ability:
        if not args:
            raise BadAction(f"'use' needs a card code like A07: {GRAMMAR}")
        card, args = _card(args[0]), args[1:]
    dest = None
    if len(args) >= 2 and args[-2] == "to":
        dest, args = _era(args[-1]), args[:-2]
    if len(args) > 1:
        raise BadAction(f"expected at most one target and 'to ERA', got '{' '.join(args)}': {GRAMMAR}")
    return Use(card, _target(args[0]) if args else None, dest)


def _parse_loop(args: list[str]) -> Action:
    dimension = " ".join(args)
    if dimension in ("black", "blackhole", "black hole", "black-hole"):
        return Loop("black hole")
    if dimension not in ELEMENTARY:
        raise BadAction(f"'loop' needs a dimension: spiral, star or stripe, got '{dimension}'")
    return Loop(dimension)


def _parse_progress(args: list[str]) -> Action:
    _arity("progress", args, 1, 3)
    if args[0] not in ("green", "red") or len(args) == 2 or (len(args) == 3 and args[1] != "at"):
        raise BadAction("'progress' needs a colour, green or red, and optionally 'at ERA'")
    return Progress(args[0], _era(args[2]) if len(args) == 3 else None)


def _parse_cubes(verb: str, args: list[str]) -> Action:
    _arity(verb, args, 2, 3)
    if args[0] not in ("green", "red"):
        raise BadAction(f"'{verb}' needs a cube colour, green or red, like '{verb} green ren 1'")
    n = _count(args[2]) if len(args) == 3 else 1
    return Cubes(args[0], _era(args[1]), n if verb == "add" else -n)


def _parse_clone(args: list[str]) -> Action:
    if len(args) != 3 or args[1] != "to":
        raise BadAction("'clone' needs 'clone CLONE to ERA', like 'clone ren2 to ind'")
    return CloneTo(_clone(args[0]), _era(args[2]))


def _single(verb: str, args: list[str], make: Any) -> Action:
    _arity(verb, args, 1, 1)
    return make(args[0])


def _none(verb: str, args: list[str], action: Action) -> Action:
    _arity(verb, args, 0, 0)
    return action


_PARSERS = {
    "rifts": _parse_rifts,
    "move": lambda a: _single("move", a, lambda w: Move(_era(w))),
    "use": lambda a: _parse_use(a, ability=False),
    "ability": lambda a: _parse_use(a, ability=True),
    "loop": _parse_loop,
    "progress": _parse_progress,
    "acquire": lambda a: _single("acquire", a, lambda w: Acquire(_card(w))),
    "take": lambda a: _single("take", a, lambda w: Take(_card(w))),
    "end": lambda a: _none("end", a, End()),
    "foo": lambda a: _none("foo", a, FooTurn()),
    "add": lambda a: _parse_cubes("add", a),
    "remove": lambda a: _parse_cubes("remove", a),
    "clone": _parse_clone,
    "destroy": lambda a: _single("destroy", a, lambda w: DestroyClone(_clone(w))),
    "complete": lambda a: _single("complete", a, lambda w: Complete(_era(w))),
}


# ----- loading helpers ---------------------------------------------------------------------------------------------
def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise BadState(f"{where}: expected bool, got {type(value).__name__}")
    return value


def _int(value: Any, low: int, high: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadState(f"{where}: expected a whole number {low}-{high}, got {value!r}")
    return value


def _ranged(data: JSON, key: str, low: int, high: int, where: str) -> int:
    return _int(require(data, key, int, where), low, high, f"{where}.{key}")


def _era_int(value: Any, where: str) -> int:
    return _int(value, 0, COUNT - 1, where)


def _seven(data: JSON, key: str, where: str) -> list[Any]:
    value = require(data, key, list, where)
    if len(value) != COUNT:
        raise BadState(f"{where}.{key}: expected one entry per Era (7), got {len(value)}")
    return value


def _counts(data: JSON, key: str, low: int, high: int, where: str) -> list[int]:
    return [_int(v, low, high, f"{where}.{key}[{i}]") for i, v in enumerate(_seven(data, key, where))]


def _strs(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadState(f"{where}: expected a list of codes")
    return list(value)


def _opt_str(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise BadState(f"{where}: expected a mission code or null, got {type(value).__name__}")
    return value
