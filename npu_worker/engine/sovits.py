"""Proxy engine: forwards each text to an existing sovits_worker (`POST /synth`), the migration path.

Callers can switch to npu-worker before ZipVoice is ready: the same interface, the old voice. The
upstream writes a wav at a path we give it (a temp dir this engine owns), we read it back, resample to
our rate and hand it on in ~0.5 s chunks. Standard library only: the engine runs on the scheduler's
worker thread, where blocking on HTTP is fine. A request cannot be interrupted while the upstream
works; cancellation takes effect at the first chunk.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from npu_worker.audio import read_wav, resample
from npu_worker.engine.base import EngineInfo, SynthesisRequest
from npu_worker.protocol import EngineError, ModelLoadError

HEALTH_TIMEOUT = 10.0
SYNTH_TIMEOUT = 900.0  # a long section on a slow upstream; the scheduler's heartbeats keep clients alive


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
    ) -> None:
        self.base = base.rstrip("/")
        self.sample_rate = sample_rate
        self.chunk_seconds = chunk_seconds
        self.health_timeout = health_timeout
        self.synth_timeout = synth_timeout
        self._info = EngineInfo("sovits", "cpu", "unknown", sample_rate, "sovits_worker")
        self._work_dir: Path | None = None

    @property
    def info(self) -> EngineInfo:
        return self._info

    @property
    def work_dir(self) -> Path | None:
        """Where the upstream is asked to write its wavs (removed by `close()`)."""
        return self._work_dir

    def load(self) -> None:
        """Check the upstream's /health; ModelLoadError with the URL when it does not answer ok."""
        url = f"{self.base}/health"
        try:
            with urllib.request.urlopen(url, timeout=self.health_timeout) as response:
                health = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise ModelLoadError(
                f"sovits_worker at {url} answered {error.code}: {_error_text(error)}"
            ) from error
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise ModelLoadError(f"sovits_worker at {url} is unreachable: {_reason(error)}") from error
        if (
            not isinstance(health, dict)
            or health.get("status", "ok") != "ok"
            or health.get("loaded") is False
        ):
            raise ModelLoadError(f"sovits_worker at {url} is not ready: {health!r}"[:500])
        self._info = EngineInfo(
            backend="sovits",
            device=str(health.get("device") or "cpu"),
            precision=str(health.get("precision") or "unknown"),
            sample_rate=self.sample_rate,
            model=_model_id(health),
        )
        if self._work_dir is None:
            self._work_dir = Path(tempfile.mkdtemp(prefix="npu-worker-sovits-"))

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        """Yield the upstream's audio for `request` at our rate, in `chunk_seconds` pieces."""
        if self._work_dir is None:
            raise EngineError("sovits engine used before load()")
        output_path = self._work_dir / f"{uuid.uuid4().hex}.wav"
        try:
            reply = self._post_synth(request, output_path)
            wav_path = Path(reply.get("wav_path") or reply.get("output") or output_path)
            try:
                samples, rate = read_wav(wav_path.read_bytes())
            except (OSError, ValueError, EOFError) as error:
                raise EngineError(
                    f"sovits_worker reported ok but {wav_path} is unreadable: {error}"
                ) from error
            audio = resample(samples, rate, self.sample_rate)
            step = max(1, int(self.chunk_seconds * self.sample_rate))
            for start in range(0, audio.size, step):
                yield audio[start : start + step]
        finally:
            output_path.unlink(missing_ok=True)

    def _post_synth(self, request: SynthesisRequest, output_path: Path) -> dict[str, Any]:
        url = f"{self.base}/synth"
        body = {
            "text": request.text,
            "lang": request.lang,
            "output_path": str(output_path),
            "speed_factor": request.speed_factor,
            "ref_wav": request.voice.ref_wav,
        }
        post = urllib.request.Request(
            url,
            data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(post, timeout=self.synth_timeout) as response:
                reply = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise EngineError(f"sovits_worker answered {error.code}: {_error_text(error)}") from error
        except (urllib.error.URLError, OSError) as error:
            raise EngineError(f"sovits_worker at {url} is unreachable: {_reason(error)}") from error
        except ValueError as error:
            raise EngineError(f"sovits_worker sent a body that is not JSON: {error}") from error
        if not isinstance(reply, dict) or reply.get("status") != "ok":
            detail = reply.get("error") if isinstance(reply, dict) else None
            raise EngineError(f"sovits_worker failed: {detail or reply!r}"[:2000])
        return reply

    def close(self) -> None:
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
            self._work_dir = None


def _model_id(health: dict[str, Any]) -> str:
    """Upstream backend and version, e.g. "gpt-sovits-v2"; "sovits_worker" when it names neither."""
    parts = [str(health[key]) for key in ("backend", "version") if health.get(key)]
    return "-".join(parts) or "sovits_worker"


def _reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    return str(reason if reason is not None else error)


def _error_text(error: urllib.error.HTTPError) -> str:
    """The upstream's `error` field when the body is the error JSON, else the body's text."""
    try:
        raw = error.read()
    except OSError:
        raw = b""
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error"):
        return str(body["error"])
    return raw.decode("utf-8", errors="replace").strip()[:2000] or str(error.reason)


@dataclass(frozen=True)
class SovitsConfig:
    """Where the sovits_worker listens (`--sovits-base`)."""

    base_url: str = "http://127.0.0.1:7766"

    def validate(self) -> None:
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the sovits_worker base URL must be http(s)://host:port, got {self.base_url!r}")


def create(config: SovitsConfig) -> SovitsEngine:
    """The engine for `--backend sovits`, its URL checked now."""
    config.validate()
    return SovitsEngine(config.base_url)
