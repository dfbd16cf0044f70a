"""Persistence of jobs in the state directory, so a restart (even `kill -9`) loses no job.

Layout: `<state>/jobs/<id>/job.json` (the request) and `<state>/jobs/<id>/events.ndjson` (the log, one
event per line with its seq, appended and flushed before the event is published). A torn last line
from a crash is ignored. Default outputs of a job live apart, in `<state>/outputs/<id>/sNN.wav`.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from ..files import write_atomic
from ..paths import OUTPUTS_DIR, make_private_dir
from ..protocol import Event, SynthParams
from .model import INTERRUPTED, Job, LogEntry, Section, apply_event

log = logging.getLogger(__name__)


class JobStore:
    def __init__(self, state_dir: Path) -> None:
        make_private_dir(Path(state_dir))
        self.root = Path(state_dir) / "jobs"
        self.root.mkdir(parents=True, exist_ok=True)

    def job_dir(self, job_id: str) -> Path:
        return self.root / job_id

    def create(self, job: Job) -> None:
        body = {
            "id": job.id,
            "created_at": job.created_at,
            "params": {
                "lang": job.params.lang,
                "speed_factor": job.params.speed_factor,
                "ref_wav": job.params.ref_wav,
                "ref_text": job.params.ref_text,
                "seed": job.params.seed,
            },
            "sections": [{"idx": s.idx, "text": s.text, "output_path": s.output_path} for s in job.sections],
        }
        write_atomic(self.job_dir(job.id) / "job.json", json.dumps(body, ensure_ascii=False).encode())

    def append(self, job_id: str, entry: LogEntry) -> None:
        line = json.dumps(entry.to_dict(), ensure_ascii=False) + "\n"
        with open(self.job_dir(job_id) / "events.ndjson", "a", encoding="utf-8") as out:
            out.write(line)
            out.flush()

    def load_all(self) -> list[Job]:
        """Every readable job, oldest first; unfinished ones come back as `interrupted`."""
        jobs = []
        for path in sorted(self.root.iterdir(), key=lambda p: p.stat().st_mtime if p.exists() else 0):
            if not (path / "job.json").is_file():
                continue
            try:
                jobs.append(self.load(path.name))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("skipping unreadable job %s: %s", path.name, exc)
        return jobs

    def load(self, job_id: str) -> Job:
        directory = self.job_dir(job_id)
        self.truncate_torn_tail(job_id)
        body: dict[str, Any] = json.loads((directory / "job.json").read_text(encoding="utf-8"))
        job = Job(
            id=body["id"],
            params=SynthParams(**body["params"]),
            sections=[Section(s["idx"], s["text"], s["output_path"]) for s in body["sections"]],
            created_at=body["created_at"],
        )
        for entry in self._read_log(directory / "events.ndjson"):
            job.log.append(entry)
            apply_event(job, entry.event)
            job.next_seq = entry.seq + 1
        if not job.finished:
            job.status = INTERRUPTED
            job.current_idx = None
            for folder in (directory, self.root.parent / OUTPUTS_DIR / job_id):
                for stale in folder.glob(".*.part"):  # a write cut short by the crash; redone on resume
                    stale.unlink(missing_ok=True)
        return job

    @staticmethod
    def _read_log(path: Path) -> list[LogEntry]:
        if not path.exists():
            return []
        entries = []
        with open(path, encoding="utf-8") as source:
            for line in source:
                try:
                    body = json.loads(line)
                    entries.append(LogEntry(int(body.pop("seq")), Event.from_dict(body)))
                except (ValueError, KeyError, TypeError):
                    log.warning("ignoring a torn or unreadable log line in %s", path)
                    break
        return entries

    def truncate_torn_tail(self, job_id: str) -> None:
        """Drop a partial last line so the next append starts on a line of its own."""
        path = self.job_dir(job_id) / "events.ndjson"
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(path, "r+b") as out:
                out.truncate(keep)
                os.fsync(out.fileno())
