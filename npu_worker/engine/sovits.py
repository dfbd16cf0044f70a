"""Proxy engine: forwards each text to an existing sovits_worker (`POST /synth`), the migration path.

Callers can switch to npu-worker before ZipVoice is ready: the same interface, the old voice. The
upstream writes a wav at a path we give it (a temp dir this engine owns, 0700: the upstream must run as
the worker's user), we read it back, resample to our rate and hand it on in ~0.5 s chunks.

The upstream is trusted to make audio, not to be well-behaved: every call has a total deadline (a
socket timeout bounds each read, and a trickling upstream never let one end), a cancel shuts the
socket down from another thread (`interrupt`), redirects are not followed, replies and wavs are
bounded (one call: `sovits_call.py`), and only the wav at the path we asked for is read. Every failure is an EngineError (a
section) or ModelLoadError (load) saying "sovits_worker ..." and why, never its address: those
messages reach callers; the address is logged. `load()` waits for an upstream that is down or still
loading (the worker says `Loading` meanwhile) instead of failing for good.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from npu_worker.audio import resample
from npu_worker.audio_decode import open_sound, read_wav
from npu_worker.engine.base import EngineInfo, Interrupted, SynthesisRequest
from npu_worker.engine.sovits_call import Line, Unavailable, Upstream, error_text
from npu_worker.files import read_regular
from npu_worker.protocol import EngineError, ModelLoadError

log = logging.getLogger(__name__)

HEALTH_TIMEOUT = 10.0  # one /health call, in all
SYNTH_TIMEOUT = 900.0  # one section's /synth call, in all (a long section on a slow upstream)
RETRY_SECONDS = 10.0  # a section's POST refused or reset before any reply is retried this long (a restart)
LOAD_RETRY_CAP = 5.0  # load() asks /health again after at most this long
WAIT_LOG_EVERY = 30.0  # load() logs that it still waits at most this often
WAV_LIMIT = 256 << 20  # the wav file the upstream wrote
MAX_WAV_SECONDS = 20 * 60.0
RATE_RANGE = (8000, 192000)
LABEL_LIMIT = 64  # /health's device, precision, backend and version, each


class SovitsEngine:
    """Speech from a sovits_worker at `base` (e.g. http://127.0.0.1:7766), at `sample_rate` Hz.

    `info.device` is what the upstream's /health reports (else "cpu"); `info.model` its backend and
    version. Upstream failures (`status: fail`, HTTP errors) become EngineError with the upstream text.
    """

    def __init__(
        self,
        base: str,
        sample_rate: int = 24000,
        chunk_seconds: float = 0.5,
        health_timeout: float = HEALTH_TIMEOUT,
        synth_timeout: float = SYNTH_TIMEOUT,
        retry_seconds: float = RETRY_SECONDS,
        load_retry_cap: float = LOAD_RETRY_CAP,
        max_wav_seconds: float = MAX_WAV_SECONDS,
    ) -> None:
        SovitsConfig(base).validate()
        self.base = base.rstrip("/")
        self._upstream = Upstream.of(self.base)
        self.sample_rate = sample_rate
        self.chunk_seconds = chunk_seconds
        self.health_timeout = health_timeout
        self.synth_timeout = synth_timeout
        self.retry_seconds = retry_seconds
        self.load_retry_cap = load_retry_cap
        self.max_wav_seconds = max_wav_seconds
        self.load_phase: str | None = None  # /health's `load_phase` while load() waits for the upstream
        self._info = EngineInfo("sovits", "cpu", "unknown", sample_rate, "sovits_worker")
        self._work_dir: Path | None = None
        self._lock = threading.Lock()
        self._line: Line | None = None
        self._section: _Section | None = None  # the latest stream's, for `interrupt` to mark
        self._closed = threading.Event()

    @property
    def info(self) -> EngineInfo:
        return self._info

    @property
    def work_dir(self) -> Path | None:
        """Where the upstream is asked to write its wavs (removed by `close()`)."""
        return self._work_dir

    # -- load --------------------------------------------------------------------------------------

    def load(self) -> None:
        """Wait until the upstream's /health answers ok: while it is unreachable, answers 5xx or says it
        is loading, ask again with back-off (the worker says `Loading`), so a worker started before its
        upstream comes up by itself. A /health that can never work (3xx, 4xx, not a JSON object) is a
        ModelLoadError at once; `close()` or `cancel_load()` ends the wait with one."""
        delay, logged_at = 0.2, -WAIT_LOG_EVERY
        while True:
            try:
                health = self._health()
                break
            except Unavailable as waiting:
                self.load_phase = f"waiting for sovits_worker: {waiting.reason}"
                if time.monotonic() - logged_at >= WAIT_LOG_EVERY:
                    logged_at = time.monotonic()
                    log.warning("sovits_worker at %s %s; waiting for it", self.base, waiting.reason)
            if self._closed.wait(delay):
                raise ModelLoadError("sovits_worker: stopped waiting for it (the engine was closed)")
            delay = min(delay * 2, self.load_retry_cap)
        self.load_phase = None
        self._info = EngineInfo(
            backend="sovits",
            device=_label(health.get("device")) or "cpu",
            precision=_label(health.get("precision")) or "unknown",
            sample_rate=self.sample_rate,
            model=_model_id(health),
        )
        with self._lock:
            if self._closed.is_set():
                raise ModelLoadError("sovits_worker: stopped waiting for it (the engine was closed)")
            if self._work_dir is None:
                self._work_dir = Path(tempfile.mkdtemp(prefix="npu-worker-sovits-"))

    def _health(self) -> dict[str, Any]:
        """/health's JSON when it says ready; Unavailable while it may yet be; ModelLoadError if never."""
        line = self._open_line(self.health_timeout)
        try:
            status, body = self._exchange(line, "GET", "/health", None)
        except Interrupted:
            raise Unavailable("call stopped") from None
        except Unavailable as error:
            if error.no_reply or line.why is not None:
                raise
            log.warning("sovits_worker at %s: /health %s", self.base, error.reason)
            raise ModelLoadError(f"sovits_worker /health {error.reason}") from None
        finally:
            self._close_line(line)
        if status >= 500:
            raise Unavailable(f"/health answered {status}: {error_text(body)}"[:500])
        if status != 200:
            log.warning("sovits_worker at %s: /health answered %d", self.base, status)
            raise ModelLoadError(f"sovits_worker /health answered {status}: {error_text(body)}"[:500])
        try:
            health = json.loads(body or b"{}")
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            health = None
        if not isinstance(health, dict):
            log.warning("sovits_worker at %s: /health did not answer a JSON object", self.base)
            raise ModelLoadError("sovits_worker /health did not answer a JSON object: is it a sovits_worker?")
        if health.get("status", "ok") != "ok" or health.get("loaded") is False:
            state = {key: health.get(key) for key in ("status", "loaded")}
            raise Unavailable(f"not ready yet ({json.dumps(state)[:200]})")
        return health

    def cancel_load(self) -> None:
        """Shutdown while load() waits for the upstream (any thread): it ends now with ModelLoadError."""
        self._closed.set()
        with self._lock:
            line = self._line
        if line is not None:
            line.end("closed")

    # -- sections ----------------------------------------------------------------------------------

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        """Yield the upstream's audio for `request` at our rate, in `chunk_seconds` pieces.

        The section is this engine's current one from this call on (not from the first chunk asked
        for), so a cancel that lands before its upstream call opens still stops that call."""
        section = _Section()
        with self._lock:
            self._section = section
        return self._stream(request, section)

    def _stream(self, request: SynthesisRequest, section: _Section) -> Iterator[np.ndarray]:
        work_dir = self._work_dir  # read once: a `close()` meanwhile sets it to None, and a sweep of
        if work_dir is None:  # None (os.scandir's default, ".") emptied the worker's current directory
            raise EngineError("sovits engine used before load()")
        _sweep(work_dir)
        output_path = work_dir / f"{uuid.uuid4().hex}.wav"
        try:
            self._post_synth(request, output_path, section)
            audio = resample(*self._read_wav(output_path), self.sample_rate)
            step = max(1, int(self.chunk_seconds * self.sample_rate))
            for start in range(0, audio.size, step):
                yield audio[start : start + step]
        finally:
            output_path.unlink(missing_ok=True)

    def interrupt(self, restart: bool) -> bool:
        """Stop the current section's upstream call (any thread), for a cancel: its socket is shut
        down and the stream raises `Interrupted` at once; a call not opened yet is never made. A
        restart is declined: the upstream cannot pause. True unless that call has ended already.

        Only the section of the latest `stream()` is marked, never a flag the next one would meet:
        the runner checks its own cancel flag after `stream()` and between chunks (base.py)."""
        if restart:
            return False
        with self._lock:
            section = self._section
            if section is None or section.called:
                return False
            section.stopped = True
            line = section.line
        if line is not None:
            line.end("interrupted")
        return True

    def _post_synth(self, request: SynthesisRequest, output_path: Path, section: _Section) -> None:
        """Ask the upstream for a wav at `output_path`; EngineError unless it says ok for that path."""
        body = {
            "text": request.text,
            "lang": request.lang,
            "output_path": str(output_path),
            "speed_factor": request.speed_factor,
            "ref_wav": request.voice.ref_wav,
        }
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        line = self._open_line(self.synth_timeout, section)
        try:
            status, raw = self._exchange(line, "POST", "/synth", data, retry_seconds=self.retry_seconds)
        except Unavailable as error:
            log.warning("sovits_worker at %s: /synth %s", self.base, error.reason)
            raise EngineError(f"sovits_worker {error.reason}") from None
        finally:
            self._close_line(line, section)
        if status != 200:
            raise EngineError(f"sovits_worker answered {status}: {error_text(raw)}"[:2000])
        if not raw:
            raise EngineError("sovits_worker sent an empty reply")
        try:
            reply = json.loads(raw)
        except (ValueError, RecursionError) as error:  # RecursionError: nested too deeply
            raise EngineError(f"sovits_worker sent a body that is not JSON: {error}") from None
        if not isinstance(reply, dict) or reply.get("status") != "ok":
            detail = reply.get("error") if isinstance(reply, dict) else None
            raise EngineError(f"sovits_worker failed: {detail or reply!r}"[:2000])
        for key in ("wav_path", "output"):
            named = reply.get(key)
            if named and str(named) != str(output_path):
                raise EngineError(f"sovits_worker named another wav ({key}) than the path it was given")

    def _read_wav(self, path: Path) -> tuple[np.ndarray, int]:
        """The wav at `path` (ours), bounded and checked before anything is made of it."""
        try:
            data = read_regular(path, WAV_LIMIT)
            with open_sound(data) as sound:
                rate, frames = sound.samplerate, sound.frames
            if not RATE_RANGE[0] <= rate <= RATE_RANGE[1]:
                raise ValueError(f"its sample rate {rate} Hz is outside {RATE_RANGE[0]}-{RATE_RANGE[1]} Hz")
            if frames > self.max_wav_seconds * rate:
                raise ValueError(f"it is longer than {self.max_wav_seconds:g} s")
            samples, rate = read_wav(data)
        except (OSError, ValueError, EOFError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise EngineError(f"sovits_worker reported ok but its wav is unusable: {reason}") from None
        if samples.size == 0:  # (NaN or infinite samples: read_wav's ValueError above)
            raise EngineError("sovits_worker wrote no audio")
        return samples, rate

    # -- HTTP ----------------------------------------------------------------------------------------

    def _open_line(self, timeout: float, section: _Section | None = None) -> Line:
        """A line for one call (of `section`'s, if given), ended at once if the engine is closed or
        the section was cancelled before its call opened."""
        line = Line(timeout)
        with self._lock:
            self._line = line
            if self._closed.is_set():
                line.end("closed")
            if section is not None:
                section.line = line
                if section.stopped:
                    line.end("interrupted")
        return line

    def _close_line(self, line: Line, section: _Section | None = None) -> None:
        line.done()
        with self._lock:
            if self._line is line:
                self._line = None
            if section is not None:
                section.called = True

    def _exchange(
        self, line: Line, method: str, path: str, body: bytes | None, retry_seconds: float = 0.0
    ) -> tuple[int, bytes]:
        """(status, bounded body) of one call on `line`, asked again with back-off for `retry_seconds`
        while the upstream refuses or resets it before any reply byte; never after one, never past an
        end of the line. Raises Unavailable (why) or Interrupted."""
        started, delay = time.monotonic(), 0.1
        while True:
            line.check()  # ended before it was opened (a cancel, a close): never asked
            try:
                return self._upstream.attempt(line, method, path, body)
            except Unavailable as error:
                line.check()
                if not error.no_reply or time.monotonic() + delay - started > retry_seconds:
                    raise
                if delay == 0.1:  # once per call
                    log.warning("sovits_worker at %s %s; asking again", self.base, error.reason)
            if line.ended.wait(delay):
                line.check()
            delay = min(delay * 2, 2.0)

    def close(self) -> None:
        self.cancel_load()
        with self._lock:
            work_dir, self._work_dir = self._work_dir, None
        if work_dir is not None:
            shutil.rmtree(work_dir, ignore_errors=True)


@dataclass
class _Section:
    """One `stream()`'s upstream call, as `interrupt` sees it (under the engine's lock)."""

    stopped: bool = False  # cancelled: its call ends at once, or is never made
    line: Line | None = None  # its call's line, once opened
    called: bool = False  # its call has ended: nothing left to stop


def _sweep(work_dir: Path) -> None:
    """Remove what an upstream wrote after its section ended (a cancel or a deadline does not stop it):
    sections run one at a time (no preview lanes), so nothing in the work dir is in use now."""
    with contextlib.suppress(OSError), os.scandir(work_dir) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _model_id(health: dict[str, Any]) -> str:
    """Upstream backend and version, e.g. "gpt-sovits-v2"; "sovits_worker" when it names neither."""
    parts = [_label(health.get(key)) for key in ("backend", "version")]
    return "-".join(part for part in parts if part) or "sovits_worker"


def _label(value: Any) -> str:
    """A name from /health as it may be shown: printable, at most LABEL_LIMIT characters ("" for
    anything else). It goes into every `start` event, /synth answer and metrics scrape."""
    text = str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""
    return "".join(char for char in text[:LABEL_LIMIT] if char.isprintable())


@dataclass(frozen=True)
class SovitsConfig:
    """Where the sovits_worker listens (`--sovits-base`): http(s)://host:port, optionally a path prefix."""

    base_url: str = "http://127.0.0.1:7766"

    def validate(self) -> None:
        """ValueError naming what is wrong; never echoes credentials (they would reach the logs)."""
        parts = urllib.parse.urlsplit(self.base_url)
        if "@" in parts.netloc:
            shown = parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()
            raise ValueError(
                f"the sovits_worker base URL must not carry a user or password (got {shown}): "
                "they would show in logs and errors; let sovits_worker listen on loopback instead"
            )
        if not all("!" <= char <= "~" for char in self.base_url):
            raise ValueError(
                "the sovits_worker base URL must be printable ASCII without spaces (percent-encode the "
                f"rest), got {self.base_url!r}"  # else every call fails (http.client) and load() waits on
            )
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the sovits_worker base URL must be http(s)://host:port, got {self.base_url!r}")
        try:
            port = parts.port
        except ValueError:
            port = 0
        if port == 0 or (port is None and parts.netloc.endswith(":")):
            raise ValueError(f"the sovits_worker base URL's port must be 1-65535, got {self.base_url!r}")
        if parts.query or parts.fragment or "?" in self.base_url or "#" in self.base_url:
            raise ValueError(
                f"the sovits_worker base URL may not have a query or fragment, got {self.base_url!r}"
            )


def create(config: SovitsConfig) -> SovitsEngine:
    """The engine for `--backend sovits`, its URL checked now."""
    config.validate()
    return SovitsEngine(config.base_url)
