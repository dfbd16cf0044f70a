"""A shared job's spec: what every node needs to run or render it, as the JSON kept in Redis.

Written by the accepting node, read by engine nodes and writers; a spec that is not one `job_spec`
wrote (a value planted or damaged in Redis) is `BadSpec`, which every reader logs and drops.
"""

from __future__ import annotations

import json

from ...protocol import SynthParams
from ..model import Job, Section


def job_spec(job: Job, node: str) -> str:
    """What every node needs to run or render the job (the request, resolved paths included)."""
    p = job.params
    return json.dumps(
        {
            "id": job.id,
            "node": node,
            "preview": job.preview,
            "stream_audio": job.stream_audio,
            "trim_leading_silence": job.trim_leading_silence,
            "created_at": job.created_at,
            "params": {
                "lang": p.lang,
                "speed_factor": p.speed_factor,
                "ref_wav": p.ref_wav,
                "ref_text": p.ref_text,
                "seed": p.seed,
            },
            "sections": [{"idx": s.idx, "text": s.text, "output_path": s.output_path} for s in job.sections],
        },
        ensure_ascii=False,
    )


class BadSpec(ValueError):
    """A job spec in Redis that is not one `job_spec` wrote (a value planted or damaged there)."""


def job_from_spec(raw: str) -> Job:
    """The job a spec describes; `BadSpec` when it does not decode as one."""
    try:
        return _job_from_spec(raw)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BadSpec(f"{type(exc).__name__}: {exc}") from exc


def spec_node(raw: str) -> str:
    """The node that accepted the job a spec describes (it writes the job's files)."""
    try:
        return str(json.loads(raw)["node"])
    except (ValueError, KeyError, TypeError) as exc:
        raise BadSpec(f"{type(exc).__name__}: {exc}") from exc


def _job_from_spec(raw: str) -> Job:
    body = json.loads(raw)
    return Job(
        id=body["id"],
        params=SynthParams(**body["params"]),
        sections=[Section(s["idx"], s["text"], s["output_path"]) for s in body["sections"]],
        preview=bool(body["preview"]),
        persisted=not body["preview"],
        stream_audio=bool(body.get("stream_audio", False)),
        trim_leading_silence=bool(body.get("trim_leading_silence", False)),
        created_at=float(body["created_at"]),
    )
