"""ZipVoice's phonemizer: espeak-ng's phonemes from a child process (`ChildEspeak.phonemize`), apart
from the synthesising engine because its owner is a ZipVoice engine, which closes it with itself."""

from __future__ import annotations

import logging
import threading

from ..protocol import EngineError
from .espeak_process import CLOSED, STOP_SECONDS, ChildEspeak

log = logging.getLogger(__name__)


class ChildPhonemizer:
    """espeak-ng's phonemes for ZipVoice's tokenizer, made in a child process started on first use:
    espeak's text parser has known overflows ("s'" * 100, "A." * 200 in English abort the process), and
    in the worker's process one request's text ended the worker. A child that dies fails the call
    (EngineError: that section) and another starts for the next; so does one that does not answer in
    time (`PHONEMIZE_SECONDS`: stopped or hung), which is killed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: ChildEspeak | None = None
        # Once closed, a call (the engine thread's, past the shutdown's join) fails: it started a child
        # that nothing closed, running on until the worker's exit
        self._closed = False

    def __call__(self, text: str, voice: str) -> str:
        with self._lock:
            if self._closed:
                raise EngineError(CLOSED)
            if self._child is None or self._child.closed or not self._child.alive:
                if self._child is not None:  # (one a deadline killed is not closed yet: reaped here)
                    self._child.close()
                self._child = ChildEspeak()
            return self._child.phonemize(text, voice)

    def close(self) -> None:
        """A call stuck on a child that stopped answering (SIGSTOP, a hung host) holds the lock until its
        deadline; the shutdown does not wait that long: past `STOP_SECONDS` the child is killed, which
        ends that call (`EngineError`) and frees the lock."""
        if not self._lock.acquire(timeout=STOP_SECONDS):
            stuck = self._child
            if stuck is not None:
                log.warning("espeak-ng's phonemizer process %s stopped answering; killing it", stuck.pid)
                stuck.kill()
            self._lock.acquire()
        try:
            self._closed = True
            if self._child is not None:
                self._child.close()
                self._child = None
        finally:
            self._lock.release()
