"""JSON in and out of the worker: one msgspec encoder, and typed decoding into the wire model.

Every body, message and event is a msgspec Struct; decoding validates a document against it in one
pass, and what a caller did wrong becomes a named error (`refusals.py` words it). Pure code: no I/O.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from .duplicate_keys import refuse_duplicate_keys
from .errors import BadRequest
from .refusals import MAX_WORDED_BYTES, invalid, malformed, refuse_hostile

ENCODER = msgspec.json.Encoder()  # one encoder for every body, line and frame the worker sends
# RFC 8259 lets a parser ignore a leading byte-order mark, and Python's `json.loads` of bytes does (what
# sovits_worker-style servers read bodies with): Windows tools write one (PowerShell 5's UTF8 encoding).
UTF8_BOM = b"\xef\xbb\xbf"


@functools.cache
def _decoder(into: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(into)


def decode(raw: bytes | str, into: Any) -> Any:
    """`raw` JSON as `into`, or a named error that says what is wrong and where."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw  # (refused below)
    data = data.removeprefix(UTF8_BOM)
    refuse_hostile(data)
    try:
        document = _decoder(into).decode(data)
    except msgspec.ValidationError as exc:
        failure = exc
    except msgspec.DecodeError as exc:
        raise malformed(data, str(exc)) from None
    except RecursionError:
        raise BadRequest("invalid JSON: nested too deeply") from None
    else:
        refuse_duplicate_keys(data, into)  # a key given twice: msgspec kept the last, a proxy the first?
        return document
    # A type error may be found before the document's end: a document that is not JSON at all is
    # reported as such first (as Python's parser, which read it whole, did). Error path only, but on
    # the event loop: the syntax is checked without building the document (decoding 8 MiB of small
    # objects held the loop for a third of a second), and `invalid` decodes only the value it quotes.
    try:
        msgspec.json.decode(data, type=msgspec.Raw)
    except msgspec.DecodeError as exc:
        raise malformed(data, str(exc)) from None
    except RecursionError:
        raise BadRequest("invalid JSON: nested too deeply") from None
    if len(data) <= MAX_WORDED_BYTES:  # the key given twice first: the value refused may be the one not meant
        refuse_duplicate_keys(data, into)
    raise invalid(failure, into, msgspec.Raw(data)) from None


def convert(value: Any, into: Any) -> Any:
    """An already decoded document (e.g. a batch item merged over its defaults) as `into`."""
    try:
        return msgspec.convert(value, into)
    except msgspec.ValidationError as exc:
        raise invalid(exc, into, value) from None


def load(body: bytes | str | Any, into: Any) -> Any:
    """A body as it arrived (JSON bytes or text) or already decoded (a dict, e.g. in tests), as `into`."""
    if isinstance(body, bytes | str):
        return decode(body, into)
    return convert(body, into)


def tag_of(document: bytes | str | Any, field: str) -> tuple[bool, Any] | None:
    """(whether the document is a JSON object, the value of its `field`), to name an unknown message
    type; None when it is no JSON document at all. An array or object value comes as its JSON text
    (a type name is compared with the value: `[]` raised TypeError, unhashable). Error path only: of a
    document not yet decoded, only the top level is (its members stay msgspec.Raw). A document that is
    not JSON as `decode` reads it (its syntax checked before its shape; an integer Python's parser cannot
    convert) is None, so a socket words it as an HTTP body is worded: `invalid JSON: ...`."""
    if isinstance(document, bytes | str):
        raw = document.encode("utf-8", "surrogatepass") if isinstance(document, str) else document
        raw = raw.removeprefix(UTF8_BOM)
        try:
            refuse_hostile(raw)
            msgspec.json.decode(raw, type=msgspec.Raw)  # `[[[…` was "not a JSON object"
            document = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
        except msgspec.ValidationError:
            return False, None
        except (BadRequest, msgspec.MsgspecError, RecursionError):
            return None
    if not isinstance(document, dict):
        return False, None
    value = document.get(field)
    if isinstance(value, msgspec.Raw):
        try:
            value = msgspec.json.decode(value)
        except (msgspec.MsgspecError, RecursionError):  # e.g. 1e999: no Python value, still no type
            value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, list | dict):
        return True, ENCODER.encode(value).decode("utf-8")
    return True, value


def encode(value: Any) -> bytes:
    """`value` as JSON, spaced as Python's `json.dumps` spaces it (`", "`, `": "`): an NDJSON line or
    a text frame is byte for byte what the worker sent before msgspec (clients may match on it)."""
    return msgspec.json.format(ENCODER.encode(value), indent=0)


def encode_entry(event: msgspec.Struct, seq: int) -> bytes:
    """An event with its log position appended as the last field (`{..., "seq": 3}`)."""
    body = ENCODER.encode(event)
    return msgspec.json.format(b'%s,"seq":%d}' % (body[:-1], seq), indent=0)
