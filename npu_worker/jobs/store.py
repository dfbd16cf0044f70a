"""Persistence of jobs in the state directory, so a restart (even `kill -9`) loses no job.

Layout: `<state>/jobs/<id>/job.json` (the request) and `<state>/jobs/<id>/events.ndjson` (the log, one
event per line with its seq, appended and flushed before the event is published). A torn last line
from a crash is cut off. Default outputs of a job live apart, in `<state>/outputs/<id>/sNN.wav`.
A job folder, `job.json` or `events.ndjson` that is a symlink is never followed: start-up skipped none,
so a link planted there had a file elsewhere truncated (the torn-tail cut), appended to and removed;
a log that is no plain file is skipped too (start-up waited for ever on a FIFO).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO

import msgspec

from ..files import write_atomic
from ..paths import OUTPUTS_DIR
from ..protocol import SynthParams, decode_event
from ..state_dir import make_private_dir, private_folder
from .model import INTERRUPTED, Job, KeptJob, LogEntry, Section, apply_event

log = logging.getLogger(__name__)

JOB_FILE, LOG_FILE = "job.json", "events.ndjson"
_DEFAULT_OUTPUT = re.compile(r"s[0-9]{2,}\.wav|\.s[0-9]{2,}\.wav\.[0-9a-z_]+\.part")  # and its temp files
CANCEL_FILE = "cancelled"  # present: a DELETE came while a section ran (see `mark_cancelled`)


class _Seq(msgspec.Struct):
    seq: int


_SEQ = msgspec.json.Decoder(_Seq)  # a log line's position (the event itself decodes apart)


class _StoredSection(msgspec.Struct):
    idx: int
    text: str
    output_path: str | None


class _StoredJob(msgspec.Struct):
    """`job.json`, typed: a hand-edited or damaged file is refused whole, not run with an idx of "x"."""

    id: str
    created_at: float
    params: SynthParams
    sections: list[_StoredSection]


_JOB = msgspec.json.Decoder(_StoredJob)


class JobStore:
    def __init__(self, state_dir: Path) -> None:
        self.root = Path(state_dir) / "jobs"
        self._outputs = str(self.root.parent / OUTPUTS_DIR)

    def prepare(self) -> None:
        """Create the directory (blocking I/O: at start-up, off the loop)."""
        make_private_dir(self.root.parent)
        private_folder(self.root)

    def job_dir(self, job_id: str) -> Path:
        return self.root / job_id

    def default_output(self, job_id: str, idx: int) -> str:
        """Apart from the job's record: `<state>/outputs/<id>/sNN.wav` (see paths.py). A job's id (16 hex
        digits) joined as text: pathlib's joins were ≈ 25 Python calls a section at a batch's admission
        (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 62); any other id as pathlib spells it."""
        if job_id.isalnum():
            return f"{self._outputs}{os.sep}{job_id}{os.sep}s{idx:02d}.wav"
        return str(Path(self._outputs) / job_id / f"s{idx:02d}.wav")

    def record_path(self, job_id: str) -> str:
        return str(self.job_dir(job_id) / JOB_FILE)

    def log_path(self, job_id: str) -> str:
        return str(self.job_dir(job_id) / LOG_FILE)

    @staticmethod
    def record(job: Job) -> bytes:
        """`job.json`'s bytes: the request (its texts: up to the body's size)."""
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
        return json.dumps(body, ensure_ascii=False).encode()

    def create(self, job: Job, record: bytes | None = None) -> None:
        """Write `job.json` (`record`: its bytes, made by `record` already)."""
        try:
            write_atomic(self.job_dir(job.id) / JOB_FILE, record if record is not None else self.record(job))
        except OSError:  # a full disk: no empty folder left behind for each refused batch
            with contextlib.suppress(OSError):
                self.job_dir(job.id).rmdir()
            raise

    def mark_cancelled(self, job_id: str) -> None:
        """A cancel asked while a section runs is recorded at once: its `done` comes only when the
        section stops, and a worker killed before that would otherwise resume the job at its start."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:  # in the job's folder as it is: one retention removed meanwhile is not made again
            os.close(os.open(self.job_dir(job_id) / CANCEL_FILE, flags, 0o640))
        except FileNotFoundError:
            pass

    def open_log(self, job_id: str) -> IO[bytes]:
        """The log opened to append, unbuffered: a write the disk refused is not left in a buffer to
        come out later, whole or cut, behind lines written after it (`write_line`)."""
        # 0640 whatever the umask (and a log made under an older one corrected): the service's group
        # may read logs, never write them
        log = open(
            self.job_dir(job_id) / LOG_FILE,
            "ab",
            buffering=0,
            opener=lambda path, flags: os.open(path, flags | os.O_NOFOLLOW, 0o640),
        )
        if os.fstat(log.fileno()).st_mode & 0o022:
            os.fchmod(log.fileno(), 0o640)
        return log

    @staticmethod
    def log_line(entry: LogEntry) -> bytes:
        return entry.line + b"\n"

    @staticmethod
    def write_line(out: IO[bytes], line: bytes) -> None:
        """All of `line` (an unbuffered write may take part of it), else OSError (a full disk)."""
        view = memoryview(line)
        while view:
            view = view[out.write(view) or 0 :]

    def append(self, job_id: str, entry: LogEntry) -> None:
        with self.open_log(job_id) as out:
            self.write_line(out, self.log_line(entry))

    def load_all(self, progress: Callable[[int, int], object] | None = None) -> list[Job | KeptJob]:
        """Every readable job, oldest created first; unfinished ones come back as `interrupted`, finished
        ones as a `KeptJob` (their log is read again when asked for, `load`).
        `progress(read, of)` is called before each folder (it may raise to stop). What a `kill -9`
        left of a job without its job.json (written first, removed first) is removed: a job being
        created (a temp file) or removed by retention (its log, its default outputs); what cannot be is kept."""
        jobs: list[Job | KeptJob] = []
        folders = list(self.root.iterdir())
        for done, path in enumerate(folders):
            if progress is not None:
                progress(done, len(folders))
            if not (path / JOB_FILE).is_file():  # a crash before its job.json was in place, a stray file
                if path.is_dir() and not path.is_symlink():
                    log.warning(
                        "removing what a crash left of job %s in the jobs folder (no job.json)", path.name
                    )
                    try:  # one odd folder (a job.json that is a folder) must not leave every job unread
                        self.remove(path.name, self.default_outputs_left(path.name))
                    except OSError as exc:
                        log.warning("kept %s in the jobs folder: %s", path.name, exc)
                else:
                    log.warning("skipping %s in the jobs folder: it holds no job.json", path.name)
                continue
            try:
                job = self.load(path.name)
                end = job.done_event if job.finished else None
                jobs.append(KeptJob.of(job, end) if end is not None else job)
            except (OSError, ValueError, RecursionError) as exc:  # msgspec's errors are ValueErrors
                log.warning("skipping unreadable job %s: %s", path.name, exc)
        return sorted(jobs, key=lambda job: job.created_at)

    def load(self, job_id: str) -> Job:
        directory = self.job_dir(job_id)
        _check_plain(directory, stat.S_ISDIR)
        _check_plain(directory / JOB_FILE, stat.S_ISREG)
        _check_plain(directory / LOG_FILE, stat.S_ISREG, missing_ok=True)
        self.truncate_torn_tail(job_id)
        body = _JOB.decode((directory / JOB_FILE).read_bytes())
        if body.id != job_id:  # a copy in another folder would be a second job under the same id
            raise ValueError(f"its job.json names job {body.id!r}")
        _check_unique_idx(body.sections)
        job = Job(
            id=body.id,
            params=body.params,
            sections=[Section(s.idx, s.text, s.output_path) for s in body.sections],
            created_at=body.created_at,
        )
        for entry in self._read_log(directory / LOG_FILE):
            job.log.append(entry)
            apply_event(job, entry.event)
            job.next_seq = max(job.next_seq, entry.seq + 1)
        if not job.finished:
            job.status = INTERRUPTED
            job.current_idx = None
            if (directory / CANCEL_FILE).exists():
                job.cancel_requested.set()  # ended as cancelled at start, not resumed
        return job

    def stamp(self, job_id: str) -> tuple[tuple[int, ...] | None, ...] | None:
        """What the job's folder and files are now (identity, size, times; None: not there), to know a
        copy read from them is still theirs (`shared_copies.py`); None when they cannot be looked at."""
        folder_path = self.job_dir(job_id)
        try:  # the folder itself: one replaced by a link to a copy elsewhere is no longer the job's
            folder = os.lstat(folder_path)
        except OSError:
            return None
        stamps: list[tuple[int, ...] | None] = [(folder.st_dev, folder.st_ino, folder.st_mode)]
        for name in (JOB_FILE, LOG_FILE):
            try:
                found = os.lstat(folder_path / name)
            except FileNotFoundError:
                stamps.append(None)
                continue
            except OSError:
                return None
            stamps.append((found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns))
        return tuple(stamps)

    def default_outputs_left(self, job_id: str) -> list[str]:
        """The default outputs (and their temp files) in the job's outputs folder."""
        folder = self.root.parent / OUTPUTS_DIR / job_id
        if folder.is_symlink() or not folder.is_dir():
            return []
        names = (p.name for p in folder.iterdir())
        return [str(folder / name) for name in names if _DEFAULT_OUTPUT.fullmatch(name)]

    def remove(self, job_id: str, default_outputs: list[str]) -> None:
        """Delete the job's own files: its request, its log, its temp files and the default outputs
        this store named for it (`default_outputs`, wherever they live); then the directories they
        leave empty. A file someone else put beside them is never touched, and a folder that is a
        link is never deleted through (a job or outputs folder replaced by a link to elsewhere had
        the files there of those names deleted)."""
        # job.json first, in this order (a set's order changes with each process's hash seed): a removal
        # killed after the log went and before it left a job the next start ran again from seq 1.
        owned: dict[Path, list[str]] = {self.job_dir(job_id): [JOB_FILE, LOG_FILE, CANCEL_FILE]}
        for path in default_outputs:
            names = owned.setdefault(Path(path).parent, [])
            if Path(path).name not in names:
                names.append(Path(path).name)
        for folder, names in owned.items():
            _remove_in(folder, names, temp_files=folder == self.job_dir(job_id))
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.info("kept %s after removing job %s: %s", folder, job_id, exc.strerror or exc)

    @staticmethod
    def _read_log(path: Path) -> list[LogEntry]:
        if not path.exists():
            return []
        entries, unreadable = [], 0
        with open(path, "rb") as source:
            for line in source:
                try:
                    entries.append(LogEntry(_SEQ.decode(line).seq, decode_event(line)))
                except (msgspec.MsgspecError, RecursionError):  # damaged, or nested past the parser
                    # Skipped, not an end: the lines after it (appended by a later run) still count,
                    # else a finished job would look unfinished and run again at every start.
                    unreadable += 1
        if unreadable:  # one warning per log, not per line: a damaged log wrote thousands at every start
            log.warning("ignoring %d unreadable log line(s) in %s", unreadable, path)
        return entries

    def truncate_torn_tail(self, job_id: str) -> None:
        """Drop a partial last line so the next append starts on a line of its own."""
        path = self.job_dir(job_id) / LOG_FILE
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(path, "r+b", opener=lambda name, flags: os.open(name, flags | os.O_NOFOLLOW)) as out:
                out.truncate(keep)
                os.fsync(out.fileno())


