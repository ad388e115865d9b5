"""`tabletop run` and `tabletop demo`: a session, the live pipeline when there is a camera or a recording, the
page's server, and speech, started together and stopped together.

The camera can follow Loot the Loop today; the other four games run in manual mode (the players enter what
happens on the page). Asking the camera to follow one of those says so and starts manual mode instead of
failing: the page is useful either way.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from companion_ui.session import ManualSession, Session, TrackedSession, new_manual, new_tracked
from companion_ui.speech import Speaker
from games import GameError

CAMERA_GAMES = ("loot-the-loop",)


@dataclass
class RunOptions:
    game: str = "loot-the-loop"
    camera: int | None = None
    video: Path | None = None
    manual: bool = False
    players: int | None = None
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    save: Path | None = None
    resume: Path | None = None
    host: str = "127.0.0.1"  # this machine only; another address needs the access token (companion_ui.access)
    token: str | None = None
    port: int = 8000
    speech: bool = True
    rate: int | None = None
    voice: str | None = None
    loop: bool = False
    exit_at_end: bool = False
    duration: float | None = None
    realtime: bool = True
    table_dir: Path | None = None  # where the page's table setup is kept (default: table_setup.default_folder())
    board_dir: Path | None = None  # The LOOP: where the board set up on the page is kept (default: beside the table's)
    mat: Path | None = None  # a printed mat's layout: its markers place the table
    deck: Any = None  # an enrolled deck's head (tabletop enrol): the camera reads the players' own deck with it


@dataclass
class Companion:
    """Everything one run holds; `close` stops it all (the frame loop first, so no event outlives speech)."""

    session: Session
    speaker: Speaker | None
    live: Any = None
    app: Any = None
    closing: threading.Event = field(default_factory=threading.Event)  # set as the server begins to stop

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
        if self.speaker is not None:
            self.speaker.wait_idle(timeout=10)
            self.speaker.close()


def build(opts: RunOptions, notice: Callable[[str], None] = print) -> Companion:
    """Make the session (and the live loop, not yet started) that `opts` asks for; bad requests raise GameError."""
    from companion_ui.server import create_app
    from games import registry

    registry.info(opts.game)  # an unknown game is refused here, with the list
    speaker = Speaker(rate=opts.rate, voice=opts.voice, notice=notice) if opts.speech else None
    watching = opts.camera is not None or opts.video is not None or not opts.manual
    if watching and opts.game not in CAMERA_GAMES:
        if opts.camera is not None or opts.video is not None:
            notice(f"The camera cannot follow {opts.game} yet: starting manual mode (enter what happens on the page).")
        watching = False
    session: Session
    live = None
    table = None
    if watching:
        from companion_ui.live import FrameSource, LiveLoop
        from companion_ui.table_setup import default_folder
        from tracker.replay import make_recognise

        tracked = new_tracked(speaker, _echo, opts.save, opts.resume)
        camera = None if opts.video is not None else (opts.camera or 0)
        source = FrameSource(camera=camera, video=opts.video, realtime=opts.realtime, loop=opts.loop, notice=notice)
        reading = make_recognise(deck=opts.deck) if opts.deck is not None else (None, None)
        live = LiveLoop(source, tracked, *reading)
        table = live.table = open_table(opts.game, opts.table_dir or default_folder(), opts.mat)
        for note in table.notes:
            notice(note)
        session = tracked
    else:
        session = new_manual(opts.game, opts.players, opts.seed, opts.options, speaker, opts.save, opts.resume, _echo)
    board = None
    if opts.game == "the-loop":
        from companion_ui.board_setup import BoardSetup
        from companion_ui.table_setup import default_folder

        board = BoardSetup.open(opts.board_dir or default_folder().parent / "board")
        for note in board.notes:
            notice(note)
    closing = threading.Event()
    app = create_app(session, live, closing.is_set, opts.token, table, board)
    return Companion(session, speaker, live, app, closing)


def open_table(game: str, folder: Path, mat: Path | None) -> Any:
    """The table setup: a printed mat's when given (a bad layout or another game's mat is a GameError naming the
    file), else what the page set up before."""
    from companion_ui.table_setup import SetupError, TableSetup
    from vision.table.mat import LayoutError, load_layout

    if mat is None:
        return TableSetup.open(game, folder)
    try:
        return TableSetup.with_mat(game, folder, load_layout(mat))
    except (LayoutError, SetupError) as err:
        raise GameError(f"--mat {mat}: {err}") from err


def _echo(text: str) -> None:
    print(f"  > {text}", flush=True)


def run(opts: RunOptions) -> int:
    """Serve the page until Ctrl-C (or the end of the recording with `exit_at_end`, or `duration` seconds)."""
    import uvicorn

    from companion_ui.access import is_local, new_token, terminal_qr, with_token
    from companion_ui.server import check_port, page_urls

    check_port(opts.host, opts.port)
    if not is_local(opts.host) and opts.token is None:
        opts = replace(opts, token=new_token())
    companion = build(opts)
    # no access log: a request's query may hold the access token, which must never be written down
    config = uvicorn.Config(
        companion.app, host=opts.host, port=opts.port, log_level="warning", access_log=False, ws="websockets-sansio"
    )
    server = uvicorn.Server(config)
    stop = threading.Event()
    if companion.live is not None:
        if opts.exit_at_end:
            companion.live.on_end = stop.set
        companion.live.start()
    what = companion.session.title + (f" - watching {companion.live.source.name}" if companion.live else " - manual")
    print(f"Tabletop Companion: {what}")
    urls = [with_token(url, opts.token) for url in page_urls(opts.host, opts.port)]
    for url in urls:
        print(f"  open {url}")
    if opts.token:
        print("  anyone on the network needs this link (it holds the access token); a phone can scan it:")
        print(terminal_qr(urls[-1]), end="")
    if isinstance(companion.session, ManualSession):
        print("  enter what happens on the page; announcements are printed here and spoken. Ctrl-C stops.")
    else:
        print("  announcements are printed here and spoken; the page shows the table. Ctrl-C stops.")

    def handle_exit(sig: int, frame: Any) -> None:
        """Ctrl-C or SIGTERM, as uvicorn's own handler, but (1) the page's open streams are told first, so uvicorn
        does not wait on them, and (2) the signal is not raised again once the server is down, which would kill
        the process before the speaker and the recording are closed and the summary printed."""
        companion.closing.set()
        if server.should_exit and sig == signal.SIGINT:
            server.force_exit = True  # a second Ctrl-C
        server.should_exit = True

    server.handle_exit = handle_exit  # type: ignore[method-assign]
    watcher = threading.Thread(target=_stop_when, args=(server, stop, opts.duration, companion.closing), daemon=True)
    watcher.start()
    try:
        server.run()
    finally:
        companion.close()
    if isinstance(companion.session, TrackedSession):
        final = companion.session.decoder_state()
        print(f"Final: {len(final.get('actions', []))} moves read, score {final.get('score', 0)}")
    return 0


def _stop_when(server: Any, stop: threading.Event, duration: float | None, closing: threading.Event) -> None:
    started = time.monotonic()
    while not server.should_exit:
        if stop.wait(0.2):
            time.sleep(1.0)  # the last announcements reach the page and the speaker
            closing.set()
            server.should_exit = True
        elif duration is not None and time.monotonic() - started >= duration:
            closing.set()
            server.should_exit = True


def demo_options(game: str, **kw: Any) -> RunOptions:
    """`tabletop demo`: Loot the Loop on the recorded table shipped with the product; the other games have no
    recording yet, so their demo is manual mode."""
    from companion_ui.live import demo_clip

    if game in CAMERA_GAMES:
        clip = demo_clip()
        if not clip.is_file():
            raise GameError(f"the demo recording is missing ({clip}): reinstall, or run with --video FILE")
        return RunOptions(game=game, video=clip, **kw)
    return RunOptions(game=game, manual=True, **kw)
