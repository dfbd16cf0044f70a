"""How `synth` and `batch` end when stopped: Ctrl-C, SIGTERM (`Terminated`) or SIGHUP, the cancel of
`batch`'s job that goes with it, and the lines of a job left behind, an answer cut off, or a result
stdout cannot take. Apart from `cli_client.py` and `cli_batch.py`, which run the commands, so each file
keeps one job."""

from __future__ import annotations

import argparse
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from npu_worker.cli_progress import ProgressBar, print_result, say
from npu_worker.client import ClientError, WorkerHTTPError, cancel_job
from npu_worker.client.collector import ProgressCallback
from npu_worker.held_signals import STOPPING, StartTerminated, how_stopped

EXIT_TERMINATED = 143  # 128 + SIGTERM
# coreutils `timeout` sends its SIGTERM twice, to the client and to its process group: a repeat this soon
# is that same stop, not a second one (which would leave the job running)
REPEATED_SIGTERM_SECONDS = 1.0
SECTIONS_NAMED = 20  # a job given up on names its ok sections up to this many, then counts the rest


class Terminated(KeyboardInterrupt):
    """SIGTERM (`timeout`, a service manager stopping the caller) ends `batch` as Ctrl-C does."""


def stopped_as(stop: KeyboardInterrupt) -> tuple[str, int]:
    """The word and exit status for what stopped a client command: Ctrl-C, SIGTERM (`Terminated`, or
    `main`'s `StartTerminated`) or SIGHUP (a SIGHUP ended `batch` at once with no word, -1)."""
    return ("terminated", EXIT_TERMINATED) if isinstance(stop, Terminated) else how_stopped(stop)


_sigterm_at: list[float] = []  # when the SIGTERM that stopped the batch came


def raise_terminated(signum: int, frame: Any) -> None:
    """SIGTERM's handler while a client command waits on the worker: `Terminated`, but not for
    timeout(1)'s second copy of one."""
    if _sigterm_at and time.monotonic() - _sigterm_at[-1] < REPEATED_SIGTERM_SECONDS:
        return  # timeout(1)'s second copy: the cancel it asked for goes on
    _sigterm_at.append(time.monotonic())
    raise Terminated


class AnswerStops:
    """`synth`'s stops once the worker's answer has begun (`reading`, the client's `on_reading`): the
    work is done, so a Ctrl-C, SIGTERM or SIGHUP from then until `release` is remembered, not raised,
    and cuts the answer's read if it is still under way (`cut`: a stalled answer never holds a stop);
    the command says it as for a stop while it prints (the work's status), or, the answer cut, with
    the stop's status. Raised, it unwound the client before the command had the answer: `terminated`
    and 143 for a wav whole on disk; held from the answer read whole (`on_answer`), a stop in the
    instant before did so still. Until then a stop ends the wait at once; an ignored one (`nohup`)
    stays ignored; off the main thread, no hold.
    `batch` holds them from its job's `done` (`from_done`) for the `with` block around the client
    (`held` after it): a stop as the client made its result was 143 and a DELETE of the ended job."""

    def __init__(self) -> None:
        self.came: list[int] = []
        self._before: dict[int, Any] = {}
        self.held: KeyboardInterrupt | None = None
        self.cut: Callable[[], None] | None = None

    def __enter__(self) -> AnswerStops:
        return self

    def __exit__(self, *exc: object) -> None:
        self.held = self.release()  # (before an outer block puts its own SIGTERM handler back)

    def from_done(self, progress: ProgressCallback) -> ProgressCallback:
        """`progress`, the stops held once it has been told the job's `done` (its wavs are made): not
        while it writes that line, which a stalled stderr would hold for ever with no stop heard."""

        def told(idx: int, event: dict[str, Any]) -> Any:
            answer = progress(idx, event)
            if event.get("event") == "done":
                self.hold()
            return answer

        return told

    def reading(self, cut: Callable[[], None]) -> None:
        """`hold`, a stop from now on also calling `cut` (the answer's read ends at once)."""
        self.cut = cut
        self.hold()

    def hold(self) -> None:
        if threading.current_thread() is not threading.main_thread() or self._before:
            return
        for signum in STOPPING:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self._before[signum] = signal.signal(signum, self._remember)

    def _remember(self, signum: int, frame: Any) -> None:
        self.came.append(signum)
        if self.cut is not None:
            self.cut()

    def release(self) -> KeyboardInterrupt | None:
        """The handlers before are back; the first stop held, as the exception it would have raised."""
        for signum, before in self._before.items():
            signal.signal(signum, before)
        self._before.clear()
        self.cut = None
        if not self.came:
            return None
        signum = self.came[0]
        return KeyboardInterrupt() if signum == signal.SIGINT else StartTerminated(signum)


