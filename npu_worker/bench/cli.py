"""`npu-worker bench`: run the open-loop TTFA benchmark against a running worker and record it."""

from __future__ import annotations

import argparse
import datetime as dt
import errno
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

from npu_worker.bench import COMMAND_HELP
from npu_worker.bench.fragments import (
    FragmentConfig,
    fragments_markdown,
    run_fragments,
    stopped_fragments,
)
from npu_worker.bench.interrupted import RunSoFar, run_stoppable, stops_ignored_once_stopped
from npu_worker.bench.load import (
    MAX_REQUESTS,
    AccessRefused,
    LanguageRefused,
    LoadConfig,
    NotAWorker,
    TargetNotAllowed,
    run_failed,
    run_load,
)
from npu_worker.bench.mode_flags import flag_of_the_other_mode, mode_defaults, transport_names
from npu_worker.bench.report import (
    PLOT_HINT,
    build_report,
    load_average,
    machine_info,
    markdown,
    write_report,
)
from npu_worker.bench.report_files import (
    check_folder_ours,
    check_not_someone_elses,
    output_prefix,
    write_file,
)
from npu_worker.bench.texts_file import DEFAULT_TEXTS, load_texts, read_baseline
from npu_worker.bench.wav_folder import wav_dir_problem
from npu_worker.cli_flag_values import home_folder, home_path, language
from npu_worker.cli_progress import printable_json
from npu_worker.client.common import BASE_ENV, DEFAULT_BASE, resolve_base
from npu_worker.command_line_secrets import (
    TOKEN_ENV,
    add_token_arguments,
    secret_flag_warning,
    secrets_on_command_line,
    token_file_warning,
    token_from,
    without_secrets,
)
from npu_worker.printable import printable_lines


def tell(line: str) -> None:
    """A line on stderr, the worker's words in it escaped: a server on the port runs nothing in the
    terminal (`\x1b]0;...` retitled it, `\x1b[2J` cleared it)."""
    print(printable_lines(line), file=sys.stderr, flush=True)


def check_writable(prefix: Path, suffixes: tuple[str, ...], inputs: tuple[Path | None, ...] = ()) -> None:
    """OSError unless PREFIX.<suffix> can be written: checked before the run, not found out after
    minutes of it (`--out /proc/nope/x`), nor one of the run's `inputs` (`--texts run.json --out run`
    replaced the texts with the report). Makes the folder, as writing the results would; refuses one
    another user owns or could re-point (`--out /tmp/b/run`, /tmp/b their link to a folder of ours: the
    reports replaced our run.json there), as `--wav-dir` is."""
    check_folder_ours(prefix.parent)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=prefix.parent):
        pass
    for suffix in suffixes:
        path = Path(f"{prefix}{suffix}")
        if path.exists() and any(i is not None and i.exists() and path.samefile(i) for i in inputs):
            raise PermissionError(errno.EEXIST, "is an input of this run: not written over", str(path))
        check_not_someone_elses(path)
        if path.exists() and not (path.is_file() and os.access(path, os.W_OK)):
            raise PermissionError(errno.EACCES, "cannot be written over", str(path))


def _unwritable(prefix: Path, suffixes: tuple[str, ...], inputs: tuple[Path | None, ...] = ()) -> str | None:
    try:
        check_writable(prefix, suffixes, inputs)
    except OSError as exc:
        where = exc.filename or prefix.parent
        return f"cannot write the results to {prefix}.*: {where}: {exc.strerror or exc}"
    return None


def add_bench_command(subparsers: Any) -> None:
    """Adds `bench`; sets `handler(args) -> exit code` like the other subcommands."""
    p = subparsers.add_parser(
        "bench",
        help=COMMAND_HELP,
        description="Poisson arrivals at each rate over /ws and HTTP /synth; writes PREFIX.json/.md/.png.",
    )
    _add_offered_arguments(p)
    _add_sent_arguments(p)
    add_token_arguments(p)
    p.add_argument(
        "--wav-dir",
        type=home_folder,
        default=None,
        help="directory the worker writes the /synth wavs in, each removed once measured (an allowed root,"
        " made if missing; default: temp)",
    )
    p.set_defaults(handler=run_bench_command, mode_defaults=mode_defaults(p))


