"""`npu-worker synth` and `npu-worker batch`: the pipeline client from the shell.

Progress goes to stderr (a live bar on a terminal, one line per finished section otherwise), the
summary to stdout. Exit codes: 0 all sections ok, 1 some sections failed, came back with no result, or
the batch was cancelled (DELETE /jobs/{id}) before its end, 2 the request could not be made (worker
unreachable, request refused, unreadable lecture file, an argument no request can carry: `--base
notaurl`, `--speed nan`, a worker answer that breaks the protocol; `batch` then says what became of
its job, if one was queued) or its result could not be written to stdout (a full disk: said on
stderr, with where the wavs are; a stderr that fails only stops the progress lines), 130 interrupted (Ctrl-C): `batch`
cancels its job first (the sections done keep their wavs; waiting while the worker says `Loading`), `synth` hangs up, which stops its synthesis;
143 terminated (SIGTERM), 129 hung up (SIGHUP, unless ignored: `nohup`), each as for Ctrl-C (`cli.main`
raises them in the command as `StartTerminated`); a stop once the job has finished, before, as or after its
result is printed, leaves the work's status, with a line saying so (`stopped_printing`), but `batch --json`
exits 2 until its document is whole on stdout.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from npu_worker.cli import hear_ctrl_c, sigterm_handled_by
from npu_worker.cli_flag_values import language, local_path
from npu_worker.cli_progress import (
    ProgressBar,
    number,
    one_line,
    print_result,
    printable,
    printable_json,
    say,
)
from npu_worker.cli_stops import (
    AnswerStops,
    answer_cut,
    cancel_on_interrupt,
    ended_unfetched,
    left_behind,
    raise_terminated,
    stopped_as,
    stopped_printing,
    unwritten,
)
from npu_worker.client import (
    BASE_ENV,
    DEFAULT_BASE,
    ClientError,
    WorkerHTTPError,
    synth,
    synth_batch_polling,
    synth_batch_streaming,
)
from npu_worker.client.common import check_seconds
from npu_worker.client.errors import AnswerCut, InvalidArgument
from npu_worker.client.retrying import WAIT_LIMIT
from npu_worker.command_line_secrets import (
    TOKEN_ENV,
    add_token_arguments,
    secret_flag_warning,
    secrets_on_command_line,
    token_file_warning,
    token_from,
)
from npu_worker.lecture_file import LECTURE_SHAPE, load_lecture

EXIT_OK, EXIT_SECTIONS_FAILED, EXIT_REQUEST_FAILED = 0, 1, 2


def _add_connection_arguments(parser: argparse.ArgumentParser, lang_default: str) -> None:
    parser.add_argument("--base", default=None, help=f"worker URL [env {BASE_ENV}; default {DEFAULT_BASE}]")
    add_token_arguments(parser)
    parser.add_argument(
        "--lang",
        type=language,
        default=None,
        help=f"language: a code, or a voice name or identifier the worker lists in /health's languages (default: {lang_default})",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="speed factor (default 1.0)")
    parser.add_argument("--ref-wav", default=None, help="reference voice wav on the worker's machine")


def _add_wait_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait-limit",
        type=float,
        default=WAIT_LIMIT,
        help="seconds in a row to wait for a worker that answers 'not now' with a Retry-After"
        f" (loading, compiling for an NPU, its queue full; default {WAIT_LIMIT:g})",
    )


def add_client_commands(subparsers: Any) -> None:
    """Adds `synth` and `batch`; each sets `handler(args) -> exit code` on the parsed namespace."""
    one = subparsers.add_parser("synth", help="synthesise one text into a wav through a running worker")
    one.add_argument("text", help="the text to speak")
    one.add_argument("-o", "--output", required=True, help="wav path to write (absolute or relative)")
    _add_wait_limit(one)
    _add_connection_arguments(one, "ko")
    one.set_defaults(handler=run_synth)

    many = subparsers.add_parser(
        "batch", help="synthesise a lecture JSON, one wav per section, with progress"
    )
    many.add_argument("lecture", help=LECTURE_SHAPE)
    many.add_argument("--out-dir", required=True, help="directory for sNN.wav files")
    many.add_argument("--poll", action="store_true", help="polling mode (?async=1) for buffering networks")
    many.add_argument("--json", action="store_true", help="print the full result as JSON on stdout")
    _add_wait_limit(many)
    many.add_argument(
        "--stall-limit",
        type=float,
        default=None,
        help="give up (exit 2, the job left running) once the job has made no progress for this many"
        " seconds while the worker keeps it running (a hung engine); default: no bound, since an honest"
        " section takes minutes on a CPU and waits its turn behind other batches",
    )
    _add_connection_arguments(many, "the lecture's, else ko")
    many.set_defaults(handler=run_batch)


def _token(args: argparse.Namespace) -> str | None:
    """The token `_take_token` read at the start."""
    token: str | None = args.token_taken
    return token


def _take_token(command: str, args: argparse.Namespace) -> str | None:
    """Once, at the start: the token read (from --token-file, which may be stdin, only once), and a
    warning for a `--token` flag, which is in `ps` for every local user for as long as the command runs
    (a lecture batch: many minutes); NPU_WORKER_TOKEN or --token-file are not. None, or why the token
    cannot be read."""
    for flag in secrets_on_command_line(args):
        warning = secret_flag_warning(
            flag, TOKEN_ENV, runs="the command runs", where=" (or --token-file PATH)"
        )
        say(f"npu-worker {command}: warning: {warning}")
    if (readable := token_file_warning(args.token_file)) is not None:
        say(f"npu-worker {command}: warning: {readable}")
    try:
        args.token_taken = token_from(args)
    except ValueError as exc:
        return str(exc)
    return None


def _token_hint(error: ClientError, args: argparse.Namespace) -> str:
    """A 401 said in the command's terms: the worker's words name a header and a query parameter,
    neither of which a caller of `synth` or `batch` sets (`bench` says so already)."""
    if not (isinstance(error, WorkerHTTPError) and error.error_name == "Unauthorized"):
        return ""
    if _token(args) is None:
        return f"; the worker wants a token: give --token-file PATH or {TOKEN_ENV}"
    return f"; the worker refused the token given: check it (--token-file, {TOKEN_ENV} or --token)"


def _bad_numbers(args: argparse.Namespace) -> str | None:
    """`--speed nan` (or inf) is refused here: JSON has no such number, and json.dumps would send `NaN`.
    `--wait-limit` and `--stall-limit` too, by their flags (`-1` was refused as the client's
    `wait_limit`, a name the caller never typed)."""
    if not math.isfinite(args.speed):
        return f"--speed must be a finite number, not {args.speed}"
    for flag, zero_allowed in (("--wait-limit", True), ("--stall-limit", False)):
        value = getattr(args, flag[2:].replace("-", "_"), None)
        try:
            if value is not None:
                check_seconds(flag, value, zero_allowed)
        except InvalidArgument as exc:
            return str(exc)
    return None


def run_synth(args: argparse.Namespace) -> int:
    hear_ctrl_c()
    if problem := _take_token("synth", args) or _bad_numbers(args):
        say(f"npu-worker synth: {problem}")
        return EXIT_REQUEST_FAILED
    if (output_path := local_path(args.output, "--output")) is None:
        return EXIT_REQUEST_FAILED
    output = str(output_path)  # absolute, links resolved by the worker: see `batch`
    bar = ProgressBar({0: args.text}, sys.stderr)  # it says each wait for a loading worker
    stops = AnswerStops()  # held once the answer is in: the work is done then
    try:
        body = synth(
            args.text,
            output,
            base=args.base,
            lang=args.lang or "ko",
            speed_factor=args.speed,
            ref_wav=args.ref_wav,
            token=_token(args),
            on_progress=bar,
            wait_limit=args.wait_limit,
            on_reading=stops.reading,
        )
    except AnswerCut as exc:  # (it said only what broke, as if nothing was done)
        held = stops.release()  # a stop that cut the answer's read: its word and status
        bar.end_line()
        word, status = stopped_as(held) if held is not None else ("", EXIT_REQUEST_FAILED)
        say(f"npu-worker synth: {word + '; ' if word else ''}{exc}; {answer_cut(output)}")
        return status
    except ClientError as exc:
        stops.release()
        bar.end_line()
        say(f"npu-worker synth: {exc}{_token_hint(exc, args)}")
        return EXIT_REQUEST_FAILED
    except KeyboardInterrupt as stop:  # the connection closes: the worker stops the synthesis (and
        # writes a wav whole under its name or not at all); SIGTERM and SIGHUP too (`main` raises them)
        stops.release()
        bar.end_line()
        word, status = stopped_as(stop)
        say(f"npu-worker synth: {word}")
        return status
    try:  # the answer came, its wav whole on disk or not made: a stop now leaves the work's status
        if (held := stops.release()) is not None:
            bar.end_line()
            raise held  # (one as the client read and decoded the answer, `AnswerStops`)
        return report_synth(body, bar)
    except KeyboardInterrupt as stop:  # (as `batch`; it was 143 just before the print)
        say(stopped_printing("synth", stop, synth_made(body)))
        return EXIT_OK if body.get("status") == "ok" else EXIT_SECTIONS_FAILED


def synth_made(body: dict[str, Any]) -> str:
    if body.get("status") == "ok":
        return f"the wav is {body.get('wav_path')}"
    return f"no wav was made ({body.get('error')})"


def report_synth(body: dict[str, Any], bar: ProgressBar) -> int:
    """A finished synthesis's line on stdout, or its error on stderr, and its exit status."""
    bar.end_line()
    if body.get("status") != "ok":
        say(f"npu-worker synth: {body.get('error')}")
        return EXIT_SECTIONS_FAILED
    duration, elapsed, rtf = (number(body.get(key)) for key in ("duration_sec", "elapsed_sec", "rtf"))
    line = (
        f"{body.get('wav_path')}: {duration:.2f} s of audio in {elapsed:.2f} s"
        f" (RTF {rtf:.3f}, {body.get('engine')} on {body.get('device')})"
    )
    return EXIT_OK if print_finished("synth", one_line(line), synth_made(body)) else EXIT_REQUEST_FAILED


def print_finished(command: str, result: str, made: str) -> bool:
    """A finished job's `result` on stdout; False, said with what was `made`, if it cannot be written."""
    try:
        print_result(result)
    except OSError as exc:
        say(f"npu-worker {command}: {unwritten(exc)}; {made}")
        return False
    return True


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
    if problem := _take_token("batch", args) or _bad_numbers(args):
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
                token=_token(args),
                wait_limit=args.wait_limit,
                stall_limit=args.stall_limit,
            )
    except ClientError as exc:
        bar.end_line()
        say(f"npu-worker batch: {exc}{_token_hint(exc, args)}")
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


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry for the client commands (the `npu-worker` CLI adds them next to `serve`)."""
    parser = argparse.ArgumentParser(prog="npu-worker")
    add_client_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
