"""`npu-worker batch`: a lecture's sections through a running worker's job, one wav each, with
progress on stderr and the summary (or `--json`, the result) on stdout; its exit codes are
`cli_client.py`'s. How it ends when stopped is `cli_stops.py`'s."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from npu_worker.cli import hear_ctrl_c, sigterm_handled_by
from npu_worker.cli_client_flags import (
    EXIT_OK,
    EXIT_REQUEST_FAILED,
    EXIT_SECTIONS_FAILED,
    add_connection_arguments,
    add_wait_limit,
    bad_numbers,
    take_token,
    taken_token,
    token_hint,
)
from npu_worker.cli_flag_values import local_path
from npu_worker.cli_progress import ProgressBar, number, printable_json, say
from npu_worker.cli_stops import (
    AnswerStops,
    cancel_on_interrupt,
    ended_unfetched,
    left_behind,
    print_finished,
    raise_terminated,
    stopped_as,
    stopped_printing,
)
from npu_worker.client import ClientError, synth_batch_polling, synth_batch_streaming
from npu_worker.lecture_file import LECTURE_SHAPE, load_lecture
from npu_worker.worker_words import one_line, printable


def add_batch_command(subparsers: Any) -> None:
    """Adds `batch`, its `handler(args) -> exit code` set on the parsed namespace."""
    many = subparsers.add_parser(
        "batch", help="synthesise a lecture JSON, one wav per section, with progress"
    )
    many.add_argument("lecture", help=LECTURE_SHAPE)
    many.add_argument("--out-dir", required=True, help="directory for sNN.wav files")
    many.add_argument("--poll", action="store_true", help="polling mode (?async=1) for buffering networks")
    many.add_argument("--json", action="store_true", help="print the full result as JSON on stdout")
    add_wait_limit(many)
    many.add_argument(
        "--stall-limit",
        type=float,
        default=None,
        help="give up (exit 2, the job left running) once the job has made no progress for this many"
        " seconds while the worker keeps it running (a hung engine); default: no bound, since an honest"
        " section takes minutes on a CPU and waits its turn behind other batches",
    )
    add_connection_arguments(many, "the lecture's, else ko")
    many.set_defaults(handler=run_batch)


def _name(idx: Any) -> str:
    return f"s{idx:02d}" if isinstance(idx, int) else f"section {idx!r}"


def summary(result: dict[str, Any], wall: float, out_dir: Path) -> str:
    audio = sum(number(s.get("duration_sec")) for s in result["sections"])
    total = result["ok_count"] + result["fail_count"]
    total = result["total"] if isinstance(result.get("total"), int) else total
    lines = [
        f"{result['ok_count']}/{total} sections ok, {result['fail_count']} failed; "
        f"{audio:.1f} s of audio in {wall:.1f} s (RTF {wall / audio if audio else float('nan'):.3f}); "
        f"wavs in {out_dir}"
    ]
    lines += [f"  {_name(e.get('idx'))} failed: {one_line(e.get('error'))}" for e in result["errors"]]
    return "\n".join(lines)


def unreported(result: dict[str, Any], sections: list[dict[str, Any]]) -> list[int]:
    """Sections asked for that came back neither ok nor failed: a worker that lost them."""
    reported = [event.get("idx") for event in result["sections"] + result["errors"]]
    known = {idx for idx in reported if isinstance(idx, int)}
    return sorted(section["idx"] for section in sections if section["idx"] not in known)


def run_batch(args: argparse.Namespace) -> int:
    hear_ctrl_c()
    if problem := take_token("batch", args) or bad_numbers(args):
        say(f"npu-worker batch: {problem}")
        return EXIT_REQUEST_FAILED
    if isinstance(read := _batch_sections(args), int):
        return read
    sections, lecture_lang, out_dir = read
    bar = ProgressBar({s["idx"]: s["text"] for s in sections}, sys.stderr)
    # the stream's loss, or a poll's, is said (a line, then one when re-attached or answered again)
    call = partial(synth_batch_polling if args.poll else synth_batch_streaming, report_stream_lost=True)
    started = time.monotonic()
    stops = AnswerStops()  # held from the job's `done`: its wavs are made then
    try:
        with sigterm_handled_by(raise_terminated), stops:
            result = call(
                sections,
                stops.from_done(bar),
                base=args.base,
                lang=args.lang or lecture_lang or "ko",
                speed_factor=args.speed,
                ref_wav=args.ref_wav,
                token=taken_token(args),
                wait_limit=args.wait_limit,
                stall_limit=args.stall_limit,
            )
    except ClientError as exc:
        bar.end_line()
        say(f"npu-worker batch: {exc}{token_hint(exc, args)}")
        if bar.job_id is not None:
            say(f"npu-worker batch: {left_behind(bar.job_id, exc, bar, out_dir)}")
        return EXIT_REQUEST_FAILED
    except KeyboardInterrupt as stop:
        return _batch_stopped(args, stop, bar, out_dir)
    return _batch_finished(args, (result, sections, time.monotonic() - started, out_dir), stops)


def _batch_sections(args: argparse.Namespace) -> tuple[list[dict[str, Any]], str | None, Path] | int:
    """The lecture's sections, each with its wav under `--out-dir`, and its language; else the exit
    status, the reason said."""
    try:
        sections, lecture_lang = load_lecture(args.lecture)
    except OSError as exc:  # its words alone: str() named the path a second time, after its errno
        say(f"npu-worker batch: cannot read {args.lecture}: {exc.strerror or exc}")
        return EXIT_REQUEST_FAILED
    except ValueError as exc:
        say(f"npu-worker batch: cannot read {args.lecture}: {exc}")
        return EXIT_REQUEST_FAILED
    # Absolute but not resolved: the worker resolves it, refusing a link another user planted on the
    # way (planted_links.py); resolved here, such a link's target reached the worker as a plain path.
    if (out_dir := local_path(args.out_dir, "--out-dir", "batch")) is None:
        return EXIT_REQUEST_FAILED
    for section in sections:
        section["output_path"] = str(out_dir / f"s{section['idx']:02d}.wav")
    return sections, lecture_lang, out_dir


def _batch_stopped(args: argparse.Namespace, stop: KeyboardInterrupt, bar: ProgressBar, out_dir: Path) -> int:
    """A Ctrl-C or SIGTERM while the job ran: the job cancelled (or left, said), and the exit status."""
    # a SIGTERM while cancelling ended the client, the job left running
    with sigterm_handled_by(raise_terminated):
        bar.end_line()
        word, status = stopped_as(stop)
        if (ended := ended_unfetched(bar, word, out_dir)) is not None:  # (`--poll`: no DELETE)
            if args.json:  # nothing on stdout: its exit 0 told a consumer the empty document was whole
                say(f"{ended[0]}; no JSON was printed on stdout")
                return EXIT_REQUEST_FAILED
            say(ended[0])
            return status if ended[1] is None else ended[1]
        say(f"npu-worker batch: {word}; {cancel_on_interrupt(bar.job_id, args, bar)}")
    return status


def _batch_finished(
    args: argparse.Namespace,
    done: tuple[dict[str, Any], list[dict[str, Any]], float, Path],
    stops: AnswerStops,
) -> int:
    """The finished job reported (`done`: result, sections, seconds, out dir); a stop now leaves its
    status (`stopped_printing`)."""
    result, sections, seconds_taken, out_dir = done
    printed = Printed()
    try:
        if stops.held is not None:
            raise stops.held  # (one as the client made its result, `AnswerStops`)
        return report_batch(args, result, sections, seconds_taken, out_dir, printed)
    except KeyboardInterrupt as stop:
        said = stopped_printing("batch", stop, batch_made(result, sections, out_dir), batch_ended(result))
        if args.json and not printed.whole:  # exit 0 told a consumer of stdout a cut document was whole
            say(f"{said}; the JSON on stdout may be cut off")
            return EXIT_REQUEST_FAILED
        say(said)
        return batch_status(result, sections)


@dataclass
class Printed:
    """Whether `report_batch` has put the result on stdout whole: a stop that cuts the report short
    still needs to know (`batch --json` is exit 2 until then)."""

    whole: bool = False


def batch_ended(result: dict[str, Any]) -> str:
    """How a finished job ended, in `stopped_printing`'s words."""
    cancelled = (result.get("done") or {}).get("cancelled")
    return "its job was cancelled before its end" if cancelled else "the work was done"


