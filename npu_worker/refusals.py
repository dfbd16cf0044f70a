"""Why a document is refused, in words a caller can act on: the hostile cases, and validation errors.

The hostile cases stay refused as they were before msgspec: bytes that are not UTF-8 anywhere in the
body and integers beyond Python's 4300-digit conversion limit (both checked here, since msgspec skips
a field the worker ignores without looking at it), nesting deeper than the recursion limit and lone
surrogates (msgspec refuses those itself; the message then says where, as Python's parser did). A
validation error becomes a `BadRequest` whose message names the place
(`Expected `str`, got `int` - at `$.sections[0].text``) and whose `param` is the top-level field
(OpenAI's error object names it); an empty or blank string says so and what to send instead
(`ref_wav is empty: leave it out or send null for the default - at `$.ref_wav``). Only the error
path pays for the wording, and never with a full decode of a body over MAX_WORDED_BYTES (it runs on
the event loop). Pure code.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
from msgspec.inspect import Metadata

from .errors import BadRequest, WorkerError

MAX_INT_DIGITS = 4300  # what int() converts (sys.get_int_max_str_digits); longer is refused
# Python's parser, which words the hostile cases, runs on the event loop and holds it (about 0.5 s for
# 8 MiB of small objects): a larger body is worded from msgspec's own message, and a long digit run
# in it is left to msgspec (it refuses such an integer where it reads one; elsewhere it is skipped).
MAX_WORDED_BYTES = 64 * 1024
_DIGITS = bytes(49 if 48 <= byte <= 57 else 48 for byte in range(256))  # digit -> "1", other -> "0"
_HUGE = b"1" * (MAX_INT_DIGITS + 1)
_AT = re.compile(r" - at `(\$[^`]*)`$")
_BOUND = re.compile(r"^Expected `(?:int|float)(?: \| null)?` (?:>=|<=) ")
# An empty (or, where the field asks for a non-blank one, blank) string: msgspec says "Expected `str`
# of length >= 1", which a caller who sent `""` has to translate.
_EMPTY = re.compile(r"^Expected `str(?: \| null)?` (?:of length >= 1|matching regex '\\\\S') - at ")
_MISSING = re.compile(r"^Object missing required field `([^`]+)`")
_STEP = re.compile(r"\.([^.\[\]`]+)|\[(\d+)\]")
# A high surrogate's escape not followed by a low one's: msgspec calls it "Input data was truncated",
# which a body over MAX_WORDED_BYTES (any speech request with inline `ref_audio`) then said. Led by a
# literal, so the scan is fast (8 MiB of surrogate pairs: 74 ms, of base64: 14 ms).
_LONE_HIGH_HALF = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])")
TRUNCATED = "Input data was truncated"
MAX_SURROGATE_LOOKS = 64  # candidates looked at, and backslashes counted before each, at most


def refuse_hostile(data: bytes) -> None:
    """What msgspec would let through where it skips an unknown field: bytes that are not UTF-8, and
    integers too long to convert (both checked on the whole body, as Python's parser did; the second
    only up to MAX_WORDED_BYTES)."""
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("the body is not UTF-8") from None
    # Only a body longer than the limit can hold such an integer; digits inside a string do not count,
    # so a long run of digits is confirmed by Python's parser (it refuses what it cannot convert).
    if MAX_INT_DIGITS < len(data) <= MAX_WORDED_BYTES and _HUGE in data.translate(_DIGITS):
        try:
            json.loads(data)
        except ValueError:
            raise BadRequest("invalid JSON: a number has too many digits") from None
        except RecursionError:
            raise BadRequest("invalid JSON: nested too deeply") from None


def malformed(data: bytes, reason: str) -> WorkerError:
    """What is wrong with a document msgspec could not parse, worded as Python's parser words it
    (line and column), or naming where a lone surrogate is (its top-level field is the `param`);
    only the error path pays for this, and only for a body of at most MAX_WORDED_BYTES."""
    if len(data) > MAX_WORDED_BYTES:
        if reason == TRUNCATED and _holds_lone_high_half(data):  # not located: that needs the full parse
            return BadRequest("the body holds a lone surrogate (not valid Unicode)")
        return BadRequest(f"invalid JSON: {reason}")
    try:
        body = json.loads(data)
    except json.JSONDecodeError as exc:
        return BadRequest(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        return BadRequest("invalid JSON: nested too deeply")
    except ValueError:
        return BadRequest("invalid JSON: a number has too many digits")
    where = lone_surrogate_at(body)
    if where is not None:
        # No file name, log line or frame can carry one: the document is refused here, once.
        field = "" if where == "a key" else re.split(r"[.\[]", where, maxsplit=1)[0]
        message = f"{where or 'the body'} holds a lone surrogate (not valid Unicode)"
        return BadRequest(message, param=field or None)
    return BadRequest(f"invalid JSON: {reason}")  # e.g. NaN or Infinity, which only Python's parser accepts


def _holds_lone_high_half(data: bytes) -> bool:
    """Whether `data` escapes a high surrogate with no low one after it; an odd run of backslashes
    before it makes it an escape (`\\\\ud800` is a backslash and text)."""
    for looked, found in enumerate(_LONE_HIGH_HALF.finditer(data)):
        if looked == MAX_SURROGATE_LOOKS:
            return False
        start, run = found.start(), 0
        while start > run and data[start - run - 1] == 0x5C and run < MAX_SURROGATE_LOOKS:
            run += 1
        if run % 2 == 0 and run < MAX_SURROGATE_LOOKS:  # (a longer run: unsure, msgspec's words)
            return True
    return False


def lone_surrogate_at(body: Any) -> str | None:
    """The dotted path of the first string (or key) that is not valid Unicode, else None.

    Iterative: the document may be nested nearly as deep as the parser allows."""
    stack: list[tuple[str, Any]] = [("", body)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if not _is_unicode(value):
                return where
        elif isinstance(value, dict):
            for key, item in value.items():
                if not _is_unicode(key):
                    return where or "a key"
                stack.append((f"{where}.{key}" if where else key, item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    return None


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- validation errors ------------------------------------------------------------------------------


def invalid(exc: msgspec.ValidationError, into: Any, document: Any) -> WorkerError:
    """A msgspec validation error as BadRequest: msgspec's words with the path, except a number out of
    a two-sided range, which says the range and the value sent (`speed must be between 0.25 and 4.0,
    got 9`). `param` is the top-level field at fault, or None."""
    text = str(exc)
    found = _AT.search(text)
    path = found.group(1) if found else "$"
    steps = _steps(path)
    missing = _MISSING.match(text)
    message = text
    if _EMPTY.match(text) and steps and isinstance(steps[-1], str):
        empty = "empty" if _value_at(document, steps) == "" else "blank"  # (by what was sent, not the rule)
        message = f"{steps[-1]} is {empty}: {_empty_hint(into, steps)} - at `{path}`"
    elif _BOUND.match(text):
        bounds = _bounds(into, steps)
        if bounds is not None:
            name = next((s for s in reversed(steps) if isinstance(s, str)), path)
            message = f"{name} must be between {bounds[0]} and {bounds[1]}, got {_value_at(document, steps)}"
    error = BadRequest(message)
    top = steps[0] if steps else (missing.group(1) if missing else None)
    error.param = top if isinstance(top, str) else None
    return error


def _empty_hint(into: Any, steps: list[str | int]) -> str:
    """What to send instead of an empty string: nothing or null where the field may be null (for what
    its `extra["null"]` says null means there, else its default), else what its description asks for."""
    node: Any = msgspec.inspect.type_info(into)
    for step in steps:
        node = _step_into(node, step)
        if node is None:
            return "send a value"
    kinds = _members(node)
    if any(isinstance(kind, msgspec.inspect.NoneType) for kind in kinds):
        meant = [(kind.extra or {}).get("null") for kind in kinds if isinstance(kind, Metadata)]
        return f"leave it out or send null {next(filter(None, meant), 'for the default')}"
    for kind in kinds:
        if isinstance(kind, Metadata) and kind.extra_json_schema:
            return f"send {kind.extra_json_schema.get('description', 'a value')}"
    return "send a value"


def _steps(path: str) -> list[str | int]:
    """`$.sections[0].text` → ["sections", 0, "text"]; it stops at a step msgspec could not name
    (`[...]`)."""
    steps: list[str | int] = []
    position = 1  # after "$"
    while (step := _STEP.match(path, position)) is not None:
        key, index = step.groups()
        steps.append(key if key is not None else int(index))
        position = step.end()
    return steps


def _value_at(document: Any, steps: list[str | int]) -> Any:
    """The value at `steps`; of a `msgspec.Raw` document only the containers on the way are decoded
    (their members stay raw), so quoting one field of a large body costs no full decode."""
    try:
        for step in steps:
            if isinstance(document, msgspec.Raw):
                document = msgspec.json.decode(document, type=_RAW_CONTAINER[isinstance(step, str)])
            document = document[step]
        return msgspec.json.decode(document) if isinstance(document, msgspec.Raw) else document
    except (KeyError, IndexError, TypeError, msgspec.MsgspecError):
        return "?"


_RAW_CONTAINER = {True: dict[str, msgspec.Raw], False: list[msgspec.Raw]}


def _bounds(into: Any, steps: list[str | int]) -> tuple[float, float] | None:
    """The (ge, le) of the number field at `steps` inside `into`, when it has both."""
    node: Any = msgspec.inspect.type_info(into)
    for step in steps:
        node = _step_into(node, step)
        if node is None:
            return None
    for kind in _members(node):
        if isinstance(kind, msgspec.inspect.IntType | msgspec.inspect.FloatType):
            if kind.ge is not None and kind.le is not None:
                return kind.ge, kind.le
    return None


def _members(node: Any) -> list[Any]:
    return list(node.types) if isinstance(node, msgspec.inspect.UnionType) else [node]


def _step_into(node: Any, step: str | int) -> Any:
    for kind in _members(node):
        if isinstance(step, str) and isinstance(kind, msgspec.inspect.StructType):
            for field in kind.fields:
                if field.encode_name == step:
                    return field.type
        if isinstance(step, int) and isinstance(kind, msgspec.inspect.ListType):
            return kind.item_type
    return None
