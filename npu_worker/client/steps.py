"""The steps a plan of the pipeline client yields and a driver performs (`sync.py`, `aio.py`).

A plan is a generator that yields steps (`Call` a JSON endpoint, `Follow` an NDJSON stream into the
collector, `Sleep`, `Deliver` an event to `on_progress`) and is sent each step's outcome, or has the
step's `TransportError`/`WorkerHTTPError` thrown into it; it returns the result.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Call:
    """A JSON request; the driver sends back the parsed body (a dict). `at_once`: the worker answers it
    at once (a poll), so its answer is awaited for the answer timeout only, not the read timeout."""

    method: str
    path: str
    body: Any = None
    at_once: bool = False


@dataclass(frozen=True)
class Follow:
    """Open an NDJSON stream and feed its lines to the collector until `done` or the stream ends;
    the driver sends back what broke it (an exception) or None. `at_once`: as for `Call` (a re-attach;
    its lines may then be as far apart as the read timeout allows)."""

    method: str
    path: str
    body: Any = None
    at_once: bool = False


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Deliver:
    """Pass one event to `collector.accept` (the async driver awaits what `on_progress` returns)."""

    event: dict[str, Any]


Step = Call | Follow | Sleep | Deliver
Plan = Generator[Step, Any, dict[str, Any]]
