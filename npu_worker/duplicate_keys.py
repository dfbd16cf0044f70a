"""A JSON object that gives one key twice is refused: msgspec (and most parsers) keep the last, while a
proxy or a WAF in front of the worker may have checked the first (`{"text": "a", "text": "b"}`), so one
document would mean two things (RFC 8259 §4: such names "SHOULD be unique"; RFC 8785 refuses them).

Checked on a document msgspec has already accepted. A body of few strings or of at most
KEYS_SCANNED_BYTES (a `/synth` body, a `/ws` message, an OpenAI request with megabytes of inline audio):
its keys as written, found string by string with `bytes.find` (a string with escapes, and the spaces
after one, matched in C); none written twice and none escaped, no object repeats one; else, up to
MAX_WORDED_BYTES, Python's parser looks, object by object, and names it. A larger body of many strings
(a lecture batch), or one past MAX_WORDED_BYTES that the keys did not clear: the objects the worker
reads, level by level in C (`_refuse_dropped`), the key then named by Python's parser up to
MAX_WORDED_BYTES, told without its name above. Pure code.
"""

from __future__ import annotations

import collections.abc
import json
import re
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
_ELEMENTS = msgspec.json.Decoder(list[msgspec.Raw])
ONCE = "give each key once"
READ_AS = "read_as"  # a `Meta.extra` key: the Struct an array of `Any` is read as, item by item
# A JSON string whole, its escapes stepped over in C (a Python loop over 4 M escaped quotes or 8 MiB of
# spaces between strings held the event loop 1.2–1.3 s, 70–120 times msgspec's decode of the body:
# benchmarks/SERVER_OVERHEAD.md, stop 61, rvc62).
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_SPACES = re.compile(rb"[ \t\r\n]*+")
_ARRAYS = (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Set)  # a JSON array


def refuse_duplicate_keys(data: bytes, into: Any = None) -> None:
    """BadRequest naming the first key an object of `data` (JSON msgspec accepted as `into`) gives twice."""
    keys = written_keys(data, None if len(data) <= KEYS_SCANNED_BYTES else FEW_STRINGS)
    if keys is not None and len(set(keys)) == len(keys) and b"\\" not in b"".join(keys):
        return
    if keys is not None and len(data) <= MAX_WORDED_BYTES:
        _name_repeated(data)
        return
    # Many strings, or a key escaped or written twice in a body past MAX_WORDED_BYTES: Python's parser
    # on 8 MiB of `[], ` held the event loop 0.7 s, 30 times msgspec's decode; the objects read, in C.
    try:
        _refuse_in_objects_read(data, into)
    except BadRequest:
        if len(data) <= MAX_WORDED_BYTES:
            _name_repeated(data)  # the key named where Python's parser may read the body again
        raise


def _refuse_in_objects_read(data: bytes, into: Any) -> None:
    """A large body: its top level and each object the worker reads in it (`into`'s Struct fields,
    an object or an array of them, level by level: a batch's sections, an OpenAI body's `voice`
    object, an OpenAI batch's items and theirs), in C; an ignored field's value is not looked into, as it is not read (8 MiB of small
    objects in one: parsing them again held the event loop many times longer than decoding them)."""
    try:
        members = _MEMBERS.decode(data)
    except msgspec.ValidationError:  # not an object (`into` is Any): no member of it is read by name
        return
    _refuse_dropped([members], data.count(b":"))
    _refuse_in_members_read([members], into)


def _refuse_in_members_read(objects: list[dict[str, msgspec.Raw]], into: Any) -> None:
    """The members of `objects` that `into` reads as an object or an array of objects, checked in C,
    all of one field's objects at once, then their own members read."""
    for name, (inner, listed) in _objects_read(into).items():
        values = [bytes(raw) for one in objects if (raw := one.get(name)) is not None]
        nested, colons, braces = _objects_in(values, listed)
        if nested:
            _refuse_dropped(nested, colons)
            # (no more `{` than objects: no member of them is an object or holds one, no Python step each)
            if braces > len(nested):
                _refuse_in_members_read(nested, inner)


