"""What the shell client writes to the terminal: a progress bar with an ETA, `waiting` lines, and the
worker's words made printable first (`worker_words`: a hostile worker's escape sequences never reach the
terminal)."""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
from typing import Any, TextIO

from npu_worker.worker_words import one_line

WAIT_LINE_EVERY = 10.0  # seconds between `waiting` lines while the worker keeps saying the same


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def printable_json(value: Any) -> str:
    """`value` as indented JSON that may reach a terminal: readable (Korean as it is), but a character
    `worker_words.printable` would escape written as its `\\u` escape (json escapes only those below U+0020: a bidi
    override or a C1 control such as U+009B, a CSI, in a worker's error went out raw with `--json`)."""
    text = json.dumps(value, ensure_ascii=False, indent=1)
    return "".join(char if char.isprintable() or char == "\n" else json.dumps(char)[1:-1] for char in text)


def say(message: str) -> None:
    """One line on stderr, printable (`one_line`); a stderr that takes no more (a log on a full disk) is
    no error."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: a closed stderr
        print(one_line(message), file=sys.stderr, flush=True)


def print_result(text: str) -> None:
    """`text` on stdout, flushed here: OSError now (a result file on a full disk), not at exit, where it
    was a traceback and exit 1 ("some sections failed") or 120."""
    print(text)
    sys.stdout.flush()


class ProgressBar:
    """Per-section progress with an ETA weighted by text length (long slides take longer; `eta`).

    On a terminal it redraws one line in place; elsewhere (logs, CI) it prints a line per finished
    section so that nothing depends on carriage returns.
    """

    width = 24

    def __init__(self, texts: dict[int, str], stream: TextIO, live: bool | None = None) -> None:
        self.chars = {idx: max(1, len(text)) for idx, text in texts.items()}
        self.stream = stream
        self.live = stream.isatty() if live is None else live
        self.started = time.monotonic()
        self.finished: dict[int, str] = {}
        self.current: int | None = None
        self.polled_done = 0  # polling mode: the status body's count (sections arrive only at the end)
        self.polled_split: tuple[int, int] | None = None  # the last status's `ok` and `fail`, if it said
        self.polled_status: Any = None  # the last status's word: `done` or `cancelled`, the job has ended
        self.drawn = False  # a live line is on the terminal, not ended yet
        self.job_id: str | None = None  # from the stream's `start` or a polled status: what Ctrl-C cancels
        self.told: tuple[str, float] | None = None  # the last `waiting` line: its error name, waited
        self.last_waited = 0.0  # the last `waiting` event's
        self.mute = False  # `stream` failed a write (a log on a full disk): the batch goes on unshown
        self.lost_at: float | None = None  # the stream broke (`stream_lost`): re-attaching since then
        self.polling = False  # that loss was a poll's (`batch --poll`): said in a poll's words

    def write(self, text: str) -> None:
        """`text` on the stream, flushed; a stream that fails it is not written to again: progress is a
        display, and its failure ended the batch (its job left running) with a traceback."""
        if self.mute:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # ValueError: a closed stream
            self.mute = True

    def eta(self) -> float | None:
        """Each section weighs its characters plus the batch's mean (its share of what every section
        costs whatever its length: the first one's wait, a request's overhead). By characters alone a
        short first section (a title) made the rest look hundreds of times longer: `ETA 29:44` for 2."""
        elapsed = time.monotonic() - self.started
        if self.polled_done > len(self.finished):
            return elapsed * (len(self.chars) - self.polled_done) / self.polled_done
        if not self.finished:
            return None
        share = sum(self.chars.values()) / max(1, len(self.chars))
        done = sum(self.chars.get(idx, 0) + share for idx in self.finished)
        remaining = sum(chars + share for idx, chars in self.chars.items() if idx not in self.finished)
        return elapsed * remaining / done

    def line(self) -> str:
        total = len(self.chars)
        done = max(len(self.finished), self.polled_done)
        filled = min(self.width, int(self.width * done / max(1, total)))  # a polled `done` of 10**30
        fails = sum(1 for status in self.finished.values() if status != "ok")
        current = f"s{self.current:02d}" if self.current is not None else "   "
        return (
            f"[{'#' * filled}{'-' * (self.width - filled)}] {done}/{total} {current}"
            f"{f'  {fails} failed' if fails else ''}  elapsed {_clock(time.monotonic() - self.started)}"
            f"  ETA {_clock(self.eta())}"
        )

    def waiting(self, event: dict[str, Any]) -> None:
        """The worker said "not now" (it loads, its queue is full): a line, so a long compile is not
        silence; off a terminal, one when its error name changes or the worker answered in between
        (a new count of `waited`), else one per WAIT_LINE_EVERY seconds (the words of a `Loading`
        change with each kept job read)."""
        said, waited = one_line(event.get("error")), number(event.get("waited"))
        name = said.split(":", 1)[0]
        # `waited` below the last one's: the worker answered in between (a new count), said anew;
        # else those lines stopped until the new count passed the old line's, for ever if it never did
        again, self.last_waited = waited < self.last_waited, waited
        if not self.live and self.told and self.told[0] == name and not again:
            if waited - self.told[1] < WAIT_LINE_EVERY:
                return
        self.told = (name, waited)
        line = (
            f"waiting for the worker: {said} (again in {number(event.get('retry_after')):g} s;"
            f" waited {_clock(waited)} of at most {_clock(number(event.get('wait_limit')))})"
        )
        self.write(f"\r{line}\x1b[K" if self.live else line + "\n")
        self.drawn = self.live

    def stream_lost(self, event: dict[str, Any]) -> None:
        """The stream broke before `done`: a line with why (a worker shutting down says so in its
        words), so the bar standing still while the client re-attaches is not silence."""
        self.end_line()
        self.lost_at, self.polling = time.monotonic(), event.get("polling") is True
        job, why = one_line(event.get("job_id")), one_line(event.get("error"))
        if self.polling:  # `batch --poll`: a poll failed, retried (it said nothing until it gave up)
            self.write(f"worker lost: {why}; polling job {job} again\n")
            return
        self.write(
            f"stream lost after event {int(number(event.get('after')))}: {why}; re-attaching to job {job}\n"
        )

    def reattached(self) -> None:
        """The first event after a `stream_lost` came from the stream re-attached: a line saying so."""
        assert self.lost_at is not None
        self.end_line()
        again = "answered about" if self.polling else "re-attached to"
        self.write(f"{again} job {one_line(self.job_id)} after {time.monotonic() - self.lost_at:.1f} s\n")
        self.lost_at = None

    def __call__(self, idx: int, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "stream_lost":
            self.stream_lost(event)
            return
        if kind == "waiting":
            self.waiting(event)
            return
        if self.lost_at is not None:
            self.reattached()
        self.told = None
        if kind in ("start", "status") and isinstance(event.get("job_id"), str):
            self.job_id = event["job_id"]
        # a section of this job: a worker's idx 7 of 6 sections counted too, and its `true` as section 1
        own = idx in self.chars and not isinstance(idx, bool)
        if kind == "progress" and event.get("status") == "synth" and own:
            self.current = idx
        elif kind == "status":
            self.current = event.get("current_idx") if isinstance(event.get("current_idx"), int) else None
            done = min(int(number(event.get("done"))), len(self.chars))  # never "7 of 6 sections"
            self.polled_split, self.polled_status = counts_of(event), event.get("status")
            if done > self.polled_done and not self.live:
                self.polled_done = done
                self.write(f"{self.polled_done} done  ({self.line()})\n")
            self.polled_done = max(self.polled_done, done)
        elif (kind == "progress" and event.get("status") == "ok" or kind == "error") and own:
            self.finished[idx] = "ok" if kind == "progress" else "fail"
            if not self.live:
                detail = "ok" if kind == "progress" else f"FAILED {one_line(event.get('error', ''))}"
                self.write(f"s{idx:02d} {detail}  ({self.line()})\n")
        if self.live and kind != "done":
            self.write("\r" + self.line() + "\x1b[K")
            self.drawn = True
        if self.live and kind == "done":
            self.write("\r" + self.line() + "\x1b[K\n")
            self.drawn = False

    def polled_counts(self) -> tuple[int, int] | None:
        """The last status's `ok` and `fail` where they add up to the count done: a worker's done is its
        ok plus its failed, so a split short of the count ('2 of 3 …: 0 ok') is none."""
        split = self.polled_split
        return split if split is not None and sum(split) == self.polled_done else None

    def end_line(self) -> None:
        """Before a message of its own: end the bar's line if one is drawn (a terminal only)."""
        if self.drawn:
            self.write("\n")
            self.drawn = False


def counts_of(status: dict[str, Any]) -> tuple[int, int] | None:
    """A polled status's `ok` and `fail` counts, or None where either is no count (an older worker's)."""
    ok, fail = status.get("ok"), status.get("fail")
    if isinstance(ok, bool) or isinstance(fail, bool) or not isinstance(ok, int) or not isinstance(fail, int):
        return None
    return (ok, fail) if ok >= 0 and fail >= 0 else None


def number(value: Any) -> float:
    """A figure from the worker, 0 when it is none (the summary shows what it can, never a traceback):
    an integer past any float (JSON's `1` followed by 400 zeros) raised OverflowError in `isfinite`."""
    if not isinstance(value, int | float):
        return 0.0
    try:
        return float(value) if math.isfinite(value) else 0.0
    except OverflowError:
        return 0.0