def cancel_on_interrupt(job_id: str | None, args: argparse.Namespace, bar: ProgressBar | None = None) -> str:
    """Ctrl-C stops the batch, not only its progress display (a dropped stream leaves a job running):
    DELETE its job, waiting while the worker asks to (a restarted worker loads: `Loading` until then;
    each wait a line on `bar`, the first saying that Ctrl-C again leaves the job running). Returns
    what became of it, in words."""
    if job_id is None:
        return "the worker had named no job yet (GET /jobs lists it if it queued the batch)"
    told = False

    def waiting(idx: int, event: dict[str, Any]) -> None:
        nonlocal told
        if bar is None or event.get("event") != "waiting":
            return
        if not told:
            told, bar.told, bar.last_waited = True, None, 0.0  # a count of its own: its first wait is said
            say(
                f"npu-worker batch: cancelling job {job_id} when the worker lets it (Ctrl-C again: let it run)"
            )
        bar.waiting(event)

    try:
        answer = cancel_job(
            job_id, base=args.base, token=args.token_taken, on_progress=waiting, wait_limit=args.wait_limit
        )
    except (ClientError, KeyboardInterrupt) as exc:
        if bar is not None and isinstance(exc, WorkerHTTPError) and exc.error_name == "JobNotFound":
            # (it said the job "may still be running" and to DELETE it: the worker had lost it)
            return f"nothing to cancel: {unknown_job(job_id, bar)}"
        why = str(exc) or "interrupted again"
        return (
            f"job {job_id} may still be running: cancelling it failed ({why}); DELETE /jobs/{job_id} stops it"
        )
    finally:
        if bar is not None:
            bar.end_line()
    done, total = answer.get("done"), answer.get("total")
    if not answer.get("cancel_requested"):  # (it said no word of what had been made)
        return f"job {job_id} had already ended, {done} of {total} sections done (their wavs are kept)"
    return f"job {job_id} cancelled, {done} of {total} sections done (their wavs are kept)"


def ended_unfetched(bar: ProgressBar, word: str, out_dir: Path) -> tuple[str, int | None] | None:
    """A `batch --poll` stopped once a polled status said its job had ended, before its result came:
    what was made (the status's counts) and the work's exit status (None: the counts were not said, the
    stop's stands). None while the job runs. It sent a DELETE for the ended job, with `terminated`, 143
    and "job … had already ended", no word of the wavs made."""
    if bar.job_id is None or bar.polled_status not in ("done", "cancelled"):
        return None
    said = (
        f"npu-worker batch: {word} as it fetched its result; job {bar.job_id} had ended ({bar.polled_status})"
    )
    fetch = f"GET /jobs/{bar.job_id}/result has its result"
    total = len(bar.chars)
    if (split := bar.polled_counts()) is None:
        return f"{said}: {bar.polled_done} of {total} sections done, their wavs in {out_dir} ({fetch})", None
    ok, failed = split
    whole = bar.polled_status == "done" and ok == total
    made = f"{ok}/{total} sections ok" + (f", {failed} failed" if failed else "")
    # (a cancelled job's work was not done: "the work was done" was said of it too)
    ended = "the work was done" if bar.polled_status == "done" else "it was cancelled before its end"
    return f"{said}; {ended}: {made}, their wavs in {out_dir} ({fetch})", 0 if whole else 1


