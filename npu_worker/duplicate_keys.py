"""A JSON object that gives one key twice is refused: msgspec (and most parsers) keep the last, while a
proxy or a WAF in front of the worker may have checked the first (`{"text": "a", "text": "b"}`), so one
document would mean two things (RFC 8259 §4: such names "SHOULD be unique"; RFC 8785 refuses them).

Checked on a document msgspec has already accepted. A body of few strings or of at most
KEYS_SCANNED_BYTES (a `/synth` body, a `/ws` message, an OpenAI request with megabytes of inline audio):
its keys as written, found string by string with `bytes.find`; none written twice and none escaped, no
object repeats one; else Python's parser looks, object by object, and names it. A larger body of many
strings (a lecture batch): the objects the worker reads, level by level in C (`_refuse_dropped`), the
key then named by Python's parser up to MAX_WORDED_BYTES, told without its name above. Pure code.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Annotated, Any

import msgspec

from .errors import BadRequest
from .refusals import MAX_WORDED_BYTES

FEW_STRINGS = 32  # in a body over KEYS_SCANNED_BYTES, up to this many strings are looked at one by one
# A body up to this size has every string looked at in Python: at 64 KiB of short strings that held the
# event loop 10–13 ms a body, the C path 0.2–0.3 ms (2026-12-07: `refuse_duplicate_keys` on 64 KiB of
# `"a",` / `{"a":1},` / sections, `time.perf_counter` over 5 calls, a 2-core VM at load ≈ 10).
KEYS_SCANNED_BYTES = 4 * 1024
KEY_SHOWN = 60  # characters of a repeated key its refusal quotes, at most
_ENCODER = msgspec.json.Encoder()
_MEMBERS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_OBJECTS = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
ONCE = "give each key once"


def refuse_duplicate_keys(data: bytes, into: Any = None) -> None:
    """BadRequest naming the first key an object of `data` (JSON msgspec accepted as `into`) gives twice."""
    keys = written_keys(data, None if len(data) <= KEYS_SCANNED_BYTES else FEW_STRINGS)
    if keys is None:
        try:
            _refuse_in_objects_read(data, into)
        except BadRequest:
            if len(data) <= MAX_WORDED_BYTES:
                _name_repeated(data)  # the key named where Python's parser may read the body again
            raise
        return
    if len(set(keys)) == len(keys) and b"\\" not in b"".join(keys):
        return
    _name_repeated(data)


def _refuse_in_objects_read(data: bytes, into: Any) -> None:
    """A large body of many strings (a batch): its top level and each object of its arrays the worker
    reads (`into`'s fields: a batch's sections, an OpenAI batch's items), level by level in C; an
    ignored field's value is not looked into, as it is not read (8 MiB of small objects in one: parsing
    them again held the event loop many times longer than decoding them)."""
    try:
        members = _MEMBERS.decode(data)
    except msgspec.ValidationError:  # not an object (`into` is Any): no member of it is read by name
        return
    _refuse_dropped([members], data)
    arrays = [members[name] for name in _fields(into) if bytes(members.get(name, b"")).startswith(b"[")]
    for raw in arrays:
        try:
            objects = _OBJECTS.decode(raw)
        except msgspec.ValidationError:  # not an array of objects: not one the worker reads
            continue
        _refuse_dropped(objects, bytes(raw))


def _refuse_dropped(objects: list[dict[str, msgspec.Raw]], written: bytes) -> None:
    """BadRequest when decoding `written` into `objects` (their members' values left as written) dropped
    a member: a key given twice. Encoded again, the values are byte for byte as written and every colon
    but a key's own is in them; so the colons counted in both differ exactly when a member went, unless
    a key holds a colon (written escaped, encoded as is): no field's name does, that is refused too."""
    again = _ENCODER.encode(objects)
    if written.count(b":") == again.count(b":") and not any(":" in key for one in objects for key in one):
        return
    raise BadRequest(f"an object of the body gives a key twice, or a key holding a colon; {ONCE}")


def _fields(into: Any) -> set[str]:
    """The field names of `into`, a Struct or a union of Structs (none for another type)."""
    kinds = typing.get_args(into) if typing.get_origin(into) in (typing.Union, types.UnionType) else (into,)
    kinds = tuple(
        typing.get_args(kind)[0] if typing.get_origin(kind) is Annotated else kind for kind in kinds
    )
    return {name for kind in kinds for name in getattr(kind, "__struct_fields__", ())}


def written_keys(data: bytes, most: int | None = None) -> list[bytes] | None:
    """The keys of `data` (JSON msgspec accepted) as written, with their quotes, in order: each string
    is found whole from its opening quote (`bytes.find`, memchr), so no key is read out of a value.
    None past `most` strings."""
    keys: list[bytes] = []
    find = data.find
    start = find(b'"')
    strings = 0
    while start >= 0:
        strings += 1
        if most is not None and strings > most:
            return None
        end = find(b'"', start + 1)
        while data[end - 1] == 92 and _escaped(data, end):  # a `\"` inside the string
            end = find(b'"', end + 1)
        after = end + 1
        while data[after : after + 1] in (b" ", b"\t", b"\r", b"\n"):  # (b"" past the end: never)
            after += 1
        if data[after : after + 1] == b":":
            keys.append(data[start : end + 1])
        start = find(b'"', after)
    return keys


def _escaped(data: bytes, quote: int) -> bool:
    """The quote at `quote` follows an odd run of backslashes."""
    run = quote - 1
    while data[run] == 92:
        run -= 1
    return (quote - 1 - run) % 2 == 1


def _name_repeated(data: bytes) -> None:
    """Python's parser, object by object: BadRequest naming the first key given twice, if one is."""
    try:
        json.loads(data, object_pairs_hook=_once_each, parse_int=len, parse_float=len, parse_constant=len)
    except _Repeated as repeated:  # named as JSON writes it (ASCII: a key's controls cannot break a log line)
        key = repeated.key if len(repeated.key) <= KEY_SHOWN else repeated.key[:KEY_SHOWN] + "..."
        raise BadRequest(f"the key {json.dumps(key)} is given twice in one object; {ONCE}") from None
    except RecursionError:
        raise BadRequest("invalid JSON: nested too deeply") from None
    except ValueError as exc:  # what msgspec took and Python's parser did not: no second reading of it
        raise BadRequest(f"invalid JSON: {exc}") from None


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _once_each(pairs: list[tuple[str, Any]]) -> None:
    """Python's parser's hook, object by object: its members' keys, each once (the document is not kept)."""
    if len(pairs) > 1 and len({key for key, _ in pairs}) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
