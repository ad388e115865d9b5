"""`tabletop`: the one command-line entry point.

Every subcommand imports what it needs lazily, so `tabletop --help` is instant and a missing optional part
(a camera library, a speech engine) only matters to the subcommand that uses it. Errors a person can fix are
printed as one line naming the problem, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from companion_ui.cli_base import EXIT_USAGE, CliError
from companion_ui.cli_cards import add_card_commands
from companion_ui.cli_table import add_table_commands


def parse_option(text: str) -> tuple[str, Any]:
    """`key=value` with value read as a bool, an int or else a string (`--option rounds=2`)."""
    if "=" not in text:
        raise CliError(f"--option '{text}': expected KEY=VALUE, e.g. rounds=2 or long_game=true")
    key, raw = (part.strip() for part in text.split("=", 1))
    key = key.replace("-", "_")
    lowered = raw.lower()
    if lowered in {"true", "yes", "on"}:
        return key, True
    if lowered in {"false", "no", "off"}:
        return key, False
    try:
        return key, int(raw)
    except ValueError:
        return key, raw


def save_atomically(path: Path, data: object) -> None:
    """Write JSON so that a crash mid-write leaves the previous file intact, never a half-written one; forced to
    disk before it replaces the old file, so a power cut cannot leave an empty one either."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def autosave(path: str | None) -> Any:
    """The on-change hook for --save: the whole game, written atomically after every action (None: no saving)."""
    if not path:
        return None
    target = Path(path)
    return lambda state: save_atomically(target, state.to_dict())


def read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as err:
        raise CliError(f"{what} '{path}': no such file") from err
    except (OSError, UnicodeDecodeError) as err:
        raise CliError(f"{what} '{path}': cannot read it ({err})") from err
    except json.JSONDecodeError as err:
        raise CliError(f"{what} '{path}': not JSON ({err.msg} at line {err.lineno})") from err


def load_saved(path: str, game: str, what: str = "--resume file") -> Any:
    """A game saved with --save, refused clearly if unreadable or if it holds another game."""
    import games

    state = games.load(read_json(Path(path), what))
    if state.name != game:
        raise CliError(f"{what} '{path}' holds a {state.name} game, not {game}")
    return state


# ----- tabletop games --------------------------------------------------------------------------------------------
def cmd_games(args: argparse.Namespace) -> int:
    from games import GAMES

    for info in GAMES.values():
        players = (
            f"{info.min_players}" if info.min_players == info.max_players else f"{info.min_players}-{info.max_players}"
        )
        policies = ", ".join(["random", *info.policies])
        print(f"{info.name:<14} {info.title} - {players} player(s); seat policies: {policies}")
        for name, help_text in info.options.items():
            print(f"{'':<16}--option {name}=...  {help_text}")
    return 0


# ----- tabletop play ---------------------------------------------------------------------------------------------
def cmd_play(args: argparse.Namespace) -> int:
    import games
    from companion_ui.terminal import Seats, TerminalGame, auto_game, dumps

    info = games.info(args.game)
    if args.resume:
        state = load_saved(args.resume, info.name)
    else:
        options = dict(parse_option(o) for o in args.option)
        state = games.create(args.game, players=args.players, seed=args.seed, **options)
    seats = Seats.parse(args.seats, info, state.num_players, auto=args.auto)
    rng = random.Random(args.seed)
    if args.auto:
        record = auto_game(state, seats, info, rng)
        if args.save:
            save_atomically(Path(args.save), state.to_dict())
        if args.json:
            print(dumps(record))
        else:
            for entry in record["actions"]:
                print(f"Player {entry['player']}: {entry['action']}")
                for event in entry["events"]:
                    print(f"  {event['text']}")
            print("Scores: " + ", ".join(f"Player {p}: {s}" for p, s in enumerate(record["scores"], 1)))
        return 0
    if args.json:
        raise CliError("--json needs --auto (an interactive game prints as it goes)")
    hint = _hint_for(info.name)
    game = TerminalGame(state, seats, info, rng, read=input, out=sys.stdout, hint=hint, on_change=autosave(args.save))
    return game.run()


def _hint_for(game: str) -> Any:
    """The terminal's `hint` command: the game's hint for the player to act, from that player's view."""
    from games import info
    from games.hints import DEFAULT_BUDGET

    hinter = info(game).hinter()

    def hint(state: Any, player: int) -> str:
        advice = hinter(state, player, random.Random(state.history_length), DEFAULT_BUDGET)
        return f"Hint: {advice.action} - {advice.reason}" if advice.action else f"No hint: {advice.reason}"

    return hint


# ----- tabletop hint ---------------------------------------------------------------------------------------------
def expand_deck(text: str) -> list[str]:
    """Deck tokens top first; `?x16` stands for 16 face-down cards (the way the table is printed back)."""
    cards: list[str] = []
    for token in text.split():
        if token.startswith("?x"):
            count = token[2:]
            if not count.isdigit() or int(count) < 1:
                raise CliError(f"--deck token '{token}': expected ?xN with N a positive number, e.g. ?x16")
            cards += ["?"] * int(count)
        else:
            cards.append(token)
    return cards


def cmd_hint(args: argparse.Namespace) -> int:
    from games import info
    from games.hints import Budget

    game = info(args.game)
    if args.state:
        state = load_saved(args.state, game.name, "--state file")
    elif args.deck is not None and game.name == "loot-the-loop":
        from games.loot_the_loop.engine import LootTheLoop

        state = LootTheLoop.from_table(
            deck=expand_deck(args.deck),
            notes=(args.notes or "").split(),
            score_pile=(args.score or "").split(),
            seed=args.seed,
        )
    elif game.name == "loot-the-loop":
        raise CliError("give the table: --deck 'TOP ... BOTTOM' (use ? for face-down cards), or --state FILE")
    else:
        raise CliError(f"give the {game.name} game: --state FILE (saved with 'tabletop play {game.name} --save FILE')")
    player = _hint_player(args.player, state)
    budget = Budget(rollouts=args.rollouts, seconds=args.seconds)
    advice = game.hinter()(state, player, random.Random(args.seed), budget)
    if args.json:
        reply = {"player": player + 1, "action": advice.action, "reason": advice.reason, "value": advice.value}
        print(json.dumps(reply))
    else:
        print(state.describe(player))
        print(f"Suggested for Player {player + 1}: {advice.action or 'nothing'}  ({advice.reason})")
    return 0