def _add_offered_arguments(p: argparse.ArgumentParser) -> None:
    """What the run offers the worker: where, how fast and how long, in which mode, over which route."""
    p.add_argument(
        "--base", default=None, help=f"worker URL, loopback only [env {BASE_ENV}; default {DEFAULT_BASE}]"
    )
    p.add_argument("--rps", default="0.5,1,2,4", help="offered loads in requests/s, comma-separated")
    p.add_argument("--duration", type=float, default=20.0, help="seconds of arrivals per rate and transport")
    p.add_argument(
        "--requests", type=int, default=40, help="at most this many requests per rate and transport"
    )
    p.add_argument(
        "--mode",
        choices=("load", "fragments"),
        default="load",
        help="load: open-loop arrivals; fragments: each text streamed in like LLM tokens over "
        "WS /v1/audio/speech/stream, one at a time (TTFA from the first sentence's last fragment)",
    )
    p.add_argument("--fragment-chars", type=int, default=3, help="fragments mode: characters per fragment")
    p.add_argument(
        "--fragment-interval-ms", type=float, default=30.0, help="fragments mode: ms between fragments"
    )
    p.add_argument(
        "--transports",
        default="ws,http",
        help="ws, http, or both: ws,http (also written `both`; the default)",
    )


def _add_sent_arguments(p: argparse.ArgumentParser) -> None:
    """What each request says and waits for, and where the run's results and notes go."""
    p.add_argument(
        "--texts", type=home_path, default=DEFAULT_TEXTS, help="lecture JSON or texts (default: 39 slides)"
    )
    p.add_argument(
        "--lang",
        type=language,
        default=None,
        help="language: a code, or a voice name or identifier the worker lists in /health's languages (default: the texts file's, else ko)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="per-request timeout in seconds")
    p.add_argument("--seed", type=int, default=1, help="seed of arrivals and text choice")
    p.add_argument(
        "--out",
        type=output_prefix,
        default=None,
        help="output prefix (default benchmarks/load/<backend>-<time>)",
    )
    p.add_argument(
        "--engine-baseline", type=home_path, default=None, help="JSON of the engine's own first-chunk times"
    )
    p.add_argument(
        "--note", default=None, help="free text recorded with the results (e.g. 'shared 2-core VM')"
    )


def _rates(text: str) -> tuple[float, ...]:
    """`--rps`: requests/s, comma-separated (the range is LoadConfig's to check); an empty item, as in
    `1,,2` or `1,2,`, refused with the rest: it was skipped without a word, a rate mistyped away."""
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"--rps takes requests/s separated by commas, not {text!r}") from None


def _config(args: argparse.Namespace) -> LoadConfig:
    texts, lang = load_texts(args.texts)
    return LoadConfig(
        base=resolve_base(args.base),
        rates=_rates(args.rps),
        texts=texts,
        transports=transport_names(args.transports),
        duration=args.duration,
        max_requests=args.requests,
        timeout=args.timeout,
        lang=args.lang or lang or "ko",
        seed=args.seed,
        token=token_from(args),
        wav_dir=args.wav_dir,
    )


def language_refused(exc: LanguageRefused, args: argparse.Namespace) -> str:
    """The refusal naming where the language came from: `--lang`, else the texts file's `lang` (it
    said "--lang zz" to a caller who passed no --lang), else --lang's default."""
    if args.lang:
        return str(exc)
    _, file_lang = load_texts(args.texts)  # read once already: an error now is no new one
    where = f'the "lang" of {args.texts}; --lang picks another' if file_lang else "--lang's default"
    return f"the worker does not speak {exc.lang} ({where}): {exc.said}"