def left_behind(job_id: str, error: ClientError, bar: ProgressBar, out_dir: Path) -> str:
    """What became of the job of a batch given up on (the worker unreachable, loading past
    --wait-limit, gone): it was left running without a word, so a run started again made the same
    files alongside it; and a job the worker no longer knows (restarted without its state dir, or a
    Redis queue that lost its data: only the state dir was named) was a bare `HTTP 404`, though the
    sections it had not finished will never come."""
    if isinstance(error, WorkerHTTPError) and error.error_name == "JobNotFound":
        return unknown_job(job_id, bar)
    return (
        f"job {job_id} was not cancelled: it may still run and write its wavs into {out_dir}"
        f" (GET /jobs/{job_id}/status says how far; DELETE /jobs/{job_id} stops it); {finished_so_far(bar)}"
    )


def unknown_job(job_id: str, bar: ProgressBar) -> str:
    """A job the worker answers 404 `JobNotFound` for: it will never finish its other sections."""
    done = max(len(bar.finished), bar.polled_done)
    return (
        f"the worker no longer knows job {job_id} (restarted without its state dir, its queue's Redis"
        f" restarted without its data, or the job expired): {done} of {len(bar.chars)} sections had"
        " finished; send the others again"
    )


def finished_so_far(bar: ProgressBar) -> str:
    """How far a job given up on had come, said last where it was left to the progress lines above
    (scrolled away on a long lecture, or never read by a script): which sections' wavs are there."""
    total = len(bar.chars)
    if bar.polled_done > len(bar.finished):  # polling: counts; the sections come only with the result
        said = f"{bar.polled_done} of {total} sections had finished when it was given up"
        if (split := bar.polled_counts()) is None:
            return said
        ok, failed = split
        return f"{said}: {ok} ok" + (f", {failed} failed" if failed else "")
    made = sorted(idx for idx, status in bar.finished.items() if status == "ok")
    names = ", ".join(f"s{idx:02d}" for idx in made[:SECTIONS_NAMED])
    names += f" and {len(made) - SECTIONS_NAMED} more" if len(made) > SECTIONS_NAMED else ""
    failed = len(bar.finished) - len(made)
    said = f"{len(bar.finished)} of {total} sections had finished when it was given up: {len(made)} ok"
    return said + (f" ({names})" if made else "") + (f", {failed} failed" if failed else "")


def stopped_printing(
    command: str, stop: KeyboardInterrupt, made: str, ended: str = "the work was done"
) -> str:
    """The line of a stop once the job has finished, before, as or after its result is printed: the
    work's exit status stands (it was 143, 129 or 130 and `terminated`, as if nothing had been made).
    `ended`: how the job ended (a cancelled one's work was not done, though it was said so)."""
    return f"npu-worker {command}: {stopped_as(stop)[0]} as it printed its result; {ended}: {made}"


def answer_cut(output: str) -> str:
    """What a `synth` whose answer never came whole is told: the worker stops a synthesis whose caller
    has gone, but the connection may have broken after the wav was written."""
    return (
        f"the answer was cut off, so {output} may or may not have been written"
        " (the worker stops a synthesis once its caller has gone); run synth again to be sure"
    )


def unwritten(exc: OSError) -> str:
    return f"the result could not be written to stdout ({exc})"


def print_finished(command: str, result: str, made: str) -> bool:
    """A finished job's `result` on stdout; False, said with what was `made`, if it cannot be written."""
    try:
        print_result(result)
    except OSError as exc:
        say(f"npu-worker {command}: {unwritten(exc)}; {made}")
        return False
    return True
