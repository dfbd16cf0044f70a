"""Settings: one frozen dataclass, filled from CLI flags, then `NPU_WORKER_*` env vars, then defaults.

Every field declares its flag, env var and help text in one place, so `npu-worker serve --help`, the
environment and README cannot drift apart; `config_sources.py` reads them from flags and env vars
(`load_settings`) and renders the README table (`settings_table()`).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from .config_values import (
    DAY,
    MINUTE,
    TEN_YEARS,
    bearer_token,
    chunk_schedule,
    folders,
    home_folder,
    local_file,
    origins,
    parse_bool,
    queue_url,
    seconds_between,
    whole_number,
)
from .protocol import MAX_SEED, Limits

ENV_PREFIX = "NPU_WORKER_"


def _opt(
    default: Any,
    help: str,
    *,
    kind: Any = None,
    choices: tuple[str, ...] | None = None,
    empty_env: str | None = None,
) -> Any:
    """A setting. `empty_env`: why its env var set to "" is refused, where reading that as "unset", as
    for the others, would be dangerous (an empty token would turn authentication off unseen)."""
    metadata = {"help": help, "kind": kind, "choices": choices, "empty_env": empty_env}
    return field(default=default, metadata=metadata)


# onnxruntime's intra-op threads at most: more cores than any machine here has (100 000 left the engine
# loading for minutes at 1.7 GB, /ready 503, instead of a start-up error).
MAX_THREADS = 256
THREADS = whole_number(0, MAX_THREADS)

# Engine threads for previews at most (each one more espeak-ng instance); a third gained nothing on two cores.
MAX_PREVIEW_LANES = 4


# A stream the Python client hears nothing of for its `read_timeout` (120 s) is taken as stalled and
# re-attached: a heartbeat interval past half of it (it was allowed up to a day) made every quiet
# stretch of a stream a spurious re-attach. Half: a heartbeat a busy loop sends late still comes in time.
MAX_HEARTBEAT_INTERVAL = MINUTE
_HEARTBEAT_RANGE = seconds_between(0.1, MAX_HEARTBEAT_INTERVAL)


def heartbeat_seconds(text: str) -> float:
    """`--heartbeat-interval`: 0.1 s to a minute, a refusal saying why the minute."""
    try:
        return _HEARTBEAT_RANGE(text)
    except ValueError as exc:
        raise ValueError(
            f"{exc} (the Python client takes a stream silent for its read_timeout, 120 s, as stalled)"
        ) from None


def default_state_dir() -> str:
    return platformdirs.user_data_dir("npu-worker", appauthor=False)


@dataclass(frozen=True)
class Settings:
    host: str = _opt("127.0.0.1", "address to bind")
    port: int = _opt(7768, "port to bind", kind=whole_number(0, 65535))
    backend: str = _opt("espeak", "synthesis engine", choices=("espeak", "zipvoice-onnx", "sovits"))
    state_dir: str = _opt(
        "",
        "job logs, default outputs and the synthesis cache; never a caller's target (default: user data dir)",
        kind=home_folder,
    )
    ref_wav: str | None = _opt(
        None,
        "default reference voice wav (ZipVoice; ~ expanded, /health shows it absolute); transcript in <name>.txt beside it",
        kind=local_file,
    )
    ref_text: str | None = _opt(None, "transcript of the default reference wav (overrides the .txt sidecar)")
    output_roots: tuple[str, ...] = _opt(
        (),
        f"allowed roots for output_path/ref_wav, absolute, '{os.pathsep}'-separated (default: the temp dir)",
        kind=folders,
    )
    sovits_base: str = _opt("http://127.0.0.1:7766", "sovits_worker base URL (--backend sovits)")
    model_dir: str | None = _opt(None, "ZipVoice ONNX model directory (--backend zipvoice-onnx)")
    vocoder: str | None = _opt(
        None,
        "vocoder ONNX file (default: vocos_24khz.onnx in the model dir, or beside it where no other user can write)",
    )
    precision: str = _opt("int8", "ZipVoice model files to load", choices=("fp32", "int8"))
    device: str = _opt(
        "auto", "execution device; auto tries qnn, cuda, cpu", choices=("auto", "qnn", "cuda", "cpu")
    )
    allow_htp_simulator: bool = _opt(
        False, "allow the x86 QNN HTP simulator (tests only; ~1000x slower)", kind=parse_bool
    )
    fixed_shapes: bool = _opt(
        False,
        "ZipVoice: run the decoder as fixed-shape frame buckets on any device, as on the NPU",
        kind=parse_bool,
    )
    qnn_soc: str = _opt(
        "auto",
        "Snapdragon the NPU graphs are compiled for: auto (the chip; 8gen3 on the x86 simulator), none, "
        "888, 8gen1, 8+gen1, 8gen2, 8gen3, 8elite, 8elite-gen5, 8cx-gen3, x-elite, a part number "
        "(sm8650) or a QAIRT soc_model number",
    )
    tokenizer: str | None = _opt(
        None, "ZipVoice tokenizer: espeak, simple or emilia (default: from model metadata)"
    )
    num_steps: int | None = _opt(None, "ZipVoice sampling steps (default: 8 distill / 16 full)")
    guidance_scale: float | None = _opt(None, "ZipVoice guidance scale (default: 3.0 distill / 1.0 full)")
    prompt_max_seconds: float = _opt(
        3.0,
        "ZipVoice: longest reference prompt in seconds, cut at a word-aligned pause (ZipVoice recommends 1-3 s; at most 30)",
    )
    first_prompt_max_seconds: float = _opt(
        2.0, "ZipVoice: prompt bound for the short first segment of a preview (earlier first audio)"
    )
    prompt_max_pause_seconds: float = _opt(
        0.4, "ZipVoice: pauses inside the reference prompt are shortened to this (official pipeline: 1 s)"
    )
    segment_seconds: float = _opt(
        0.0,
        "ZipVoice: longest generated audio per segment, sentences packed up to it (0: as many equal "
        "segments as the decoder's measured cost curve makes cheapest for the voice's prompt; at most 18)",
    )
    first_segment_seconds: float = _opt(
        1.6, "ZipVoice: longest first segment of a preview (first audio comes after it is made)"
    )
    first_segment_steps: int | None = _opt(
        None,
        "ZipVoice: sampling steps of a preview's first segment (default: --num-steps; fewer: earlier audio)",
    )
    trim_edge_silence: bool = _opt(
        True, "ZipVoice: cut silence at the start and end of each section's audio", kind=parse_bool
    )
    seed: int = _opt(
        0, "default random seed (ZipVoice: same seed + text = same samples)", kind=whole_number(0, MAX_SEED)
    )
    threads: int = _opt(
        0, f"onnxruntime intra-op threads, 0 to {MAX_THREADS} (0 = physical cores)", kind=THREADS
    )
    heartbeat_interval: float = _opt(
        10.0,
        "seconds of silence on a stream before a heartbeat line (0.1 s to 1 min: the Python client"
        " takes a stream silent for 120 s as stalled)",
        kind=heartbeat_seconds,
    )
    max_text_chars: int = _opt(2000, "maximum characters per section", kind=whole_number(1))
    max_sections: int = _opt(
        1000, "maximum sections per batch (never more than --max-queue)", kind=whole_number(1)
    )
    max_body_bytes: int = _opt(8 * 1024 * 1024, "maximum request body size in bytes", kind=whole_number(1))
    body_budget_bytes: int = _opt(
        256 * 1024 * 1024,
        "request-body bytes (bodies, unfinished WebSocket messages) the worker holds at once while they arrive; past it, the body arriving longest (≥ 1 s) is dropped, else the new one gets 503 BodyBudgetFull; at least --max-body-bytes and --voice-max-bytes",
        kind=whole_number(1),
    )
    max_connections: int = _opt(
        512,
        "open connections at most; over it, one closing after its answer is closed, else the one waiting longest for its headers, else the WebSocket idle longest (1013), else the request whose body has been arriving longest (≥ 1 s)",
        kind=whole_number(1),
    )
    header_timeout: float = _opt(
        10.0,
        "seconds a connection may take to send its request headers (0.1 s to 1 day)",
        kind=seconds_between(0.1, DAY),
    )
    body_timeout: float = _opt(
        30.0,
        "seconds a request may take to send its body, a WebSocket message to finish arriving (0.1 s to 1 day)",
        kind=seconds_between(0.1, DAY),
    )
    max_queue: int = _opt(5000, "maximum sections waiting in the scheduler before 429", kind=whole_number(1))
    preview_lanes: int = _opt(
        2,
        "engine threads for previews, 1 to 4: from 2 on, a preview runs on another engine instance while the "
        "first is busy (a streaming preview whenever the first thread is not waiting for work; a /synth, or a "
        "/ws request without audio, while the first thread is busy), where "
        "the engine has them (espeak-ng; not ZipVoice, whose one instance uses every core); 1: one thread; "
        "with --queue redis each node runs one engine thread",
        kind=whole_number(1, MAX_PREVIEW_LANES, wording=f"preview lanes are 1 to {MAX_PREVIEW_LANES}"),
    )
    espeak_process: bool = _opt(
        True,
        "espeak-ng synthesises in a child process per engine lane: a crash in it (espeak-ng 1.52 overflows "
        "its stack on some 200-character texts) ends the child and fails one section, not the worker; "
        "false: on the engine thread, 0.3–0.5 ms sooner to first audio at the p50 and 1–4 ms later at "
        "the p95 under load (measured), and such a text ends the worker",
        kind=parse_bool,
    )
    job_retention: float = _opt(
        7 * 86400.0,
        "seconds a finished job (log, default outputs) is kept, 1 min to 10 years; accepts 90m, 12h, 7d "
        "(0 = no time bound)",
        kind=seconds_between(MINUTE, TEN_YEARS, off=True, units=True),
    )
    max_jobs_kept: int = _opt(
        1000, "finished jobs kept at most; the oldest go first (0 = no count bound)", kind=whole_number(0)
    )
    jobs_max_bytes: int = _opt(
        4 * 1024 * 1024 * 1024,
        "bytes the state dir keeps for jobs at most (their records, logs and default outputs: sections "
        "without output_path), 4 GiB by default (about 260 39-slide lectures of 15.5 MiB); past it the "
        "oldest finished jobs go first, and what running jobs leave no room for is refused (a section: "
        "WriteFailed; a batch: 503 StateUnavailable); files of no job it keeps are not counted (a warning at "
        "start); at least --max-body-bytes (0 = no byte bound)",
        kind=whole_number(0),
    )
    cache_max_bytes: int = _opt(
        512 * 1024 * 1024, "synthesis cache size bound in bytes (0 disables)", kind=whole_number(0)
    )
    token: str | None = _opt(
        None,
        "require this bearer token (Authorization header or ?token=)",
        kind=bearer_token,
        empty_env="set but empty: unset it to run without a token (an empty one would turn auth off unseen)",
    )
    allowed_origins: tuple[str, ...] = _opt(
        (),
        "browser origins allowed on /ws and the API, comma-separated (default: loopback origins only)",
        kind=origins,
    )
    voices_dir: tuple[str, ...] = _opt(
        (),
        f"extra read-only named-voice directories (<name>.wav + <name>.txt), absolute, '{os.pathsep}'-separated",
        kind=folders,
    )
    max_voices: int = _opt(
        1000, "uploaded voices stored at most (a new one beyond is a 409 TooManyVoices)", kind=whole_number(1)
    )
    voice_max_bytes: int = _opt(5 * 1024 * 1024, "largest voice upload in bytes", kind=whole_number(1))
    voice_max_seconds: float = _opt(
        30.0, "longest voice upload in seconds (decoded; 1 s to 3600 s)", kind=seconds_between(1.0, 3600.0)
    )
    voice_decodes: int = _opt(
        2,
        "voice uploads and inline ref_audio decoded at once (each a thread beside the engine)",
        kind=whole_number(1),
    )
    voice_decode_wait: float = _opt(
        10.0,
        "seconds one waits for a decode slot before a 503 DecodersBusy (0 to 600)",
        kind=seconds_between(0.0, 600.0),
    )
    chunk_schedule_ms: tuple[float, ...] = _opt(
        (40.0, 80.0, 160.0, 320.0),
        "WebSocket PCM chunk sizes in ms (each at most an hour), growing; the last repeats",
        kind=chunk_schedule,
    )
    queue: str = _opt(
        "local",
        "where jobs live: 'local' (this process) or redis://HOST:PORT/DB (several workers share them)",
        kind=queue_url,
    )
    role: str = _opt(
        "both",
        "with a Redis queue: both (API + engine), engine (only takes work) or api (only serves callers)",
        choices=("both", "engine", "api"),
    )
    claim_timeout: float = _opt(
        30.0,
        "with a Redis queue: seconds before a dead node's claimed section is taken over, 1 s to 1 day "
        "(90s, 2m)",
        kind=seconds_between(1.0, DAY, units=True),
    )
    shutdown_grace: float = _opt(
        30.0,
        "seconds a SIGTERM lets the running section finish before stopping it (its job is not ended: it is run again; 0 to 1 day)",
        kind=seconds_between(0.0, DAY),
    )
    log_level: str = _opt("info", "logging level", choices=("debug", "info", "warning", "error"))

    @property
    def limits(self) -> Limits:
        """The request limits, built here only, so views and the job core check the same numbers. A
        batch larger than the queue's bound could never be admitted: it is a 400 (TooManySections),
        not a 429 that no retry would ever get past; its refusal names the setting that bounds it (a
        `--max-queue 1` worker's read "10 sections, the limit is 1", as if sections were the limit)."""
        return Limits(self.max_text_chars, *self.batch_bound("sections"))

    def batch_bound(self, parts: str) -> tuple[int, str]:
        """The most `parts` (sections, the OpenAI batch's items) one batch may have, and the setting
        that bounds it as a refusal names it: a batch's parts are queued at once, so a queue bound
        lower than --max-sections bounds a batch too (on a tie, --max-sections: both routes say so)."""
        if self.max_queue < self.max_sections:
            return self.max_queue, f" (--max-queue: a batch's {parts} are queued at once)"
        return self.max_sections, " (--max-sections)"

    def resolved_state_dir(self) -> Path:
        return Path(self.state_dir or default_state_dir()).expanduser()

    def resolved_output_roots(self) -> tuple[str, ...]:
        roots = self.output_roots or (tempfile.gettempdir(),)
        return tuple(os.path.realpath(os.path.expanduser(r)) for r in roots)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)
