"""The v1 JSON bodies of a job: how the HTTP views render the core's Job (the core builds no bodies)."""

from __future__ import annotations

from typing import Any

from ..jobs.model import Job


def status_body(job: Job) -> dict[str, Any]:
    """GET /jobs/{id}/status."""
    return {
        "job_id": job.id,
        "status": job.status,
        "done": job.ok_count + job.fail_count,
        "total": job.total,
        "ok": job.ok_count,
        "fail": job.fail_count,
        "current_idx": job.current_idx,
        "elapsed_sec": round(job.elapsed(), 3),
    }


def result_body(job: Job) -> dict[str, Any]:
    """GET /jobs/{id}/result and the `stream:false` body: final event per section, in idx order."""
    ordered = sorted((s for s in job.sections if s.final is not None), key=lambda s: s.idx)
    finals = [s.final.to_dict() for s in ordered if s.final is not None]
    return {
        "job_id": job.id,
        "status": job.status,
        "total": job.total,
        "ok_count": job.ok_count,
        "fail_count": job.fail_count,
        "sections": finals,
        "wav_paths": [f["wav_path"] for f in finals if f.get("event") == "progress" and f.get("wav_path")],
        "elapsed_total_sec": round(job.elapsed(), 3),
    }
