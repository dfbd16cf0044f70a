"""The names of what the cluster keeps in Redis: every key under `npu:`, the work streams and their
consumer groups, the cancel channel.

Apart from `store.py` because the names are shared by the store, the PCM stream and the tests that
plant or read values; the Lua scripts (`scripts.py`) derive the same names from the keys they are given.
"""

from __future__ import annotations

P = "npu:"
FIRST, BATCH = P + "q:first", P + "q:batch"
ENGINES, WRITERS = "engines", "writers"
PENDING, JOBS, NODES = P + "pending", P + "jobs", P + "nodes"
PREVIEWS = P + "previews"  # previews (/synth, /ws, OpenAI speech): not listed, not kept
CANCEL_CHANNEL = P + "cancel"


def job_key(job_id: str) -> str:
    return f"{P}job:{job_id}"


def log_key(job_id: str) -> str:
    return f"{P}log:{job_id}"


def final_key(job_id: str) -> str:
    return f"{P}final:{job_id}"


def wav_key(job_id: str, idx: int) -> str:
    return f"{P}wav:{job_id}:{idx}"


def pcm_key(job_id: str) -> str:
    """A streaming job's PCM on its way to the listener (`pcm_stream.py`)."""
    return f"{P}pcm:{job_id}"


def ready_key(node: str) -> str:
    return f"{P}ready:{node}"


def finished_key(node: str) -> str:
    return f"{P}finished:{node}"


def finished_previews_key(node: str) -> str:
    return finished_key(node) + ":previews"  # the DONE functions' own choice (lua_functions.py)
