"""`npu-worker serve|synth|batch|bench|make-test-model|prepare` — the command line entry point."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__, start_collector
from .held_signals import (
    StartTerminated,
    how_stopped,
    signals_handled_by,
    start_stops_heard,
    stops_dropped,
    stops_ignored_to_the_end,
    stops_let_through,
)

if TYPE_CHECKING:
    from .config import Settings

SHUTDOWN_TIMEOUT = 2.0  # seconds open connections get after the drain


def serve(args: argparse.Namespace) -> int:
    """Ctrl-C before the server listens (its modules importing, the app being built: about half a
    second, before `run` hears SIGINT itself) is one line and 130, as while the command line is read:
    it was a KeyboardInterrupt traceback. A SIGTERM then is one line and 143: it ended the worker at
    once (-15), the espeak child started early left to end on its own, where a SIGTERM once `run`
    hears it is a drain. A SIGHUP then (a closed terminal, a supervisor's stop) is one line and 129
    the same way: it ended the worker at once (-1), with no word of why."""
    listening: list[bool] = []  # once `run` is called: its own SIGINT handling takes over
    try:
        with start_stops_heard():
            return _serve(args, listening)
    except StartTerminated as ended:  # only before `run` takes the signal (then it drains)
        return stopped_before_it_began(ended, "serve")
    except KeyboardInterrupt:
        if listening:
            raise
        return interrupted_before_it_began("serve")


def sigterm_handled_by(handler: Callable[[int, Any], None]) -> contextlib.AbstractContextManager[None]:
    """SIGTERM goes to `handler` meanwhile: the client commands (`cli_stops.raise_terminated`)."""
    return signals_handled_by(handler, (signal.SIGTERM,))


def _serve(args: argparse.Namespace, listening: list[bool]) -> int:
    from .config_sources import load_settings, named_as_given

    try:
        settings = load_settings(args)
    except SystemExit as exc:  # a setting from the environment (or two that cannot go together)
        return _refused(str(exc.code), 2)
    if settings.queue != "local" and (unusable := queue_refusal(settings.queue)) is not None:
        return _refused(named_as_given(unusable, args), 1)  # the queue's machine, or this one's packages
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    state_dir = settings.resolved_state_dir()
    # Let go whatever ends the command (a Ctrl-C or SIGTERM during the imports below too): the state
    # dir, and an espeak child started early that no engine took (it ran on after the worker's end)
    with contextlib.ExitStack() as held:
        refusal = hold_state_dir(state_dir, held)
        if refusal is not None:
            return refusal
        loads_an_engine = settings.queue == "local" or settings.role != "api"
        if settings.backend == "espeak" and settings.espeak_process and loads_an_engine:
            # its start overlaps the imports below (a ready /health waited for one, then the other)
            from .engine import espeak_early

            espeak_early.start_early()
            held.callback(espeak_early.discard)  # one no engine took (a start refused below)
        return _serve_holding(args, settings, state_dir, listening)


def hold_state_dir(state_dir: Path, held: contextlib.ExitStack) -> int | None:
    """Make the state dir and hold its lock for `held`'s life; the refusal's exit status if not."""
    from .folder_lock import kept_from_earlier_workers, locked_directory
    from .state_dir import make_private_dir

    try:
        make_private_dir(state_dir)
        # One worker per state dir: two would resume the same interrupted jobs into one log.
        held.enter_context(locked_directory(state_dir, wait=False))
        held.enter_context(kept_from_earlier_workers(state_dir))  # (a rolling upgrade's)
    except BlockingIOError:
        return _refused(
            f"the state directory {state_dir} is in use by another npu-worker serve "
            "(each worker, and each node of a cluster, needs its own --state-dir)",
            1,
        )
    except OSError as exc:
        return _refused(f"cannot use the state directory {state_dir}: {exc.strerror or exc}", 1)
    return None


def _serve_holding(
    args: argparse.Namespace, settings: Settings, state_dir: Path, listening: list[bool]
) -> int:
    """The rest of `serve`, with the state dir held: its modules, the start's warnings, the app, `run`."""
    from .app import build_app
    from .config_sources import named_as_given
    from .engine_options import check_engine_settings
    from .serve_warnings import warn_at_start
    from .server import ListenFailed, run

    try:  # a setting that cannot work: its one line alone, before the start's (nothing is loaded yet)
        check_engine_settings(settings)
        app = build_app(settings)  # checks what needs the others too (a chunk under one sample)
    except ValueError as exc:  # each setting named as it was given: flag or env var
        return _refused(named_as_given(str(exc), args), 2)
    logging.getLogger("npu_worker").info(
        "npu-worker %s: backend %s, state dir %s, starting on http://%s%s",
        __version__,
        settings.backend,
        state_dir,
        settings.host,
        # `:0` named a port no one listens on: `server.listen` says the one chosen once it is bound
        f":{settings.port}" if settings.port else ", on the port the system chooses (said once it listens)",
    )
    warn_at_start(args, settings)
    # After the running section is drained (app on_shutdown), streams of work that will not progress any
    # more are closed within SHUTDOWN_TIMEOUT; their clients re-attach after the restart.
    start_collector.let_go(keep_start_objects=True)  # the app built: the start's heap frozen, then on
    try:
        listening.append(True)
        run(app, settings, shutdown_timeout=SHUTDOWN_TIMEOUT)
    except ListenFailed as exc:
        return _refused(str(exc), 1)
    logging.getLogger("npu_worker").info("npu-worker stopped")
    return 0


def _refused(reason: str, status: int) -> int:
    """`serve` cannot start: one line on stderr (a setting: 2, the machine: 1), no traceback."""
    print(f"npu-worker serve: {reason}", file=sys.stderr)
    return status


def queue_refusal(url: str) -> str | None:
    """Why a Redis queue cannot be used, or None: a clear start-up error, not a worker that hangs later
    (said as `serve`'s other refusals are: they said `npu-worker:`, or nothing, first)."""
    from .config_values import shown_url

    try:
        from .jobs.cluster.connect import ping_queue
    except ImportError as exc:
        return f"--queue {shown_url(url)} needs the redis package: pip install '.[redis]' in the npu-worker checkout ({exc})"
    problem = ping_queue(url)
    return None if problem is None else f"cannot use the queue {shown_url(url)}: {problem}"


class CommandParser(argparse.ArgumentParser):
    """argparse's parser; with `one_line=True` (serve) a flag it refuses, an unknown one included, is one
    line on stderr and exit status 2, as a refused env var is, not argparse's usage of 50 flags first."""

    def __init__(self, *args: Any, one_line: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.one_line = one_line
        self.unavailable: str | None = None  # why the command cannot run here (its package is missing)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.unavailable is not None:  # its options come with that package: said before they are read
            self.exit(1, f"{self.prog}: {self.unavailable}\n")
        parsed, extras = super().parse_known_args(args, namespace)
        if self.one_line and extras:  # else the top-level parser would say so, after its usage
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        if not self.one_line:
            super().error(message)
        self.exit(2, f"{self.prog}: {message}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line; `argv` only decides which commands' modules load: for `serve`, its own alone
    (the others' modules, the benchmark's above all, took ≈ 0.2 s of a start before /health answered;
    benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 50), and bench's, prepare's and make-test-model's
    options only for that command. No `argv`: every command whole, for a caller that parses later."""
    # (aiohttp, msgspec, the client: imported here, where `main` hears a Ctrl-C, not when cli.py loads)
    from .config_sources import add_settings_arguments

    parser = argparse.ArgumentParser(prog="npu-worker", description="Streaming text-to-speech worker.")
    parser.add_argument("--version", action="version", version=f"npu-worker {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=CommandParser)
    serve_parser = commands.add_parser(
        "serve",
        one_line=True,
        help="run the worker (HTTP/NDJSON + WebSocket + player page)",
        description="Run the worker. Every flag has an NPU_WORKER_* environment equivalent; flags win.",
    )
    add_settings_arguments(serve_parser)
    serve_parser.set_defaults(handler=serve, hears_stops=True)  # (`start_stops_heard` first thing)
    if argv is None or list(argv[:1]) != ["serve"]:  # (`-h serve` lists every command)
        add_other_commands(commands, argv)
    return parser


def command_word(argv: Sequence[str]) -> str | None:
    """The command `argv` names: its first word that is not an option (the top level's options,
    `--help` and `--version`, take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def add_other_commands(commands: argparse._SubParsersAction, argv: Sequence[str] | None) -> None:
    """Every command but `serve`, with the modules they need: all of them with no `argv` (a parser built
    with none gave bench, prepare and make-test-model their help line alone, and refused their options)."""
    from .cli_client import add_client_commands
    from .cli_prepare import add_prepare_command

    def named(command: str) -> bool:
        return argv is None or command in argv

    add_client_commands(commands)
    add_bench_command(commands, full=named("bench"))
    add_make_test_model_command(commands, full=named("make-test-model"))
    add_prepare_command(commands, full=named("prepare"))


def add_bench_command(commands: argparse._SubParsersAction, full: bool) -> None:
    """`bench`, its options and modules (aiohttp, numpy) only when it is the command (`full`): every
    `synth`, `batch` and `prepare` imported them, most of the CPU the command line took to start."""
    if full:
        from .bench.cli import add_bench_command as add_full_bench_command

        add_full_bench_command(commands)
        return
    from .bench import COMMAND_HELP

    commands.add_parser("bench", help=COMMAND_HELP)


def add_make_test_model_command(commands: argparse._SubParsersAction, full: bool) -> None:
    """A synthetic ZipVoice model directory (tests, benchmarks); needs `onnx` (the test/bench extras).

    Its options come with its module, and importing that (onnx) takes about a second: only when it is
    the command (`full`), so `serve` answers /health without paying for it."""
    parser = commands.add_parser(
        "make-test-model",
        help="write a synthetic ZipVoice ONNX model directory (tiny for tests, full for speed)",
    )
    if not full:
        return
    try:
        from .testing import make_test_model
    except ImportError as exc:  # onnx is not a runtime dependency; without its options, the README's
        # `make-test-model DIR --size tiny` was refused as "unrecognized arguments", the reason unsaid
        parser.unavailable = (
            f"needs the `onnx` package: pip install '.[bench]' in the npu-worker checkout ({exc})"
        )
        return
    make_test_model.add_arguments(parser)
    parser.set_defaults(handler=make_test_model.run)


def hear_ctrl_c() -> None:
    """Ctrl-C (SIGINT) interrupts, however we were started: a non-interactive shell starts a background
    command (`cmd &`) with SIGINT ignored, and Python then keeps it ignored, so `kill -INT` did nothing
    (a batch's job was never cancelled; a `serve` not yet listening ran on). In the main thread only
    (only it may set a handler)."""
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: Sequence[str] | None = None) -> int:
    """A SIGTERM or SIGHUP while the command line is read is one line, as a Ctrl-C is: it ended the
    process at once with no word (-15, -1), where the command itself says `terminated` or `hung up`.
    `serve` and `prepare` run inside, handed the signals with no moment on the default action; the
    client commands (`synth`, `batch`, `bench`) run with them raised as a Ctrl-C is (`synth` ended
    at -15 with no word, `batch` while it read its lecture), one that none of them says is said here,
    `terminated` and 143 (a Ctrl-C there was a traceback through `main`). Once the command has
    returned, a stop is dropped: its exit status stands (it became 143 or 129 with no line)."""
    hear_ctrl_c()  # before the commands' modules load: a `kill -INT` meanwhile is heard too
    argv_given = argv is not None
    argv = sys.argv[1:] if argv is None else list(argv)
    if command_word(argv) == "serve":  # its modules and app made without collections (`run` lets go)
        start_collector.hold()
    running: list[str] = []  # the command, once its handler is called
    returned: Any = running  # what the handler returned, once it has (stored with no check between)
    try:  # the commands' modules load here, not when cli.py does: a Ctrl-C meanwhile is heard
        with start_stops_heard() as hand_over:
            args = build_parser(argv).parse_args(argv)
            if getattr(args, "hears_stops", False):  # (`start_stops_heard` first thing)
                hand_over()
            running.append(args.command)
            returned = args.handler(args)
            stops_dropped()  # (blocked before the handlers before are put back)
    except KeyboardInterrupt as stopped:  # (it was a traceback through the import machinery)
        if returned is not running:  # a stop as the command ended: dropped, as one after it is
            stops_dropped()
            return _status_kept(int(returned or 0), argv_given)
        if running:  # one the command did not say itself
            word, status = how_stopped(stopped)
            stderr_line(f"npu-worker {running[0]}: {word}")
            return status
        return stopped_before_it_began(stopped, command_word(argv) or "")
    finally:  # a start refused or stopped before it served: the collector on, nothing frozen
        start_collector.let_go(keep_start_objects=False)
    return _status_kept(int(returned or 0), argv_given)


def _status_kept(status: int, argv_given: bool) -> int:
    """`status`, the stops still blocked, and ignored, if the process ends with it (the console
    script: no `argv` given), else let through again for a caller that goes on."""
    if argv_given:
        stops_let_through()
    else:
        stops_ignored_to_the_end()
    return status


def interrupted_before_it_began(command: str) -> int:
    """The line and exit status of a Ctrl-C that came before `command` did anything."""
    return stopped_before_it_began(KeyboardInterrupt(), command)


def stopped_before_it_began(stopped: KeyboardInterrupt, command: str) -> int:
    """The line and exit status (128 + the signal's number) of the Ctrl-C, SIGHUP or SIGTERM (`stopped`)
    that came before `command` did anything."""
    word, status = how_stopped(stopped)
    stderr_line(f"npu-worker {command}".rstrip() + f": {word} before it began: nothing was done")
    return status


def stderr_line(line: str) -> None:
    """`line` on stderr; one that cannot be written (a closed terminal: EIO; its reader gone: EPIPE) is
    lost, not the exit status: a SIGHUP's 129 was 1 (the OSError's traceback, which no one saw either)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:  # the interpreter's own last flush of it would fail too (exit status 120)
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - it lives as long as the process


if __name__ == "__main__":
    sys.exit(main())
