"""The stable error names of PROTOCOL v1 and the fixed error body they travel in.

One class per name; the name is the first word of every `error` string (`"Name: message"`), and the
HTTP status a view answers with. Pure code, imported by everything else (`protocol.py` re-exports it).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from .printable import escaped


class WorkerError(Exception):
    """Base of every error the worker reports by name (`"Name: message"`).

    `param` is the request field at fault, when one is (OpenAI's error object carries it); `counted`:
    a section's `error` event relayed as an answer, already in /metrics."""

    name: ClassVar[str] = "WorkerError"
    http_status: ClassVar[int] = 500
    param: str | None = None
    counted: bool = False

    def __init__(self, message: str, *, fallback: str | None = None, param: str | None = None) -> None:
        message = _encodable(message)
        super().__init__(message)
        self.message = message
        self.fallback = fallback
        if param is not None:
            self.param = param

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


def _encodable(text: str) -> str:
    """`text` with each lone surrogate written as an escape (`\\xff` for a byte that was not UTF-8, as
    aiohttp decodes a header or, with its pure-Python parser, a path): words quoting one raw could not
    be encoded on any surface, and the refusal became a 500."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(escaped(char) if "\ud800" <= char <= "\udfff" else char for char in text)
    return text


def counted(count: int, singular: str, plural: str) -> str:
    """`count` and the words that agree with it (`counted(1, "section is", "sections are")`): a
    refusal's count was worded plural whatever it was ("1 sections are waiting (bound 1)")."""
    return f"{count} {singular if count == 1 else plural}"


def _error(name: str, status: int, doc: str, base: type[WorkerError] = WorkerError) -> type[WorkerError]:
    return type(name, (base,), {"name": name, "http_status": status, "__doc__": doc})


BadRequest = _error("BadRequest", 400, "The request body is malformed or has wrong types.")
EmptyText = _error("EmptyText", 400, "A text is empty or only whitespace.")
TextTooLong = _error("TextTooLong", 400, "A text exceeds the configured character limit.")
DuplicateIndex = _error("DuplicateIndex", 400, "Two sections of one batch share an idx.")
TooManySections = _error("TooManySections", 400, "A batch has more sections than allowed.")
OutputPathNotAllowed = _error("OutputPathNotAllowed", 400, "output_path is outside the allowed roots.")
RefWavNotAllowed = _error("RefWavNotAllowed", 400, "ref_wav is outside the allowed roots or missing.")
UnknownLanguage = _error("UnknownLanguage", 400, "The engine has no voice for the requested lang.")
Unauthorized = _error("Unauthorized", 401, "A token is configured and the request lacks it.")
OriginNotAllowed = _error("OriginNotAllowed", 403, "The browser origin is not in the allowed list.")
JobNotFound = _error("JobNotFound", 404, "No job with this id.")
BodyTooLarge = _error("BodyTooLarge", 413, "The request body exceeds the configured size.")
BodyBudgetFull = _error(
    "BodyBudgetFull", 503, "Request bodies being received hold the worker's whole body budget; retry shortly."
)
DecodersBusy = _error(
    "DecodersBusy", 503, "Every voice-decoding slot stayed busy for the configured wait; retry shortly."
)
RequestTimeout = _error("RequestTimeout", 408, "The request body did not arrive in time.")
QueueFull = _error("QueueFull", 429, "The scheduler queue is at its bound; retry later.")
# The words of every QueueFull the shutdown makes, whichever route or moment (a 429 as it begins, a
# queued request the drain ends, an open utterance, the 1001 close's reason): there were three.
SHUTTING_DOWN_REASON = "the worker is shutting down; send the request again once it is back"
ModelLoadError = _error("ModelLoadError", 500, "The engine could not load its model files.")
EngineError = _error("EngineError", 500, "The engine failed while synthesising.")
UnparsableText = _error(  # an EngineError the text caused: sending it again fails again
    "UnparsableText", 400, "espeak-ng's text parser crashed on this text (a bug of espeak-ng's).", EngineError
)
WriteFailed = _error("WriteFailed", 500, "The wav could not be written.")
Loading = _error("Loading", 503, "The worker is still loading its engine.")
ShuttingDown = _error(
    "ShuttingDown",
    503,
    "The worker is shutting down: the last line of a stream it ends; the job goes on when it starts again.",
)
Busy = _error("Busy", 409, "A WebSocket connection already runs a request.")
NotRunning = _error("NotRunning", 409, "Cancel was sent while no request runs.")
SlowConsumer = _error(
    "SlowConsumer", 429, "A listener let too much audio pile up unread; its request was cancelled."
)
UnknownMessage = _error("UnknownMessage", 400, "A WebSocket message has an unknown type.")
AudioNotFound = _error("AudioNotFound", 404, "The section has no audio (not made yet, failed, or removed).")
StateUnavailable = _error(
    "StateUnavailable",
    503,
    "The job or voice could not be recorded in the state directory (disk full?); retry later.",
)
QueueUnavailable = _error("QueueUnavailable", 503, "The shared job queue (Redis) cannot be reached.")
NodeRestarting = _error(
    "NodeRestarting", 503, "A loop of this Redis node ended on a bug and starts again shortly; retry then."
)
Unsupported = _error("Unsupported", 501, "This node does not offer the request (its role or queue mode).")
UnknownVoice = _error("UnknownVoice", 400, "No voice of this name (stored, default or engine voice).")
VoiceNotFound = _error("VoiceNotFound", 404, "No stored voice of this name to delete.")
VoiceExists = _error("VoiceExists", 409, "A voice of this name is already stored.")
VoiceInUse = _error(
    "VoiceInUse", 409, "A queued or running job speaks with this voice; it cannot be deleted."
)
TooManyVoices = _error("TooManyVoices", 409, "The voice store is full (--max-voices); delete one first.")
InvalidAudio = _error("InvalidAudio", 400, "Audio that cannot be decoded or breaks the upload limits.")
UnsupportedFormat = _error("UnsupportedFormat", 400, "A response format this worker cannot encode.")
InternalError = _error(
    "InternalError",
    500,
    "A bug of the worker's: the caller is told an incident id, the worker's log holds the traceback under it.",
)


def error_names() -> list[str]:
    """Every stable error name this module defines (for the OpenAPI document and the fuzzer)."""
    found = {
        value.name
        for value in globals().values()
        if isinstance(value, type) and issubclass(value, WorkerError)
    }
    return sorted(found - {WorkerError.name})


class ErrorBody(msgspec.Struct):
    """The fixed error body (docs/protocol.md, *Errors*): every v1 failure, whatever its status."""

    status: Literal["fail"]
    error: Annotated[str, msgspec.Meta(description="`Name: message`; the names: " + ", ".join(error_names()))]
    traceback: Annotated[
        str | None,
        msgspec.Meta(
            description="null (a bug's traceback stays in the worker's log, under the incident id its InternalError names)"
        ),
    ]
    fallback: Annotated[str | None, msgspec.Meta(description="a device that would work instead, if any")]

    @classmethod
    def of(cls, error: BaseException, traceback: str | None = None) -> ErrorBody:
        if isinstance(error, WorkerError):
            return cls("fail", str(error), traceback, error.fallback)
        return cls("fail", f"{type(error).__name__}: {error}", traceback, None)


def error_body(error: BaseException, traceback: str | None = None) -> dict[str, Any]:
    """The fixed error body of PROTOCOL §1 for any exception, as a dict."""
    return msgspec.structs.asdict(ErrorBody.of(error, traceback))