def _check_unique_idx(sections: list[_StoredSection]) -> None:
    """ValueError if two sections share an idx (a hand edit: requests never do): the first was never
    settled, so the job ran `running` for ever, its stream never ended, at every start."""
    seen: set[int] = set()
    for section in sections:
        if section.idx in seen:
            raise ValueError(f"its job.json lists section {section.idx} twice")
        seen.add(section.idx)


def _check_plain(path: Path, is_kind: Callable[[int], bool], *, missing_ok: bool = False) -> None:
    """OSError unless `path` is itself of that kind (`stat.S_ISDIR`, `S_ISREG`), not a link to one."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        if missing_ok:
            return
        raise
    if not is_kind(mode):
        what = "a symlink" if stat.S_ISLNK(mode) else "not a plain file or folder"
        raise OSError(errno.ELOOP if stat.S_ISLNK(mode) else errno.EINVAL, f"{path.name} is {what}")


def _remove_in(folder: Path, names: list[str], *, temp_files: bool) -> None:
    """Unlink `names`, in order (and, `temp_files`, then every `.*.part`) in `folder`, opened without
    following a link: a folder that is a link, or no folder, is left as it is."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError as exc:  # ELOOP, ENOTDIR: not the worker's folder now
        log.warning("not removing files through %s: %s", folder, exc.strerror or exc)
        return
    try:
        if temp_files:
            with os.scandir(fd) as entries:
                names = names + [
                    e.name for e in entries if e.name.startswith(".") and e.name.endswith(".part")
                ]
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)