def file_label(backend: Any) -> str:
    """/health's `backend` as the start of a report's file name: letters, digits, `.`, `_` and `-` only,
    so a worker (or whatever listens on its port) never picks the folder the report goes to."""
    label = re.sub(r"[^A-Za-z0-9._-]", "_", backend if isinstance(backend, str) else "")[:40]
    return label.lstrip(".") or "worker"


# What the worker can answer that ends a run before it measures anything: each said in one line, exit 2.
RUN_REFUSALS = (LanguageRefused, NotAWorker, AccessRefused, OSError, aiohttp.ClientError)


def _run_refused(exc: BaseException, args: argparse.Namespace, base: str) -> int:
    """Says why the worker at `base` gave no run (a language it does not speak, no worker there, a token
    refused, no answer at all); exit 2."""
    if isinstance(exc, LanguageRefused):
        tell(f"npu-worker bench: {language_refused(exc, args)}")
    elif isinstance(exc, NotAWorker | AccessRefused):
        tell(f"npu-worker bench: {exc}")
    else:
        tell(f"npu-worker bench: cannot reach {base}: {exc}")
    return 2


def _fragment_config(args: argparse.Namespace) -> FragmentConfig:
    """Fragments mode's run, from its flags and texts file; ValueError or OSError says what is wrong."""
    texts, lang = load_texts(args.texts)
    if not 0 < args.requests <= MAX_REQUESTS:  # texts[:-5] sent all but the last 5
        raise ValueError(f"--requests must be in (0, {MAX_REQUESTS}]")
    return FragmentConfig(
        base=resolve_base(args.base),  # as the load mode: no user:password@, a port that is a number
        texts=texts[: args.requests],
        chars=args.fragment_chars,
        interval=args.fragment_interval_ms / 1000.0,
        lang=args.lang or lang or "ko",
        timeout=args.timeout,
        token=token_from(args),
    )


def run_fragments_command(args: argparse.Namespace, command: str) -> int:
    try:
        config = _fragment_config(args)
    except (TargetNotAllowed, ValueError, OSError) as exc:
        tell(f"npu-worker bench: {exc}")
        return 2
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    if problem := _unwritable(
        args.out or Path("benchmarks/fragments") / "x", (".json", ".md"), (args.texts,)
    ):
        tell(f"npu-worker bench: {problem}")
        return 2
    so_far: dict[str, Any] = {}
    stopped = None
    try:
        result = run_stoppable(run_fragments(config, say=tell, so_far=so_far))
    except RUN_REFUSALS as exc:
        return _run_refused(exc, args, config.base)
    except KeyboardInterrupt as exc:  # (SIGTERM, SIGHUP too): the texts measured are written, as the load's
        if not so_far.get("records"):  # no text had ended: a record of nothing replaced an earlier one
            raise
        stopped, result = exc, stopped_fragments(config, so_far, exc)
    result = {"command": command, "started_at": started, "machine": machine_info(args.note), **result}
    _write_fragments_record(result, args.out, command, started, stopped)
    if stopped is not None:  # `main` says it, with 128 + the signal's number
        raise stopped
    if failed := run_failed(result["health"], result["health_after"], result["records"]):
        tell(f"npu-worker bench: {failed}")  # (a worker that died: it was exit 1 with no line saying so)
    return 0 if result["summary"]["errors"] == 0 and failed is None else 1


def _write_fragments_record(
    result: dict[str, Any], out: Path | None, command: str, started: str, stopped: KeyboardInterrupt | None
) -> None:
    """PREFIX.json and PREFIX.md of a fragments run, whole even under a second stop; the markdown shown."""
    backend = file_label(result["health"].get("backend"))
    prefix = out or Path("benchmarks/fragments") / f"{backend}-{started[:19].replace(':', '')}"
    prefix.parent.mkdir(parents=True, exist_ok=True)
    text = fragments_markdown(result, command)
    with stops_ignored_once_stopped(stopped):
        write_file(Path(f"{prefix}.json"), printable_json(result).encode("utf-8"))
        write_file(Path(f"{prefix}.md"), text.encode("utf-8"))
    print(text)
    tell(f"written: {prefix}.json, {prefix}.md")


