"""Which running section may pause for which waiting preview (an engine that pauses between its steps:
ZipVoice), split out of `admission.py`, which applies it under its lock. Pure.

A batch section lends the engine to any preview. A preview's section lends it only to a streaming
preview whose caller still waits for its first audio, and only once its own caller hears audio already
or listens to none live (`/synth`, `audio: false`): a `/ws` preview waited for the whole of a long
preview before it (a paused tab's, a `/synth` of a page: 24.7 s and 106 s on the small ZipVoice on the
CPU, benchmarks/PREVIEW_LATENCY.md), though what that one made meanwhile was only more of what its caller had begun to hear or would
hear at its end. One preview lends at a time (not one inside another's pause), and the bound on sections
lent (`admission.PASSED_OVER_LIMIT`) holds for it as for a batch section.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .model import Job


def lends(running: Job, below: Sequence[Job]) -> bool:
    """`running`'s section (the engine thread's innermost) may pause for a preview now; `below`: the
    sections it runs inside (paused for it). A cancelled one lends no more: its caller waits for its
    `done` (a `/ws` caller to send its next request), which came only after up to 8 more sections."""
    if running.cancel_requested.requested:
        return False
    if not running.preview:
        return True
    heard_or_unheard = running.first_audio_at is not None or running.continues or not running.stream_audio
    return heard_or_unheard and not any(job.preview for job in below)


def borrower(running: Job) -> Callable[[Job], bool]:
    """Which waiting jobs `running`'s section may pause for."""
    return is_preview if not running.preview else waits_for_first_audio


def is_preview(job: Job) -> bool:
    return job.preview


def waits_for_first_audio(job: Job) -> bool:
    """A streaming preview whose caller hears nothing yet (nor its utterance's earlier sentences)."""
    return job.preview and job.stream_audio and job.first_audio_at is None and not job.continues
