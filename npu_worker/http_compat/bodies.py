"""The v1 JSON answers as msgspec Structs, and how a view sends one (the core builds no bodies).

Field order is the order on the wire; a field that is not always there defaults to UNSET (left off).
`openapi.py` documents these classes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from aiohttp import web
from msgspec import UNSET, Meta, UnsetType

from .. import wire
from ..body_budget import RETRY_AFTER_SECONDS
from ..errors import ErrorBody, WorkerError
from ..jobs.model import Job, KeptJob
from ..protocol import (
    BodyBudgetFull,
    DecodersBusy,
    Loading,
    NodeRestarting,
    Progress,
    QueueFull,
    QueueUnavailable,
    SectionError,
    Unauthorized,
)


def json_response(body: msgspec.Struct, status: int = 200) -> web.Response:
    """`body` encoded once by the shared encoder (as `web.json_response` would send a dict)."""
    return web.Response(
        body=wire.encode(body), status=status, content_type="application/json", charset="utf-8"
    )


ERROR_COUNTED_KEY = web.ResponseKey("error_counted", bool)  # /metrics counted its error already


# Seconds a refusal tells the caller to wait (`Retry-After`), where waiting helps: a full queue, a worker
# still booting (the engine loads or the kept jobs are read), its Redis away (the node reconnects by
# itself; clients wait for what says Retry-After), its budget for bodies being received spent. The one
# table: `openapi.py` documents it.
RETRY_AFTER: dict[type[WorkerError], int] = {
    QueueFull: 5,
    Loading: 1,
    QueueUnavailable: 1,
    BodyBudgetFull: RETRY_AFTER_SECONDS,
    DecodersBusy: 1,  # a decode ends within seconds
    NodeRestarting: 1,  # its loop starts again within 1 to 60 s: asked again each second
}
BEARER_CHALLENGE = 'Bearer realm="npu-worker"'  # a 401's WWW-Authenticate (RFC 9110 requires one)


def refusal_response(error: BaseException, body: msgspec.Struct, status: int) -> web.Response:
    """An error's body (v1 or OpenAI shape), with `Retry-After` when waiting helps (`RETRY_AFTER`),
    and `WWW-Authenticate: Bearer` on a 401 (the scheme the token is sent in)."""
    response = json_response(body, status=status)
    if isinstance(error, WorkerError) and error.counted:
        response[ERROR_COUNTED_KEY] = True
    wait = next((seconds for kind, seconds in RETRY_AFTER.items() if isinstance(error, kind)), None)
    if wait is not None:
        response.headers["Retry-After"] = str(wait)
    elif isinstance(error, Unauthorized):
        response.headers["WWW-Authenticate"] = BEARER_CHALLENGE
    return response


class SynthResult(msgspec.Struct, kw_only=True):
    """POST /synth, written (sovits_worker-compatible fields)."""

    status: Literal["ok"] = "ok"
    output: str
    wav_path: str
    duration_sec: float
    sample_rate: int
    elapsed_sec: float
    rtf: Annotated[float | None, Meta(description="elapsed / audio seconds")]
    engine: str
    device: str
    cached: Annotated[bool | UnsetType, Meta(description="true when served from the synthesis cache")] = UNSET


class SynthFailed(ErrorBody, kw_only=True):
    """POST /synth whose synthesis or write failed: HTTP 200, the error body and what ran."""

    engine: str
    device: str | None


class Queued(msgspec.Struct, kw_only=True):
    """POST /synth_batch?async=1."""

    job_id: str
    status: Literal["queued"] = "queued"
    total: int


# A job's states (fixed by the user's document; `interrupted`: between a restart and the job's
# resumption), as the document lists them (the job core keeps a plain str: jobs/model.py).
JOB_STATES = ["queued", "running", "done", "cancelled", "interrupted"]
JobState = Annotated[str, Meta(extra_json_schema={"enum": JOB_STATES})]


class JobStatus(msgspec.Struct, kw_only=True):
    """GET /jobs/{id}/status (and the 202 of /result while the job runs)."""

    job_id: str
    status: JobState
    done: int
    total: int
    ok: int
    fail: int
    current_idx: int | None
    elapsed_sec: float

    @classmethod
    def of(cls, job: Job | KeptJob) -> JobStatus:
        return cls(
            job_id=job.id,
            status=job.status,
            done=job.ok_count + job.fail_count,
            total=job.total,
            ok=job.ok_count,
            fail=job.fail_count,
            current_idx=job.working_idx,
            elapsed_sec=round(job.elapsed(), 3),
        )


class Cancelled(JobStatus, kw_only=True):
    """DELETE /jobs/{id}: the status, and whether the job was still queued or running."""

    cancel_requested: bool

    @classmethod
    def of_job(cls, job: Job | KeptJob, requested: bool) -> Cancelled:
        return cls(**msgspec.structs.asdict(JobStatus.of(job)), cancel_requested=requested)


class JobList(msgspec.Struct):
    """GET /jobs: newest first, at most 100."""

    jobs: list[JobStatus]


class JobResult(msgspec.Struct, kw_only=True):
    """GET /jobs/{id}/result, and the `stream: false` answer (`status: ok`, or `cancelled` when a DELETE
    stopped the batch): the final event of each section in idx order."""

    job_id: str
    status: Annotated[
        str,
        Meta(
            description="done or cancelled; `stream: false`: ok, or the state so far (202) at shutdown",
            extra_json_schema={"enum": ["ok", *JOB_STATES]},
        ),
    ]
    total: int
    ok_count: int
    fail_count: int
    sections: list[Progress | SectionError]
    wav_paths: list[str]
    elapsed_total_sec: float

    @classmethod
    def of(cls, job: Job, status: str | None = None) -> JobResult:
        ordered = sorted((s for s in job.sections if s.final is not None), key=lambda s: s.idx)
        finals = [s.final for s in ordered if s.final is not None]
        return cls(
            job_id=job.id,
            status=status or job.status,
            total=job.total,
            ok_count=job.ok_count,
            fail_count=job.fail_count,
            sections=finals,
            wav_paths=[f.wav_path for f in finals if isinstance(f, Progress) and f.wav_path],
            elapsed_total_sec=round(job.elapsed(), 3),
        )


class TtfaFigures(msgspec.Struct):
    p50: float | None
    p95: float | None
    count: int


class DecoderCallCounts(msgspec.Struct):
    """A bucketed decoder's calls since the load, and those the CPU overflow decoder ran."""

    total: int
    cpu_overflow: Annotated[
        int,
        Meta(
            description="calls of a segment that, with its prompt, outgrew the largest bucket: run on "
            "the CPU, whatever `device` says"
        ),
    ]


