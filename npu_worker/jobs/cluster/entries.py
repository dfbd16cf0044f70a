"""What the store reads back from Redis, decoded: a work item, a log entry, a node's heartbeat.

Apart from `store.py` because each is a check of values any local process can write to Redis: one
not of the worker's making is dropped (an item of pos -1, a heartbeat left out), never a loop that
dies on it nor a 500 from /health.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from ...protocol import decode_event
from ..model import LogEntry

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkItem:
    stream: str
    entry_id: str
    job_id: str
    pos: int
    spec: str | None = None


def entry_of(entry_id: bytes | str, fields: dict[Any, Any]) -> LogEntry:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    raw = fields[b"e"] if b"e" in fields else fields["e"]
    return LogEntry(int(text.split("-")[1]), decode_event(raw))


# Far above any beat a node writes (its load_error is cut at 1000 characters): /health echoes each live
# node's beat, so a larger value not of ours would be sent to every caller (and parsed every second).
MAX_BEAT_BYTES = 64 * 1024
# The rates an engine's audio can have (a voice upload's bounds): an api node reports the first live
# engine node's and encodes speech at it, so 2**40 made every OpenAI wav answer a 500.
MIN_RATE, MAX_RATE = 8_000, 192_000


def node_entry(raw: bytes) -> dict[str, Any] | None:
    """A node's heartbeat, or None for a value not of our making (any local process can write to
    Redis): /health and the engine count never fail on it, nor echo one of any size."""
    if len(raw) > MAX_BEAT_BYTES:
        return None
    try:
        body = json.loads(raw)
        seen, role = float(body["seen"]), body["role"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(role, str) or seen != seen:
        return None
    if "backend" in body:  # an engine's description (what an api node reports and starts jobs with)
        types = {"backend": str, "device": str, "precision": str, "sample_rate": int, "model": str}
        if not all(isinstance(body.get(key), kind) for key, kind in types.items()):
            return None
        if isinstance(body["sample_rate"], bool) or not MIN_RATE <= body["sample_rate"] <= MAX_RATE:
            return None
    spoken = body.get("languages")
    if "languages" in body and not (
        isinstance(spoken, list) and all(isinstance(code, str) and len(code) <= 64 for code in spoken)
    ):
        del body["languages"]  # (a value not of ours: the node is still shown, narrowing nothing)
    calls = body.get("decoder_calls")
    if "decoder_calls" in body and not (
        isinstance(calls, dict)
        and set(calls) == {"total", "cpu_overflow"}
        and all(type(value) is int and value >= 0 for value in calls.values())
    ):
        del body["decoder_calls"]  # (a value not of ours: the node is still shown, without it)
    return {**body, "seen": seen}


def work_items(reply: Any) -> list[WorkItem]:
    items = []
    for stream, rows in reply or []:
        name = stream.decode() if isinstance(stream, bytes) else stream
        for entry_id, fields in rows:
            items.append(work_item(name, entry_id.decode(), fields))
    return items


def work_item(stream: str, entry_id: str, fields: dict[bytes, bytes] | None) -> WorkItem:
    """One work entry; one deleted while pending, or not of our making (any local process can write to
    Redis), is an item of pos -1: acknowledged and dropped, never a consumer loop that dies on it."""
    if not fields:  # deleted while pending: nothing to do but acknowledge
        return WorkItem(stream, entry_id, "", -1)
    try:
        job_id, pos = fields[b"job"].decode(), int(fields[b"pos"])
        spec = fields[b"spec"].decode(errors="replace") if b"spec" in fields else None
    except (KeyError, ValueError):
        log.warning("dropped a malformed work item %s in %s", entry_id, stream)
        return WorkItem(stream, entry_id, "", -1)
    return WorkItem(stream, entry_id, job_id, pos, spec)