def _objects_in(values: list[bytes], listed: bool) -> tuple[list[dict[str, msgspec.Raw]], int, int]:
    """The objects among `values` (JSON values written; where `listed`, the objects in those that are
    arrays), decoded in C, and the colons and opening braces written in them. An array of objects
    whole, as it is; of another, each element that is an object (one that is not fails on its own, as
    an OpenAI batch's item does: the others are read)."""
    objects: list[dict[str, msgspec.Raw]] = []
    colons = braces = 0
    pieces = [] if listed else [value for value in values if value[:1] == b"{"]
    for array in values if listed else ():
        if array[:1] != b"[":
            continue
        try:
            objects.extend(_OBJECTS.decode(array))
            colons, braces = colons + array.count(b":"), braces + array.count(b"{")
        except msgspec.ValidationError:
            pieces.extend(item for raw in _ELEMENTS.decode(array) if (item := bytes(raw))[:1] == b"{")
    if pieces:
        joined = b"[" + b",".join(pieces) + b"]"
        objects.extend(_OBJECTS.decode(joined))
        colons, braces = colons + joined.count(b":"), braces + joined.count(b"{")
    return objects, colons, braces


def _refuse_dropped(objects: list[dict[str, msgspec.Raw]], colons: int) -> None:
    """BadRequest when decoding JSON that held `colons` colons into `objects` (their members' values
    left as written) dropped a member: a key given twice. Encoded again, the values are byte for byte as written and every colon
    but a key's own is in them; so the colons counted in both differ exactly when a member went, unless
    a key holds a colon (written escaped, encoded as is): no field's name does, that is refused too."""
    again = _ENCODER.encode(objects)
    if colons == again.count(b":") and not any(":" in key for one in objects for key in one):
        return
    raise BadRequest(f"an object of the body gives a key twice, or a key holding a colon; {ONCE}")


def _objects_read(into: Any) -> dict[str, tuple[Any, bool]]:
    """`into`'s fields (a Struct or a union of Structs) read as an object or an array: each JSON name
    with the type its objects are read as and whether they come in an array."""
    read: dict[str, tuple[Any, bool]] = {}
    structs = [kind for kind in _kinds(into) if _is_struct(kind)]
    for field in (field for kind in structs for field in msgspec.structs.fields(kind)):
        for value in _kinds(field.type):
            if typing.get_origin(value) in _ARRAYS:
                element = (typing.get_args(value) or (Any,))[0]
                read[field.encode_name] = (_read_as(field.type) if element is Any else element, True)
            elif _is_struct(value):
                read[field.encode_name] = (value, False)
    return read


def _read_as(kind: Any) -> Any:
    """What an array of `Any` is read as later, named by its `Meta(extra={READ_AS: Struct})` (an OpenAI
    batch's items, each checked on its own after the batch decoded, are speech bodies); else Any."""
    metas = typing.get_args(kind)[1:] if typing.get_origin(kind) is Annotated else ()
    return next(
        (meta.extra[READ_AS] for meta in metas if READ_AS in (getattr(meta, "extra", None) or {})), Any
    )


def _is_struct(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, msgspec.Struct)


def _kinds(kind: Any) -> tuple[Any, ...]:
    """The types a (possibly Annotated, possibly union) type stands for."""
    if typing.get_origin(kind) is Annotated:
        return _kinds(typing.get_args(kind)[0])
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return tuple(one for arg in typing.get_args(kind) for one in _kinds(arg))
    return (kind,)


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
        if data[end - 1] == 92:  # an escape before it (`\"`, `\\`): the string's end found in C
            whole = _STRING.match(data, start)  # (msgspec read the string: it matches)
            end = whole.end() - 1 if whole else end
        spaces = _SPACES.match(data, end + 1)  # (matches b"" too)
        after = spaces.end() if spaces else end + 1
        if data[after : after + 1] == b":":
            keys.append(data[start : end + 1])
        start = find(b'"', after)
    return keys


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