def batch_made(result: dict[str, Any], sections: list[dict[str, Any]], out_dir: Path) -> str:
    total = result["total"] if isinstance(result.get("total"), int) else len(sections)
    return f"{result.get('ok_count')}/{total} sections ok, their wavs in {out_dir}"


def report_batch(
    args: argparse.Namespace,
    result: dict[str, Any],
    sections: list[dict[str, Any]],
    wall: float,
    out_dir: Path,
    printed: Printed,
) -> int:
    """A finished job's result on stdout (`printed` says once it is whole), what went wrong on
    stderr, and its exit status."""
    made = batch_made(result, sections, out_dir)
    text = printable_json(result) if args.json else printable(summary(result, wall, out_dir))
    if not print_finished("batch", text, made):  # the wavs are made; the caller has no result to read
        return EXIT_REQUEST_FAILED
    printed.whole = True
    if (result.get("done") or {}).get("cancelled"):
        say(f"npu-worker batch: job {result.get('job_id')} was cancelled before its end")
    elif missing := unreported(result, sections):
        names = ", ".join(_name(idx) for idx in missing[:20]) + (", ..." if len(missing) > 20 else "")
        count = f"{len(missing)} section{'s' if len(missing) > 1 else ''}"
        say(f"npu-worker batch: no result for {count}: {names}")
    return batch_status(result, sections)


def batch_status(result: dict[str, Any], sections: list[dict[str, Any]]) -> int:
    """A finished job's exit status: 1 when it was cancelled, a section has no result or one failed
    (the same whether its result was printed whole or a stop cut the printing short)."""
    cancelled = (result.get("done") or {}).get("cancelled")
    failed = cancelled or unreported(result, sections) or result["fail_count"]
    return EXIT_SECTIONS_FAILED if failed else EXIT_OK