def _warn_of_secrets(args: argparse.Namespace) -> None:
    """A token given on the command line (any user sees it in `ps`), or a token file others can read."""
    for flag in secrets_on_command_line(args):
        warning = secret_flag_warning(
            flag, TOKEN_ENV, runs="the command runs", where=" (or --token-file PATH)"
        )
        tell(f"npu-worker bench: warning: {warning}")
    if (readable := token_file_warning(args.token_file)) is not None:
        tell(f"npu-worker bench: warning: {readable}")


def _load_problem(args: argparse.Namespace) -> str | None:
    """Why the load run's results or its wavs could not be written, found before the run begins."""
    inputs = (args.texts, args.engine_baseline)
    problem = _unwritable(args.out or Path("benchmarks/load") / "x", (".json", ".md", ".png"), inputs)
    if problem is None and args.wav_dir:  # else its OSError would read as the worker's, after the run began
        problem = wav_dir_problem(args.wav_dir)
    return problem


def run_bench_command(args: argparse.Namespace) -> int:
    argv = getattr(args, "argv", None)
    # recorded with the figures, which are published: never the token itself
    command = shlex.join(["npu-worker", *without_secrets(sys.argv[1:] if argv is None else argv, args)])
    _warn_of_secrets(args)
    if (ignored := flag_of_the_other_mode(args)) is not None:
        tell(f"npu-worker bench: {ignored}")
        return 2
    if args.mode == "fragments":
        return run_fragments_command(args, command)
    try:
        config = _config(args)
        baseline = read_baseline(args.engine_baseline, config.texts) if args.engine_baseline else None
    except (TargetNotAllowed, ValueError, OSError) as exc:
        tell(f"npu-worker bench: {exc}")
        return 2
    if problem := _load_problem(args):
        tell(f"npu-worker bench: {problem}")
        return 2
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    load_at_start = load_average()
    so_far, stopped = RunSoFar(), None
    try:
        result = run_stoppable(run_load(config, say=tell, so_far=so_far))
    except RUN_REFUSALS as exc:
        return _run_refused(exc, args, config.base)
    except KeyboardInterrupt as exc:  # (SIGTERM, SIGHUP too): what was measured is written, then it ends
        if not so_far.ended:  # no request had ended: a report of nothing replaced an earlier one
            raise
        stopped, result = exc, so_far.result()
    report = build_report(result, config, command, started, baseline, args.note, load_at_start)
    report["interrupted"] = so_far.why_partial(stopped) if stopped is not None else None
    _write_load_report(report, args.out, started, stopped)
    if stopped is not None:  # `main` says it, with 128 + the signal's number
        raise stopped
    # a benchmark of nothing, or a dead worker's figures, is no success
    if failed := run_failed(report["health"], report["health_after"], report["records"]):
        tell(f"npu-worker bench: {failed}")
        return 1
    return 0


def _write_load_report(
    report: dict[str, Any], out: Path | None, started: str, stopped: KeyboardInterrupt | None
) -> None:
    """PREFIX.json, .md and (with matplotlib) .png of a load run, whole even under a second stop."""
    backend = file_label(report["health"].get("backend"))
    prefix = out or Path("benchmarks/load") / f"{backend}-{started[:19].replace(':', '')}"
    with stops_ignored_once_stopped(stopped):
        paths = write_report(report, prefix)
    print(markdown(report))
    tell("written: " + ", ".join(map(str, paths)))
    if not any(path.suffix == ".png" for path in paths):
        tell(PLOT_HINT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="npu-worker")
    add_bench_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
