"""Golden files of the wire (no tests here): what the worker accepts and sends, recorded once and
compared on every run, so a change to the code that speaks the protocol cannot change the protocol
unnoticed.

Values are compared with their key order (JSON objects keep it; clients may print them); a line is
compared as the value it parses to (tests/test_wire.py checks separately that events and log lines are
byte for byte what `json.dumps` wrote). Values that differ from run to run (job ids, timings, temp
paths) are replaced by placeholders that keep their kind, so a number stays a number and a null stays
a null.

`NPU_WORKER_WRITE_GOLDEN=1 python -m pytest tests/test_wire_golden*.py` rewrites the files:
only for a change of the wire that is meant, and the diff of `tests/golden/` is then the review.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "golden"
VOLATILE_NUMBERS = frozenset(
    {
        "elapsed_sec",
        "elapsed_total_sec",
        "ttfa_ms",
        "since_first_text_ms",
        "load_seconds",
        "rtf",
        "p50",
        "p95",
        "seen",
    }
)
VOLATILE_STRINGS = frozenset({"job_id", "audio", "audio_data"})
JOB_ID = re.compile(r"\b[0-9a-f]{16}\b")  # inside paths and messages


def canonical(line: bytes | str) -> Any:
    """One JSON document (an NDJSON line, a text frame, a body) as the value it parses to."""
    return json.loads(line)


def normalise(value: Any, tmp: str | None = None, key: str | None = None) -> Any:
    """Placeholders for what changes between runs; everything else exactly as sent."""
    if isinstance(value, dict):
        return {k: normalise(v, tmp, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, tmp, key) for v in value]
    if key in VOLATILE_NUMBERS and isinstance(value, int | float) and not isinstance(value, bool):
        return "<number>"
    if key in VOLATILE_STRINGS and isinstance(value, str):
        return "<id>" if key == "job_id" else "<base64>"
    if isinstance(value, str):
        if tmp and tmp in value:
            value = value.replace(tmp, "<tmp>")
        return JOB_ID.sub("<id>", value)
    return value


def loosen(body: Any) -> Any:
    """A BadRequest whose message is the validator's wording (a type or shape complaint), wherever it
    sits in the answer: its name, its OpenAI `param` and everything else stay; the sentence after
    the name does not count."""
    if isinstance(body, list):
        return [loosen(item) for item in body]
    if not isinstance(body, dict):
        return body
    body = {key: loosen(value) for key, value in body.items()}
    if isinstance(body.get("error"), str) and body["error"].startswith("BadRequest: "):
        body["error"] = "BadRequest: <validation message>"
    if body.get("code") == "BadRequest" and isinstance(body.get("message"), str):
        body["message"] = "<validation message>"
    return body


def check(name: str, actual: Any) -> None:
    """`actual` equals `tests/golden/<name>.json`, key order included (or rewrite it, see above)."""
    path = GOLDEN / f"{name}.json"
    rendered = json.dumps(actual, ensure_ascii=False, indent=1) + "\n"
    if os.environ.get("NPU_WORKER_WRITE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert rendered == expected, (
        f"{path.name} differs from what the worker now sends:\n{_diff(expected, rendered)}"
    )


def _diff(expected: str, actual: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        expected.splitlines(), actual.splitlines(), "golden", "now", lineterm="", n=2
    )
    return "\n".join(list(lines)[:80])
