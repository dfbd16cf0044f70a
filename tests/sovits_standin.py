"""A small stand-in for sovits_worker: a real HTTP server that answers /health and /synth like it.

`/synth` writes a sine tone at `output_path` (at `wav_rate`, 32 kHz by default like GPT-SoVITS, so the
proxy's resampling is exercised) and answers with sovits_worker's fields. A text containing `FAIL`
gets `status: fail`; one containing `CRASH` gets an HTTP 500 with the error body. What an upstream
should never do, on a keyword: `NAN` (a float wav holding NaN), `EMPTY` (a wav of 0 samples), `ONEHZ`
(a 1 Hz wav), `FIFO` (a FIFO at output_path), `ELSEWHERE` (ok, naming /dev/zero as its wav).
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import soundfile

from npu_worker.audio import wav_bytes
from tests.timing import seconds


def tone(text: str, rate: int, seconds_per_char: float = 0.05) -> np.ndarray:
    """The audio the stand-in writes for `text` (deterministic, so tests can compare)."""
    t = np.arange(int(len(text) * seconds_per_char * rate)) / rate
    return (0.4 * np.sin(2 * np.pi * 330.0 * t)).astype(np.float32)


def _listening(port: int, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on `port`; a port given (the upstream back after a restart, on its old port) may be
    held a while by another process that took it meanwhile: tried again until it is let go."""
    deadline = time.monotonic() + seconds(10)
    while True:
        try:
            return ThreadingHTTPServer(("127.0.0.1", port), handler)
        except OSError as exc:
            if port == 0 or exc.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class SovitsStandIn:
    def __init__(
        self, health: dict[str, Any] | None = None, wav_rate: int = 32000, port: int = 0, prefix: str = ""
    ) -> None:
        self.health = health if health is not None else {"status": "ok", "loaded": True, "device": "cuda"}
        self.wav_rate = wav_rate
        self.prefix = prefix  # the paths it answers are under this (a reverse proxy's prefix)
        self.requests: list[dict[str, Any]] = []
        self._server = _listening(port, self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._stopped = False

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> SovitsStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Close the socket: later requests find nothing listening (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def synth(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        text = body.get("text", "")
        if "CRASH" in text:
            return 500, {"status": "fail", "error": "RuntimeError: CUDA out of memory", "traceback": None}
        if "FAIL" in text:
            return 200, {"status": "fail", "error": "EngineError: reference wav unreadable"}
        output = Path(body["output_path"])
        audio = tone(text, self.wav_rate)
        if "NAN" in text:
            audio[100] = np.nan
            soundfile.write(output, audio, self.wav_rate, subtype="FLOAT", format="WAV")
        elif "EMPTY" in text:
            output.write_bytes(wav_bytes(np.zeros(0, np.float32), self.wav_rate))
        elif "ONEHZ" in text:
            output.write_bytes(wav_bytes(np.zeros(20000, np.float32), 1))
        elif "FIFO" in text:
            os.mkfifo(output)
        else:
            output.write_bytes(wav_bytes(audio, self.wav_rate))
        if "ELSEWHERE" in text:
            body = {**body, "output_path": "/dev/zero"}
        duration = audio.size / self.wav_rate
        return 200, {
            "status": "ok",
            "output": body["output_path"],
            "wav_path": body["output_path"],
            "duration_sec": duration,
            "sample_rate": self.wav_rate,
            "elapsed_sec": 0.01,
            "rtf": 0.01 / duration,
            "engine": "gpt-sovits",
            "device": self.health.get("device", "cpu"),
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == standin.prefix + "/health":
                    self._answer(200, standin.health)
                else:
                    self._answer(404, {"status": "fail", "error": "NotFound"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                if self.path == standin.prefix + "/synth":
                    self._answer(*standin.synth(body))
                else:
                    self._answer(404, {"status": "fail", "error": "NotFound"})

            def _answer(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
