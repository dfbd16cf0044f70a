"""Fuzzing the HTTP API over a real socket: hypothesis strategies for hostile requests and the check
that every answer has a documented shape. Used by tests/test_fuzz.py (small) and tools/fuzz_http.py
(long runs that print their figures)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_worker.protocol import error_names

ERROR_NAMES = set(error_names()) | {"Cancelled"}
ERROR_KEYS = {"status", "error", "traceback", "fallback"}

# Strings a careless or hostile client sends: lone surrogates, NULs, paths that climb, huge and empty.
nasty_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["", " ", "\ud800", "a\udfffb", "\x00", "../../etc/passwd", "/etc/x.wav", "/tmp/../x.wav"]
    ),
    st.text(alphabet="가나다 .", min_size=1, max_size=20),
)
numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.sampled_from([0, -1, 0.25, 4.0, 4.01, 2**63, 1e308]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, nasty_text)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(nasty_text, inner, max_size=4)),
    max_leaves=12,
)


def field_value(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(good, good, json_values)


def output_path(root: str) -> st.SearchStrategy[Any]:
    names = st.text(alphabet="abc가/._-", min_size=1, max_size=12)
    return st.one_of(st.builds(lambda n: f"{root}/{n}.wav", names), nasty_text, json_values)


def synth_body(root: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"text": field_value(nasty_text), "output_path": output_path(root)},
        optional={
            "lang": field_value(st.sampled_from(["ko", "en", "ja"])),
            "speed_factor": field_value(numbers),
            "seed": field_value(st.integers()),
            "ref_wav": field_value(nasty_text),
        },
    )


def batch_body(root: str) -> st.SearchStrategy[dict[str, Any]]:
    section = st.fixed_dictionaries(
        {"text": field_value(nasty_text)},
        optional={"idx": field_value(st.integers(-3, 50)), "output_path": output_path(root)},
    )
    return st.fixed_dictionaries(
        {"sections": st.one_of(st.lists(section, max_size=4), json_values)},
        optional={"stream": field_value(st.booleans()), "lang": field_value(st.just("ko"))},
    )


def speech_body() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"input": field_value(nasty_text), "voice": field_value(st.sampled_from(["default", "alloy"]))},
        optional={
            "response_format": field_value(st.sampled_from(["wav", "pcm", "mp3", "flac", "opus", "aac"])),
            "speed": field_value(numbers),
            "language": field_value(st.sampled_from(["ko", "en"])),
            "stream_format": field_value(st.sampled_from(["audio", "sse"])),
        },
    )


@dataclass(frozen=True)
class Probe:
    method: str
    path: str
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()


def probes(root: str) -> st.SearchStrategy[Probe]:
    def encoded(body: Any) -> bytes:
        return json.dumps(body).encode()

    raw_bodies = st.one_of(
        st.binary(max_size=64),
        st.sampled_from([b"[" * 5000, b'{"text": 1' + b"1" * 5000 + b"}", b"\xff\xfe"]),
    )
    job_ids = st.one_of(
        st.text(alphabet="0123456789abcdef", max_size=32), nasty_text.map(lambda t: t.replace("/", ""))
    )
    return st.one_of(
        st.builds(lambda b: Probe("POST", "/synth", encoded(b)), synth_body(root)),
        st.builds(lambda b: Probe("POST", "/synth_batch?async=1", encoded(b)), batch_body(root)),
        st.builds(lambda b: Probe("POST", "/synth_batch", encoded(b)), batch_body(root)),
        st.builds(
            lambda b, p: Probe("POST", p, b),
            raw_bodies,
            st.sampled_from(["/synth", "/synth_batch", "/v1/audio/speech", "/v1/audio/speech/batch"]),
        ),
        st.builds(lambda b: Probe("POST", "/v1/audio/speech", encoded(b)), speech_body()),
        st.builds(lambda b: Probe("POST", "/v1/audio/speech/batch", encoded({"items": [b]})), speech_body()),
        st.builds(
            lambda j, tail, m: Probe(
                m, f"/jobs/{urllib.parse.quote(j, safe='', errors='surrogatepass')}{tail}"
            ),
            job_ids,
            st.sampled_from(["/status", "/result", "/events?after=x", ""]),
            st.sampled_from(["GET", "DELETE", "PUT"]),
        ),
        st.builds(
            lambda p: Probe("GET", p), st.sampled_from(["/health", "/jobs", "/ws", "/nope", "/openapi.json"])
        ),
        st.builds(
            lambda e: Probe("POST", "/synth", b'{"text": "x"}', (("Content-Encoding", e),)),
            st.sampled_from(["gzip", "deflate"]),
        ),
    )


@dataclass
class Tally:
    sent: int = 0
    server_errors: int = 0
    hangs: int = 0
    wrong_shapes: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def bad(self, kind: str, probe: Probe, detail: str) -> None:
        if len(self.examples) < 10:
            self.examples.append(f"{kind}: {probe.method} {probe.path} {probe.body!r:.120} -> {detail:.200}")

    @property
    def clean(self) -> bool:
        return self.server_errors == self.hangs == self.wrong_shapes == 0


def shape_problem(probe: Probe, status: int, content_type: str, body: bytes) -> str | None:
    """None when the answer is one the protocol documents, else what is wrong with it."""
    if probe.path.startswith("/v1/"):
        return openai_shape_problem(status, content_type, body)
    if content_type == "application/x-ndjson":
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        return None if lines and all("event" in line for line in lines) else "ndjson without events"
    if content_type != "application/json":
        return f"content type {content_type!r}"
    parsed = json.loads(body)
    if status >= 400:
        if set(parsed) != ERROR_KEYS or parsed["status"] != "fail":
            return f"error body keys {sorted(parsed)}"
        if parsed["error"].split(":")[0] not in ERROR_NAMES:
            return f"unknown error name in {parsed['error']!r}"
        if status < 500 and parsed["traceback"] is not None:
            return "a traceback on a 4xx"
    return None


def send(base: str, probe: Probe, timeout: float, tally: Tally) -> None:
    request = urllib.request.Request(
        base + probe.path, data=probe.body, method=probe.method, headers=dict(probe.headers)
    )
    tally.sent += 1
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, content_type, body = response.status, response.headers.get_content_type(), response.read()
    except urllib.error.HTTPError as error:
        status, content_type, body = error.code, error.headers.get_content_type(), error.read()
    except TimeoutError:
        tally.hangs += 1
        tally.bad("hang", probe, f"no answer in {timeout} s")
        return
    tally.statuses[status] += 1
    if status >= 500:
        tally.server_errors += 1
        tally.bad("5xx", probe, body.decode("utf-8", "replace"))
    try:
        problem = shape_problem(probe, status, content_type, body)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        problem = f"unparsable: {exc}"
    if problem is not None:
        tally.wrong_shapes += 1
        tally.bad("shape", probe, problem)


def fuzz(base: str, root: str, examples: int, timeout: float = 10.0, seed: int | None = None) -> Tally:
    """Send `examples` generated requests; every answer is tallied (nothing raises)."""
    tally = Tally()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        suppress_health_check=list(HealthCheck),
    )
    @given(probes(root))
    def one(probe: Probe) -> None:
        send(base, probe, timeout, tally)

    if seed is not None:
        one._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    one()
    return tally


def openai_shape_problem(status: int, content_type: str, body: bytes) -> str | None:
    """The /v1 routes answer audio, SSE or JSON, and fail with OpenAI's `{"error": {...}}`."""
    if status < 400:
        ok = content_type.startswith("audio/") or content_type in ("application/json", "text/event-stream")
        return None if ok else f"content type {content_type!r}"
    if content_type != "application/json":
        return f"content type {content_type!r}"
    error = json.loads(body).get("error")
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return "not the OpenAI error body"
    if status < 500 and "Traceback" in error["message"]:
        return "a traceback on a 4xx"
    return None