class Health(msgspec.Struct, kw_only=True):
    """GET /health; the first seven fields are fixed, in the order of the user's document (`load_phase`
    once came between them). An engine with fixed-shape decoder buckets (ZipVoice on QNN or with
    `--fixed-shapes`) adds `decoder_calls` once loaded. With `--queue redis://` the node adds `role`,
    `node`, `redis` and `cluster`. When the engine failed to load or Redis is unreachable (`status: fail`), the fields of the
    fixed error body too: `error`, `traceback`, `fallback`."""

    status: Literal["ok", "loading", "fail"]
    loaded: bool
    load_seconds: float | None
    backend: str
    device: Annotated[
        str | None, Meta(description="what really runs, after any fallback; null while loading")
    ]
    ref_wav: str | None
    version: Annotated[str, Meta(description="the protocol's version")]
    package_version: str
    load_phase: str | None
    sample_rate: int | None
    model: str | None
    precision: str | None
    fallback_reason: str | None
    placement: Annotated[
        dict[str, dict[str, Any]] | None, Meta(description="per model session: device, nodes")
    ]
    queue: int
    jobs_running: int
    ttfa_ms: TtfaFigures
    queue_backend: Literal["local", "redis"]
    start_id: Annotated[
        str,
        Meta(
            description="this start of the worker: a random id, another after each restart (a worker"
            " restarted and loaded again reads as it did before, `ok`)"
        ),
    ]
    languages: Annotated[
        list[str] | UnsetType,
        Meta(description="the `lang` codes the engine speaks, once loaded; absent where it takes any"),
    ] = UNSET
    decoder_calls: DecoderCallCounts | UnsetType = UNSET
    role: str | UnsetType = UNSET
    node: str | UnsetType = UNSET
    redis: Literal["ok", "full", "unreachable"] | UnsetType = UNSET
    cluster: dict[str, Any] | UnsetType = UNSET
    error: str | UnsetType = UNSET
    traceback: str | None | UnsetType = UNSET
    fallback: Annotated[
        str | None | UnsetType, Meta(description="a device that would work instead, if any")
    ] = UNSET

    def failed(self, error: str, fallback: str | None = None) -> None:
        """The worker cannot serve: `status: fail` and the fixed error body's fields."""
        self.status, self.error, self.traceback, self.fallback = "fail", error, None, fallback


class Ready(msgspec.Struct):
    """GET /ready: 200 only when a request would be served now."""

    ready: bool
    reason: str | None
    queue: int