def _hint_player(seat: int | None, state: Any) -> int:
    """The 0-based player a hint is for: `--player` (1-based), else whoever is to act."""
    if seat is None:
        current = state.current_player
        return 0 if current is None else current
    if not 1 <= seat <= state.num_players:
        raise CliError(f"--player: expected 1-{state.num_players} for this game, got {seat}")
    return seat - 1


# ----- tabletop bench --------------------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    if args.target == "vision":
        return bench_vision(args)
    if args.target == "tracker":
        return bench_tracker(args)
    if args.target == "companion":
        return bench_companion(args)
    if args.target == "soak":
        return bench_soak(args)
    if args.target == "crash":
        return bench_crash(args)
    if args.target == "table":
        return bench_table(args)
    if args.target == "hints":
        return bench_hints(args)
    if args.target != "loot-the-loop":
        raise CliError(
            f"unknown benchmark '{args.target}': expected loot-the-loop, hints, vision, tracker, companion, soak, "
            "crash or table"
        )
    from games.loot_the_loop.bench import format_table, run_bench

    chosen = tuple(p.strip() for p in (args.policies or "").split(",") if p.strip())
    try:
        result = run_bench(games=_games(args, 1000), seed=args.seed or 0, progress=not args.quiet, policies=chosen)
    except ValueError as err:
        raise CliError(f"--policies: {err}") from err
    return _print_bench(format_table(result), result, args.json)


def _games(args: argparse.Namespace, default: int) -> int:
    games = default if args.games is None else args.games
    if games < 1:
        raise CliError(f"--games must be at least 1, got {games}")
    return games


def _print_bench(table: str, result: dict[str, Any], json_path: str | None) -> int:
    print(table)
    if json_path:
        save_atomically(Path(json_path), result)
        print(f"Wrote {json_path}")
    return 0


def bench_hints(args: argparse.Namespace) -> int:
    """`bench hints --game G`: a seat playing by the hint against the same seat playing greedy, on the same deals;
    resumable from the results file."""
    from games.bench_hints import GREEDY, format_table, run
    from games.hints import BENCH_ROLLOUTS

    if args.game not in GREEDY:
        raise CliError(f"bench hints: --game must be one of {', '.join(GREEDY)}, got {args.game!r}")
    out = Path(args.results or f"out/bench/hints-{args.game}.jsonl")
    result = run(
        args.game,
        _games(args, 500),
        args.seed or 0,
        out,
        args.players,
        progress=not args.quiet,
        workers=args.workers,
        rollouts=BENCH_ROLLOUTS if args.rollouts is None else args.rollouts,
    )
    return _print_bench(format_table(result), result, args.json)


def bench_vision(args: argparse.Namespace) -> int:
    """`bench vision`: the card recognisers on held-out standard decks, or with `--game loop|bag-o-loot` the
    number-card recogniser on that game's held-out designs, or with `--game loot-roll|the-loop` the catalogue
    recogniser on its held-out designs (the standard deck's beside each); The LOOP's also counts the cubes per Era
    on held-out boards (`vision.board.bench`) and reads their mission spots (`vision.board.mission_bench`)."""
    from tqdm import tqdm

    from vision.recognise.enrol import EnrolError
    from vision.recognise.labels import CATALOGUE_GAMES
    from vision.recognise.models import ModelError, models_dir
    from vision.synth.deckdir import DeckError

    game = getattr(args, "game", None)
    for option in ("cube_scenes", "mission_scenes", "dice_scenes", "dice_clips", "dice_enrol"):
        if getattr(args, option) < 0:
            raise CliError(f"--{option.replace('_', '-')} must be 0 or more, got {getattr(args, option)}")
    cubes = game == "the-loop" and args.cube_scenes > 0
    missions = game == "the-loop" and args.mission_scenes > 0
    dice = game == "loot-roll" and args.dice_scenes > 0
    if args.scenes < 1 and not ((cubes or missions or dice) and args.scenes == 0):
        raise CliError(
            f"--scenes must be at least 1, got {args.scenes} (0 only with --game the-loop or loot-roll: their cubes "
            "or dice alone)"
        )
    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.setdefault(stage, tqdm(total=total, desc=stage, unit="scene", disable=args.quiet, leave=False))
        bar.update(done - bar.n)

    common = {
        "scenes": args.scenes,
        "seed": 3 if args.seed is None else args.seed,
        "models": Path(args.models) if args.models else None,
        "progress": progress,
        "split": args.split,
    }
    try:
        if game in (None, "loot-the-loop"):
            from vision.recognise.bench import format_table, run_bench

            name = "vision"
            result = run_bench(
                Path(args.decks),
                Path(args.out),
                baseline_runs=Path(args.baseline) if args.baseline else None,
                enrol_scenes=args.enrol_scenes,
                closeups=args.closeups,
                enrol_adapt=args.enrol_adapt,
                **common,
            )
        elif game in CATALOGUE_GAMES:
            from vision.recognise.bench_catalogue import format_catalogue_table, run_catalogue_bench

            name = f"vision-{game}"
            result = (
                run_catalogue_bench(game, Path(args.pieces or f"out/catcards/{game}"), **common) if args.scenes else {}
            )
            tables = [format_catalogue_table(result)] if args.scenes else []
            if cubes:
                from vision.board.bench import format_cube_table, run_cube_bench

                boards = Path(args.board_pieces)
                common_cubes = {k: v for k, v in common.items() if k not in ("scenes", "models")}
                result["cubes"] = run_cube_bench(
                    boards, args.cube_scenes, models=common["models"] or models_dir(), **common_cubes
                )
                tables.append(format_cube_table(result["cubes"]))
            if missions:
                from vision.board.mission_bench import format_mission_table, run_mission_bench

                result["missions"] = run_mission_bench(
                    Path(args.board_pieces),
                    args.mission_scenes,
                    common["seed"],
                    common["models"] or models_dir(),
                    progress=progress,
                    split=args.split,
                )
                tables.append(format_mission_table(result["missions"]))
            if dice:
                from vision.dice.bench import format_dice_table, run_dice_bench

                result["dice"] = run_dice_bench(
                    Path(args.dice_pieces),
                    args.dice_scenes,
                    common["seed"],
                    common["models"] or models_dir(),
                    clips=args.dice_clips,
                    progress=progress,
                    split=args.split,
                    enrol_players=args.dice_enrol,
                )
                tables.append(format_dice_table(result["dice"]))

            def format_table(_: dict) -> str:
                return "\n\n".join(tables)
        else:
            from vision.recognise.bench_games import format_game_table as format_table
            from vision.recognise.bench_games import run_game_bench

            name = f"vision-{game}"
            result = run_game_bench(game, Path(args.pieces or f"out/numcards/{game}"), **common)
    except (ModelError, DeckError, EnrolError, FileNotFoundError, ValueError) as err:
        raise CliError(str(err)) from err
    finally:
        for bar in bars.values():
            bar.close()
    print(format_table(result))
    return _write_bench(args, result, name)


