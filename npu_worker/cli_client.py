"""`npu-worker synth` and `npu-worker batch`: the pipeline client from the shell (`synth` here, `batch` in
`cli_batch.py`, the flags both take in `cli_client_flags.py`).

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
import sys
from typing import Any

from npu_worker.cli import hear_ctrl_c
from npu_worker.cli_batch import add_batch_command
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
from npu_worker.cli_progress import ProgressBar, number, say
from npu_worker.cli_stops import AnswerStops, answer_cut, print_finished, stopped_as, stopped_printing
from npu_worker.client import ClientError, synth
from npu_worker.client.errors import AnswerCut
from npu_worker.worker_words import one_line


def add_client_commands(subparsers: Any) -> None:
    """Adds `synth` and `batch`; each sets `handler(args) -> exit code` on the parsed namespace."""
    one = subparsers.add_parser("synth", help="synthesise one text into a wav through a running worker")
    one.add_argument("text", help="the text to speak")
    one.add_argument("-o", "--output", required=True, help="wav path to write (absolute or relative)")
    add_wait_limit(one)
    add_connection_arguments(one, "ko")
    one.set_defaults(handler=run_synth)

    add_batch_command(subparsers)


def run_synth(args: argparse.Namespace) -> int:
    hear_ctrl_c()
    if problem := take_token("synth", args) or bad_numbers(args):
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
            token=taken_token(args),
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
        say(f"npu-worker synth: {exc}{token_hint(exc, args)}")
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


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry for the client commands (the `npu-worker` CLI adds them next to `serve`)."""
    parser = argparse.ArgumentParser(prog="npu-worker")
    add_client_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
