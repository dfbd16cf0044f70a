"""The errors the pipeline client raises: a `ClientError` for each way a request can fail as a whole
(a section's failure is never raised: it is reported in the result)."""

from __future__ import annotations

import os
from typing import Any

from npu_worker.worker_words import one_line


class ClientError(Exception):
    """Base of the errors the client raises (a section's failure is never raised: it is reported)."""

    # A batch given up on once its job was queued (the worker gone past the re-attaches, `Stalled`, ...):
    # what had come so far, as the call returns it (`job_id`, `sections`, `wav_paths` of the ok ones,
    # `errors`, `done` None); the caller knew which sections were made only from its own `on_progress`.
    partial_result: dict[str, Any] | None = None


class InvalidArgument(ClientError, ValueError):
    """The call was given what no request can carry: a base that is no http(s) URL, a token with a line
    break, a number JSON has no form for (nan). Raised before anything is sent, in words, where urllib,
    http.client or json would raise their own ValueError from deep inside (or send invalid JSON)."""


class TransportError(ClientError):
    """The worker could not be reached, or a stream broke and could not be re-attached."""


class NotConnected(TransportError):
    """The worker's address refused the connection (nothing listens there now), so nothing of the
    request was sent: a submission may be sent again without making its batch twice."""


class AnswerCut(TransportError):
    """The request went out, then its answer never came whole: none began (the connection closed, or
    no head within the timeout: a proxy holding it; a batch submission's 502 or 504, a gateway's), or its
    body broke or stalled. What the request asked may have been done (a batch queued), so it is not
    sent again."""


class Stalled(TransportError):
    """The job made no progress for `stall_limit` seconds (no new event of its log; polling: no change
    of its status) while the worker kept it running: an engine hung in a call that never returns, a
    job that waits behind others longer than the caller allows. Its job is not cancelled."""


class EngineFailed(TransportError):
    """The worker failed to start: its engine failed to load, or its kept jobs could not be read (its
    /health: 500 `fail`). Restarted so, it runs none of its kept jobs (older workers still answered
    their status `interrupted` and their streams with heartbeats; now a 500). The job runs once a
    worker that loads takes it up; it is not cancelled."""


class WorkerProtocolError(TransportError):
    """The worker sent what the protocol has no place for (a line that is no JSON or over LINE_LIMIT,
    an `ok` without its `idx`). Raised at once: re-attaching would be sent the same log again."""


class WorkerHTTPError(ClientError):
    """The worker refused the whole request (4xx) or failed as a whole (5xx); `body` is its error body."""

    def __init__(
        self, status: int, body: dict[str, Any], retry_after: float | None = None, tried: str = ""
    ) -> None:
        self.status = status
        self.body = body
        self.retry_after = retry_after
        self.tried = tried  # what was sent before this answer gave it up (`retrying.Tries`), or ""
        said = f"HTTP {status}: {one_line(body.get('error') or body.get('status') or body)}"
        super().__init__(f"{tried}; the last answer: {said}" if tried else said)

    @property
    def error_name(self) -> str:
        """The stable error name (`BadRequest`, `QueueFull`, ...) that starts the `error` string."""
        text = str(self.body.get("error") or "")
        return text.split(":", 1)[0].strip()


def unreached(reason: BaseException) -> str:
    """A connection not made, in the same words from both transports: urllib's wrapper said
    `<urlopen error [Errno 111] Connection refused>`, aiohttp's repr named every field of its connection
    key, and asyncio words a refusal "Connect call failed …" (so a refusal is said by its errno)."""
    if isinstance(reason, ConnectionError) and reason.errno:
        return f"cannot reach the worker: {os.strerror(reason.errno)}"
    return f"cannot reach the worker: {getattr(reason, 'strerror', None) or reason}"