def bench_table(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from vision.table.bench import format_table, run_table_bench
    from vision.table.mat import PAPERS, ZONES

    game = args.game or "loot-the-loop"
    if game not in ZONES:
        raise CliError(f"--game {game}: unknown game (expected one of {', '.join(ZONES)})")
    if args.paper not in PAPERS:
        raise CliError(f"--paper {args.paper}: unknown paper size (expected one of {', '.join(PAPERS)})")
    views = 300 if args.views is None else args.views
    if views < 1:
        raise CliError(f"--views must be at least 1, got {views}")
    with tqdm(total=views, desc="views", unit="view", disable=args.quiet, leave=False) as bar:
        result = run_table_bench(game, args.paper, views, args.seed or 0, lambda i, n: bar.update(i - bar.n))
    print(format_table(result))
    if args.zone_scenes:
        result["zones"] = zone_bench(args, game if args.game else "loot-roll")
    return _write_bench(args, result, "table")


def zone_bench(args: argparse.Namespace, game: str) -> dict:
    """Cards of the first held-out deck laid in the game's zones on an A3 mat, read and placed end to end."""
    from tqdm import tqdm

    from vision.recognise.bench import test_decks
    from vision.recognise.models import ModelError
    from vision.synth.deckdir import DeckError
    from vision.table.bench import format_zones, run_zone_bench

    try:
        decks = test_decks(Path(args.decks))
    except (DeckError, FileNotFoundError) as err:
        raise CliError(f"--decks {args.decks}: {err} (tabletop synth decks makes them; --zone-scenes 0 skips)") from err
    if not decks:
        raise CliError(f"--decks {args.decks}: no held-out deck there (tabletop synth decks; --zone-scenes 0 skips)")
    models = Path(args.models) if args.models else None
    with tqdm(total=args.zone_scenes, desc="zones", unit="scene", disable=args.quiet, leave=False) as bar:
        try:
            zones = run_zone_bench(decks[0], game, "a3", args.zone_scenes, 100 + (args.seed or 0), models,
                                   lambda i, n: bar.update(i - bar.n))  # fmt: skip
        except ModelError as err:
            raise CliError(str(err)) from err
    print(format_zones(zones))
    return zones


def _write_bench(args: argparse.Namespace, result: object, name: str) -> int:
    """Every benchmark's results as JSON: --json FILE, or NAME-bench.json in --out."""
    path = Path(args.json) if args.json else Path(args.out) / f"{name}-bench.json"
    save_atomically(path, result)
    print(f"Wrote {path}")
    return 0


def bench_tracker(args: argparse.Namespace) -> int:
    from tracker.bench import format_summary, run_bench
    from tracker.replay import TRACKER_RECOGNISER
    from vision.recognise.models import ModelError

    games = 20 if args.games is None else args.games
    if games < 1:
        raise CliError(f"--games must be at least 1, got {games}")
    try:
        videos = Path(args.videos or "out/tracker_bench")
        result = run_bench(
            videos,
            Path(args.decks),
            games,
            not args.quiet,
            render=not args.no_render,
            recogniser=args.recogniser or TRACKER_RECOGNISER,
        )
    except (ModelError, FileNotFoundError, ValueError) as err:
        raise CliError(str(err)) from err
    print(format_summary(result["summary"]))
    return _write_bench(args, result, "tracker")


def bench_companion(args: argparse.Namespace) -> int:
    from companion_ui.bench import format_summary, run_bench

    if args.hours < 0:
        raise CliError(f"--hours must be 0 or more, got {args.hours}")
    videos = Path(args.videos) if args.videos else None
    try:
        result = run_bench(
            args.hours,
            progress=not args.quiet,
            videos=videos,
            perfect_vision=args.perfect_vision,
            recogniser=args.recogniser,
        )
    except FileNotFoundError as err:
        raise CliError(str(err)) from err
    print(format_summary(result))
    return _write_bench(args, result, "companion")


def bench_soak(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from companion_ui.soak import format_summary, run_soak

    if args.minutes <= 0 or args.clients < 1:
        raise CliError(f"--minutes must be above 0 and --clients at least 1, got {args.minutes} and {args.clients}")
    bar = tqdm(total=round(args.minutes * 60), unit="s", disable=args.quiet)

    def tick(done: float, _total: float) -> None:
        bar.n = min(round(done), bar.total)
        bar.refresh()

    result = run_soak(args.minutes, args.clients, min(60.0, args.minutes * 60 / 4), tick, args.browsers)
    bar.close()
    print(format_summary(result))
    return _write_bench(args, result, "soak")


def bench_crash(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from companion_ui.crash import format_summary, run_crash_bench

    if args.kills < 1:
        raise CliError(f"--kills must be at least 1, got {args.kills}")
    bar = tqdm(total=args.kills, unit="kill", disable=args.quiet)

    def tick(done: int, _total: int) -> None:
        bar.n = done
        bar.refresh()

    result = run_crash_bench(args.kills, args.seed or 0, progress=tick)
    bar.close()
    print(format_summary(result))
    _write_bench(args, result, "crash")
    return 0 if result["intact"] == result["kills"] else 1


# ----- tabletop replay -------------------------------------------------------------------------------------------
def cmd_report(args: argparse.Namespace) -> int:
    from companion_ui.report import write_report

    journal = Path(args.journal)
    if not journal.is_file():
        raise CliError(f"{journal}: no such journal")
    for path in write_report(journal, Path(args.out)):
        print(path)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from tracker.replay import replay
    from vision.recognise.models import ModelError

    try:
        deck = enrolled_deck(args.deck)
        result = replay(args.video, args.game, progress=not args.quiet and not args.json, deck=deck)
    except (ModelError, FileNotFoundError, ValueError) as err:
        raise CliError(str(err)) from err
    if args.json:
        checks = [e.to_json() for e in result.events if e.kind == "check"]
        print(json.dumps({"actions": result.actions_json(), "checks": checks, "state": result.state,
                          "score": result.state.get("score")}, indent=1))  # fmt: skip
        return 0
    for e in result.events:
        when = f"{e.t:7.2f} s  frame {e.frame:5d}"
        if e.kind == "action":
            print(f"{when}  {e.action:14s} ({e.confidence:.2f})")
        elif e.kind in ("revised", "check"):
            print(f"{when}  {e.text}")
    state = result.state
    print(f"Final: {len(state.get('actions', []))} actions, score {state.get('score')}"
          + (f", {state['result']}" if state.get("result") else ""))  # fmt: skip
    return 0


# ----- tabletop foo ----------------------------------------------------------------------------------------------
def cmd_foo(args: argparse.Namespace) -> int:
    from companion_ui.foo_session import FooSession, start_table
    from companion_ui.speech import Speaker

    if args.resume:
        table = load_saved(args.resume, "the-loop")
    else:
        table = start_table(args.scenario, args.difficulty, args.seed, args.agents)
    speaker = None if args.no_speech else Speaker(rate=args.rate, voice=args.voice, notice=print)
    session = FooSession(
        table,
        read=input,
        out=sys.stdout,
        speaker=speaker,
        on_change=autosave(args.save),
    )
    try:
        return session.run(auto=args.auto)
    finally:
        if speaker is not None:
            speaker.wait_idle(timeout=15)  # let the last announcement (often the ending) be heard
            speaker.close()


# ----- tabletop run / demo ----------------------------------------------------------------------------------------
def _run_options(args: argparse.Namespace, **kw: Any) -> dict[str, Any]:
    if not 1 <= args.port <= 65535:
        raise CliError(f"--port must be 1-65535, got {args.port}")
    if args.duration is not None and args.duration <= 0:
        raise CliError(f"--duration must be positive, got {args.duration}")
    table_dir = _folder_option(args.table_dir, "--table-dir")
    board_dir = _folder_option(args.board_dir, "--board-dir")
    mat = Path(args.mat) if args.mat else None
    if mat is not None and not mat.is_file():
        raise CliError(f"--mat {mat}: no such file (the layout JSON that tabletop mat wrote beside the picture)")
    deck = enrolled_deck(getattr(args, "deck", None))
    return dict(
        host=args.host, port=args.port, speech=not args.no_speech, rate=args.rate, voice=args.voice,
        exit_at_end=args.exit_at_end, duration=args.duration, table_dir=table_dir, mat=mat, deck=deck,
        board_dir=board_dir, **kw,
    )  # fmt: skip


def _folder_option(value: str | None, flag: str) -> Path | None:
    """A folder option's path (None when not given); something there that is not a folder is refused."""
    folder = Path(value) if value else None
    if folder is not None and folder.exists() and not folder.is_dir():
        raise CliError(f"{flag} {folder}: not a folder")
    return folder


def enrolled_deck(path: str | None) -> Any:
    """The enrolled deck head at `path` (None: the shipped reading), or a CliError naming what is wrong with it,
    before any camera or server starts."""
    if not path:
        return None
    from vision.recognise.enrol import EnrolError
    from vision.recognise.enrol_rectified import RectifiedDeckHead, load_deck_head

    try:
        head = load_deck_head(path)
    except EnrolError as err:
        raise CliError(str(err)) from err
    if not isinstance(head, RectifiedDeckHead):
        raise CliError(f"--deck {path}: enrolled for the previous recogniser; the tracker reads with the rectified one "
                       "(enrol the deck again: tabletop enrol DECK_DIR)")  # fmt: skip
    return head


def cmd_run(args: argparse.Namespace) -> int:
    from companion_ui.run import RunOptions, run

    if args.video and not Path(args.video).is_file():
        raise CliError(f"--video {args.video}: no such file")
    options = dict(parse_option(o) for o in args.option)
    opts = RunOptions(
        game=args.game, camera=args.camera, video=Path(args.video) if args.video else None, manual=args.manual,
        players=args.players, seed=args.seed, options=options, save=Path(args.save) if args.save else None,
        resume=Path(args.resume) if args.resume else None, loop=args.loop, **_run_options(args),
    )  # fmt: skip
    return run(opts)


def cmd_demo(args: argparse.Namespace) -> int:
    from companion_ui.run import demo_options, run

    return run(demo_options(args.game, loop=demo_loops(args), **_run_options(args)))


def demo_loops(args: argparse.Namespace) -> bool:
    """The demo plays its recording again and again, unless asked once (a script waiting for the end wants one)."""
    return not (args.once or args.exit_at_end)


def _speech_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-speech", action="store_true", help="do not speak: announcements are printed (and shown)")
    p.add_argument("--rate", type=int, help="speech rate in words per minute")
    p.add_argument("--voice", help="espeak-ng voice id (e.g. en-gb)")


def _server_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=8000, help="the page's port (default 8000)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to serve on (default 127.0.0.1: this machine only); 0.0.0.0 serves phones on the network, "
        "who then need the link with the access token that the terminal shows",
    )
    _speech_args(p)
    p.add_argument("--exit-at-end", action="store_true", help="stop when the recording ends (scripts, tests)")
    p.add_argument("--duration", type=float, help="stop after this many seconds")
    p.add_argument(
        "--table-dir",
        metavar="DIR",
        help="where the table set up on the page (four corners, zones) is kept and read back "
        "(default ~/.config/tabletop-companion/table)",
    )
    p.add_argument(
        "--board-dir",
        metavar="DIR",
        help="The LOOP: where the board set up on the page (a photo squared up, its Eras drawn) is kept and read "
        "back, a board folder for tabletop detect --board (default ~/.config/tabletop-companion/board)",
    )
    p.add_argument(
        "--mat",
        metavar="LAYOUT",
        help="a printed mat's layout JSON (tabletop mat writes it): its markers place the table and its zones",
    )


# ----- tabletop synth --------------------------------------------------------------------------------------------
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tabletop-companion"
DEFAULT_DECKS = CACHE / "decks"
DEFAULT_PIECES = CACHE / "pieces"


def parse_size(text: str) -> tuple[int, int]:
    """`1280x720` -> (1280, 720)."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) >= 64 for p in parts):
        raise CliError(f"--size '{text}': expected WIDTHxHEIGHT with both at least 64, e.g. 1280x720")
    return int(parts[0]), int(parts[1])


def _decks_for(args: argparse.Namespace) -> list[Any]:
    from vision.synth.components import load_components
    from vision.synth.deckdir import DeckError
    from vision.synth.decks import split_families

    try:
        decks = load_components(args.decks)
    except DeckError as err:
        raise CliError(str(err)) from err
    if args.family_split:
        decks = split_families(decks, seed=0)[args.family_split]
        if not decks:
            raise CliError(f"no deck family falls in the '{args.family_split}' split of {args.decks}")
    return decks


def cmd_synth_decks(args: argparse.Namespace) -> int:
    from vision.synth.decks import MissingPackageError, deck_sheet, render_debian_decks

    try:
        decks = render_debian_decks(args.out, card_height=args.height, only=args.only or None, progress=not args.quiet)
    except MissingPackageError as err:
        raise CliError(str(err)) from err
    if args.sheets:
        for deck in decks:
            deck_sheet(deck, Path(args.sheets) / f"{deck.name}.png")
    families = sorted({d.family for d in decks})
    print(f"{len(decks)} decks in {len(families)} design families under {args.out}")
    return 0


def cmd_synth_pieces(args: argparse.Namespace) -> int:
    from vision.synth.art.common import ArtError
    from vision.synth.components import render_designs

    if args.designs < 1:
        raise CliError(f"--designs must be at least 1, got {args.designs}")
    out = Path(args.out) if args.out else DEFAULT_PIECES / args.game
    try:
        sets = render_designs(
            args.game, out, range(args.designs), args.px_per_mm, workers=args.workers, progress=not args.quiet
        )
    except (ValueError, ArtError) as err:
        raise CliError(str(err)) from err
    print(f"{len(sets)} {args.game} designs ({len(sets[0].codes)} pieces each) under {out}")
    return 0


def cmd_synth_clip(args: argparse.Namespace) -> int:
    from vision.synth.clips import ClipError, render_drop_clip, render_roll_clip
    from vision.synth.components import load_components
    from vision.synth.deckdir import DeckError
    from vision.synth.pieces import PieceSet

    game = "loot-roll" if args.kind == "roll" else "the-loop"
    try:
        sets = [s for s in load_components(args.pieces) if isinstance(s, PieceSet) and s.game == game]
    except DeckError as err:
        raise CliError(str(err)) from err
    if not sets:
        raise CliError(
            f"--pieces {args.pieces}: no {game} piece set there (draw some: tabletop synth pieces --game {game})"
        )
    pieces = sets[args.seed % len(sets)]
    size = parse_size(args.size)
    try:
        if args.kind == "roll":
            meta = render_roll_clip(args.out, args.seed, pieces, args.die, args.count, args.fps, size, not args.quiet)
        else:
            meta = render_drop_clip(args.out, args.seed, pieces, args.count, args.fps, size, not args.quiet)
    except ClipError as err:
        raise CliError(str(err)) from err
    print(f"Wrote {args.out}: {meta['frames']} frames; " + "; ".join(_event_text(e) for e in meta["events"]))
    return 0


def _event_text(event: dict[str, Any]) -> str:
    if event["event"] == "roll":
        return f"die {event['die'] + 1} rolled {event['value']}"
    return f"cube {event['cube'] + 1} landed in {event['era']}"


def cmd_synth_scenes(args: argparse.Namespace) -> int:
    from vision.synth.export import generate_dataset

    if args.n < 1:
        raise CliError(f"--n must be at least 1, got {args.n}")
    size = parse_size(args.size)
    decks = _decks_for(args)
    result = generate_dataset(
        args.out,
        args.n,
        args.seed,
        decks,
        args.kind,
        workers=args.workers,
        progress=not args.quiet,
        split=args.split,
        size=size,
    )
    print(f"wrote {result['written']} scenes, kept {result['skipped']} already there, from {len(decks)} decks")
    return 0


def cmd_synth_sheet(args: argparse.Namespace) -> int:
    from vision.synth.backgrounds import load_table_textures
    from vision.synth.export import scene_for
    from vision.synth.sheet import contact_sheet, distribution_report

    size = parse_size(args.size)
    decks = _decks_for(args)
    photos = load_table_textures()
    scenes = [scene_for(i, args.seed, decks, photos, size) for i in range(args.n)]
    contact_sheet(scenes, args.out)
    print(f"Wrote {args.out}")
    print(json.dumps(distribution_report(scenes), indent=1))
    return 0


def cmd_synth_game(args: argparse.Namespace) -> int:
    from companion_ui.synth_game import render_game_video
    from games.core import GameError
    from vision.synth.deckdir import DeckError

    if args.max_actions is not None and args.max_actions < 1:
        raise CliError(f"--max-actions must be at least 1, got {args.max_actions}")
    try:
        meta = render_game_video(
            game=args.game,
            seed=args.seed,
            deck_dir=args.deck,
            out_dir=args.out,
            policy=args.policy,
            fps=args.fps,
            size=parse_size(args.size),
            max_actions=args.max_actions,
            progress=not args.quiet,
            players=args.players,
        )
    except (DeckError, GameError, ValueError) as err:
        raise CliError(str(err)) from err
    print(f"Wrote {args.out}: {meta['frames']} frames, final score {meta.get('final_score')}")
    return 0


# ----- the parser ------------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabletop",
        description="Tabletop Companion: referees card and board games on a real table.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("games", help="list the games, their player counts, options and seat policies")
    p.set_defaults(func=cmd_games)

    add_table_commands(sub)

    p = sub.add_parser(
        "play",
        help="play a game in the terminal against random or solver seats (learn the rules)",
        description="Play in the terminal. Seats are 'human' or a policy (random, solver, greedy: see "
        "'tabletop games'). With --auto every seat is a policy and the whole game runs unattended.",
    )
    p.add_argument(
        "game", help="a game name (see 'tabletop games'): loot-the-loop, loop, bag-o-loot, loot-roll, the-loop"
    )
    p.add_argument("--players", type=int, help="number of players (default: the game's usual count)")
    p.add_argument("--seed", type=int, default=0, help="shuffle seed; the same seed replays the same game")
    p.add_argument("--seats", help="comma-separated, e.g. human,random,greedy (default: you, then random)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a game option (repeatable)")
    p.add_argument("--auto", action="store_true", help="no human seat: play the whole game unattended")
    p.add_argument("--json", action="store_true", help="with --auto: print the game record and final state as JSON")
    p.add_argument("--save", metavar="FILE", help="save the game after every action (resume it with --resume)")
    p.add_argument("--resume", metavar="FILE", help="continue a game saved with --save")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "hint",
        help="suggest the next action for a player, from what that player may see",
        description="Suggest an action using only what the player may see. Loot the Loop: describe the deck from top "
        "to bottom with card codes (AS 10H QC JOKER) and ? for each face-down card, or give a saved game. The other "
        "games: give a saved game (tabletop play GAME --save FILE); the hint plays the rest of the game out many times "
        "with the cards you cannot see dealt at random.",
    )
    p.add_argument("--game", default="loot-the-loop", help="which game (default loot-the-loop; see 'tabletop games')")
    p.add_argument("--deck", help="Loot the Loop: the deck top to bottom, e.g. '7H 2C ?x16 KS ?' (?xN: N face-down)")
    p.add_argument("--notes", help="Loot the Loop: cards in your notes, e.g. '5D 9S'")
    p.add_argument("--score", help="Loot the Loop: cards in your score pile, e.g. 'AS 3C'")
    p.add_argument("--state", metavar="FILE", help="a saved game (from 'tabletop play --save')")
    p.add_argument("--player", type=int, help="the player (1-based) the hint is for (default: whoever is to act)")
    p.add_argument("--seconds", type=float, default=1.0, help="time budget for the hint (default 1)")
    p.add_argument("--rollouts", type=int, default=400, help="most simulated games in all (default 400)")
    p.add_argument("--seed", type=int, default=0, help="seed for the hint's sampling (same seed, same hint)")
    p.add_argument("--json", action="store_true", help="print the suggestion as JSON")
    p.set_defaults(func=cmd_hint)

    p = sub.add_parser(
        "foo",
        help="The LOOP: run Dr. Foo's turns for a physical table, printing and speaking what to do",
        description="The assistant plays Dr. Foo: it draws his Faux card, says where he travels and how many rift "
        "cubes to drop, asks where they landed (Enter simulates the chutes), takes the agents' changes to the "
        "board, and checks vortexes and defeat.",
    )
    p.add_argument("--scenario", default="basic", help="a shipped scenario name or a scenario JSON file")
    p.add_argument("--difficulty", default="normal", help="easy, normal or hard")
    p.add_argument("--agents", type=int, default=2, help="number of agents at the table (2-4)")
    p.add_argument("--seed", type=int, default=0, help="seed for Dr. Foo's decks and the clone bag")
    p.add_argument("--auto", action="store_true", help="nobody at the table: simulate every landing, no agent moves")
    _speech_args(p)
    p.add_argument("--save", metavar="FILE", help="save the game after every step (resume with --resume)")
    p.add_argument("--resume", metavar="FILE", help="carry on a game saved with --save")
    p.set_defaults(func=cmd_foo)

    p = sub.add_parser("run", help="the companion: camera (or video, or manual entry), the page, speech")
    p.add_argument("--game", default="loot-the-loop", help="the game on the table (default loot-the-loop)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--camera", type=int, help="camera number (default 0 for a game the camera can follow)")
    source.add_argument("--video", help="a recorded table instead of a camera")
    source.add_argument("--manual", action="store_true", help="no camera: the players enter what happens on the page")
    p.add_argument("--players", type=int, help="manual: number of players (default: the game's usual count)")
    p.add_argument("--seed", type=int, default=0, help="manual: the engine's shuffle seed")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="manual: a game option")
    p.add_argument(
        "--save",
        metavar="FILE",
        help="keep the game's journal here (a new file): manual, every entry on disk before it takes effect; camera, "
        "the tracker's state after every table it reads and every correction, before it is told",
    )
    p.add_argument(
        "--resume",
        metavar="FILE",
        help="carry on a game from its journal (after a crash too; manual: or from an older JSON save)",
    )
    p.add_argument("--loop", action="store_true", help="--video: start the recording again when it ends")
    p.add_argument(
        "--deck", metavar="FILE", help="your enrolled deck (from tabletop enrol): the camera reads it as enrolled"
    )
    _server_args(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="the companion on a recorded Loot the Loop table: open the page it prints")
    p.add_argument("--game", default="loot-the-loop", help="loot-the-loop (recorded table) or another game (manual)")
    p.add_argument(
        "--once",
        action="store_true",
        help="play the recording once (by default it starts again when it ends, a new game each time, so a page "
        "opened later still shows a game)",
    )
    p.add_argument("--loop", action="store_true", help=argparse.SUPPRESS)  # the default since issue 19
    _server_args(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("synth", help="synthetic training data: render decks, scenes with labels, contact sheets")
    synth = p.add_subparsers(dest="synth_command", metavar="WHAT")
    synth.required = True
    q = synth.add_parser("decks", help="render Debian's French-suited decks into deck directories (resumable)")
    q.add_argument("--out", default=str(DEFAULT_DECKS), help=f"where the deck directories go (default {DEFAULT_DECKS})")
    q.add_argument("--height", type=int, default=350, help="card height in pixels (default 350)")
    q.add_argument("--only", nargs="+", metavar="NAME", help="only these decks (e.g. gnome-paris kde-dondorf)")
    q.add_argument("--sheets", metavar="DIR", help="also write one contact sheet PNG per deck here")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    q.set_defaults(func=cmd_synth_decks)
    q = synth.add_parser("pieces", help="draw procedural designs of the other games' components (resumable)")
    q.add_argument("--game", required=True, choices=("loop", "bag-o-loot", "loot-roll", "the-loop"))
    q.add_argument("--designs", type=int, default=12, help="number of designs, each its own family (default 12)")
    q.add_argument("--out", help=f"where the piece sets go (default {DEFAULT_PIECES}/GAME)")
    q.add_argument("--px-per-mm", type=float, default=4.0, help="picture resolution (default 4 px/mm)")
    q.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    q.set_defaults(func=cmd_synth_pieces)
    q = synth.add_parser("clip", help="a short clip of dice rolled (Loot Roll) or rift cubes dropped (The LOOP)")
    q.add_argument("--kind", choices=("roll", "drop"), required=True, help="roll: d20s thrown; drop: rift cubes")
    q.add_argument("--pieces", required=True, help="a loot-roll (roll) or the-loop (drop) piece set, or a folder")
    q.add_argument("--out", required=True, help="output folder: video.mp4, states.jsonl.gz, events.json, meta.json")
    q.add_argument("--seed", type=int, default=0, help="the throw, the values and the look")
    q.add_argument("--die", choices=("d20", "d6"), default="d20", help="die kind for --kind roll (default d20)")
    q.add_argument("--count", type=int, help="dice (1-4) or cubes (1-3); default drawn from the seed")
    q.add_argument("--fps", type=int, default=30, help="frames per second (default 30)")
    q.add_argument("--size", default="1280x720", help="image size WIDTHxHEIGHT (default 1280x720)")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    q.set_defaults(func=cmd_synth_clip)
    q = synth.add_parser("game", help="a whole game rendered as video, with actions and per-frame ground truth")
    q.add_argument(
        "--game",
        default="loot-the-loop",
        help="the game to play: loot-the-loop, loop or bag-o-loot (default loot-the-loop)",
    )
    q.add_argument("--seed", type=int, default=0, help="the deal and the look of the video")
    q.add_argument(
        "--deck",
        required=True,
        help="the components: for loot-the-loop a deck directory with a JOKER (or a piece set), for loop and "
        "bag-o-loot a piece set of that game (tabletop synth pieces)",
    )
    q.add_argument("--out", required=True, help="output folder: video.mp4, actions.json, states.jsonl.gz, meta.json")
    q.add_argument(
        "--policy", help="who plays: solver (loot-the-loop), greedy (loop, bag-o-loot) or random (default: the first)"
    )
    q.add_argument("--players", type=int, help="players (loop, bag-o-loot: 2-4; default: the game's)")
    q.add_argument("--fps", type=int, default=30, help="frames per second (default 30)")
    q.add_argument("--size", default="1280x720", help="image size WIDTHxHEIGHT (default 1280x720)")
    q.add_argument("--max-actions", type=int, help="stop after this many actions (a short clip)")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    q.set_defaults(func=cmd_synth_game)
    for name, help_text, func in (
        ("scenes", "render labelled table scenes and export them for YOLO training (resumable)", cmd_synth_scenes),
        (
            "sheet",
            "a contact sheet of generated scenes with their labels drawn, and a distribution report",
            cmd_synth_sheet,
        ),
    ):
        q = synth.add_parser(name, help=help_text)
        q.add_argument(
            "--decks",
            default=str(DEFAULT_DECKS),
            help="a deck directory or piece set, or a folder of them (default: the rendered Debian decks)",
        )
        q.add_argument("--family-split", choices=("train", "val", "test"), help="only the decks of this family split")
        q.add_argument("--seed", type=int, default=0, help="the same seed gives the same scenes")
        q.add_argument("--size", default="1280x720", help="image size WIDTHxHEIGHT (default 1280x720)")
        if name == "scenes":
            q.add_argument("--out", required=True, help="output folder (YOLO layout)")
            q.add_argument("--n", type=int, default=1000, help="number of scenes (default 1000)")
            q.add_argument(
                "--kind", choices=("detect", "obb", "cls"), default="detect", help="YOLO task (default detect)"
            )
            q.add_argument("--split", default="train", help="split name to write (default train)")
            q.add_argument("--workers", type=int, default=2, help="processes (default 2)")
            q.add_argument("--quiet", action="store_true", help="no progress bar")
        else:
            q.add_argument("--out", required=True, help="the PNG to write")
            q.add_argument("--n", type=int, default=8, help="number of scenes on the sheet (default 8)")
        q.set_defaults(func=func)

    add_card_commands(sub)

    p = sub.add_parser("report", help="a game's journal (run --save) as a report: report.json and report.html")
    p.add_argument("journal", help="the journal written by tabletop run --manual --save FILE")
    p.add_argument("--out", default=".", help="folder for report.json and report.html (default: here)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("replay", help="run the camera pipeline on a video file and print the decoded actions")
    p.add_argument("video", help="a video of the table (e.g. video.mp4 from tabletop synth game)")
    p.add_argument("--game", default="loot-the-loop", help="the game on the table (default loot-the-loop)")
    p.add_argument("--json", action="store_true", help="print the actions, checks and final state as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--deck", metavar="FILE", help="your enrolled deck (from tabletop enrol), read as enrolled")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "bench",
        help="benchmarks (loot-the-loop: solver vs random; hints: a hint seat vs greedy; vision: card recogniser; "
        "tracker: whole games; "
        "companion: latency, CPU and memory of the whole companion; soak: pages open while it runs; crash: kill -9 "
        "while moves are entered; table: calibration from a printed mat)",
    )
    p.add_argument(
        "target", help="what to measure: loot-the-loop, hints, vision, tracker, companion, soak, crash or table"
    )
    p.add_argument(
        "--game",
        help="hints: the game whose hint is measured (loop, bag-o-loot, loot-roll, the-loop); table: whose mat "
        "(default loot-the-loop); vision: loop or bag-o-loot reads that game's number cards on "
        "its held-out designs (--pieces) instead of standard decks; loot-roll or the-loop names its catalogue cards "
        "on held-out designs, each enrolled from its own pictures",
    )
    p.add_argument("--paper", default="a4", help="table: the mat's paper (a4, letter, a3)")
    p.add_argument("--views", type=int, help="table: camera views of the mat to render (default 300)")
    p.add_argument(
        "--zone-scenes",
        type=int,
        default=40,
        help="table: scenes of a held-out deck's cards laid in the zones, read end to end (default 40; 0 skips)",
    )
    p.add_argument(
        "--videos",
        help="tracker: folder of rendered games (default out/tracker_bench, made if missing); companion: measure the "
        "latency on the games in this folder too",
    )
    p.add_argument("--no-render", action="store_true", help="tracker: measure only the games already rendered")
    p.add_argument(
        "--recogniser",
        choices=("rectified", "previous"),
        help="tracker, companion: the card recogniser the tracker reads with (default: the tracker's own)",
    )
    p.add_argument(
        "--perfect-vision",
        action="store_true",
        help="companion: on the --videos games, read the cards from the renderer's truth instead of the recogniser "
        "(what the companion costs without vision's misreads)",
    )
    p.add_argument("--scenes", type=int, default=300, help="vision: held-out scenes to render (default 300)")
    p.add_argument("--decks", default="out/decks", help="vision: rendered deck directories (tabletop synth decks)")
    p.add_argument(
        "--pieces",
        help="vision --game: folder of the game's designs (default out/numcards/GAME, out/catcards/GAME for "
        "loot-roll and the-loop; tabletop synth pieces makes them, 100 designs hold 15 test ones)",
    )
    p.add_argument(
        "--cube-scenes",
        type=int,
        default=200,
        help="vision --game the-loop: board scenes for the cube count (default 200; 0 skips it; --scenes 0 skips the "
        "catalogue cards)",
    )
    p.add_argument(
        "--mission-scenes",
        type=int,
        default=100,
        help="vision --game the-loop: board scenes for the mission spots (tiles and their progress cubes; default "
        "100; 0 skips it)",
    )
    p.add_argument(
        "--board-pieces",
        default="out/pieces/the-loop",
        help="vision --game the-loop: folder of The LOOP's designs whose test boards the cubes are counted on "
        "(tabletop synth pieces --game the-loop --designs 100 --out out/pieces/the-loop: 15 test boards)",
    )
    p.add_argument(
        "--dice-scenes",
        type=int,
        default=200,
        help="vision --game loot-roll: scenes of held-out dice to find and read (default 200; 0 skips them; --scenes "
        "0 skips the catalogue cards)",
    )
    p.add_argument(
        "--dice-clips",
        type=int,
        default=20,
        help="vision --game loot-roll: roll clips read through the rest watcher (default 20; 0 skips them)",
    )
    p.add_argument(
        "--dice-enrol",
        type=int,
        default=3,
        metavar="PLAYERS",
        help="vision --game loot-roll: players whose held-out dice are enrolled (a picture per face) and read with "
        "and without it, 40 scenes each (default 3; 0 skips it)",
    )
    p.add_argument(
        "--dice-pieces",
        default="out/pieces/loot-roll",
        help="vision --game loot-roll: folder of Loot Roll designs whose test tables the dice lie on (tabletop synth "
        "pieces --game loot-roll --designs 20 --out out/pieces/loot-roll)",
    )
    p.add_argument("--out", default="out/bench", help="vision: folder for the JSON and the confusion matrix")
    p.add_argument("--models", metavar="DIR", help="vision: folder with the ONNX models (default: models/)")
    p.add_argument("--baseline", metavar="RUNS", help="vision: training runs folder, to time ultralytics predict too")
    p.add_argument("--enrol-scenes", type=int, default=200, help="vision: scenes for the enrolment test (0: skip)")
    p.add_argument(
        "--enrol-adapt",
        type=float,
        default=0.0,
        metavar="MINUTES",
        help="vision: the enrolment test also fine-tunes the reader on the deck (enrol --adapt; training environment)",
    )
    p.add_argument("--closeups", type=int, default=60, help="vision: phone close-ups of the held-out decks (0: skip)")
    p.add_argument(
        "--split",
        choices=("test", "val"),
        default="test",
        help="vision: held-out families to use (val for tuning thresholds, test for the reported numbers)",
    )
    p.add_argument("--hours", type=float, default=1.0, help="companion: hours of demo play for the memory run (1)")
    p.add_argument("--minutes", type=float, default=60.0, help="soak: minutes of serving the looping demo (60)")
    p.add_argument("--clients", type=int, default=8, help="soak: pages open in the loaded phases (8)")
    p.add_argument(
        "--browsers",
        action="store_true",
        help="soak: the pages are headless Chromium tabs (else clients doing the same)",
    )
    p.add_argument("--kills", type=int, default=200, help="crash: kill -9 rounds, the five games in turn (200)")
    p.add_argument(
        "--games",
        type=int,
        help="loot-the-loop: games per policy (default 1000); hints: deals (500); tracker: games (20)",
    )
    p.add_argument("--policies", help="loot-the-loop: which policies, comma-separated (default planner,solver,random)")
    p.add_argument("--players", type=int, help="hints: players at the table (default: loop 4, bag-o-loot 3, ...)")
    p.add_argument("--workers", type=int, default=1, help="hints: processes playing deals at once (1)")
    p.add_argument("--rollouts", type=int, help="hints: simulated games per hint of the measured seat (64)")
    p.add_argument(
        "--results",
        metavar="FILE",
        help="hints: the per-deal results file, resumed if present (default out/bench/hints-GAME.jsonl)",
    )
    p.add_argument("--seed", type=int, default=None, help="first seed (default 0; vision 3)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from games import GameError
    from vision.threads import one_blas_thread

    parser = build_parser()
    args = parser.parse_args(argv)
    one_blas_thread()  # every command may read frames beside the ONNX graphs (`one_blas_thread` says why)
    try:
        return int(args.func(args) or 0)
    except (CliError, GameError) as err:
        print(f"tabletop {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\nInterrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`tabletop ... | head`): not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
