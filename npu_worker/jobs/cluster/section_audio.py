"""`SectionAudioStore`, `RedisJobs`' part for a section's audio: the engine node's hand-over (MADE, MADE_OK,
the wav uploaded first in pieces, `wav_upload.py`), the writer's first read of it, a preview's drop.

Apart from `store.py` (the records, logs, queue and nodes) since the wav's way in pieces and its token
(which run's wav it is) are one job of their own.
"""

from __future__ import annotations

from typing import Any

from ... import wire
from ...protocol import Done, Event, decode_event
from .keys import BATCH, PENDING, final_key, finished_key, job_key, log_key, ready_key, wav_key
from .wav_upload import StagedWav, StagedWavLost, staged, staged_key, token_field


def ending(reply: Any) -> tuple[int, Done | None]:
    """FINAL's and MADE_OK's reply: the event's seq, and the `done` it was followed by, if any."""
    seq, done = reply
    event = decode_event(done) if done else None
    return int(seq), event if isinstance(event, Done) else None


class SectionAudioStore:
    redis: Any  # (`RedisJobs`': the command client and the two scripts)
    _made: Any
    _made_ok: Any

    async def made(
        self, job_id: str, node: str, idx: int, wav: bytes | StagedWav, meta: dict[str, Any]
    ) -> bool:
        """MADE, the wav uploaded first in pieces (`wav_upload.py`); `StagedWavLost`: upload it again."""
        up = await staged(self.redis, job_id, idx, wav)
        keys = [job_key(job_id), final_key(job_id), wav_key(job_id, idx), ready_key(node), BATCH]
        args = [job_id, idx, up.token, up.size, meta["duration"], meta["elapsed"], int(meta["cached"])]
        made = int(await self._made(keys=[*keys, staged_key(job_id, idx, up)], args=args))
        if made < 0:
            raise StagedWavLost(f"section {idx} of job {job_id}: its staged wav went before MADE")
        return bool(made)

    async def made_ok(self, job_id: str, node: str, idx: int, wav: bytes, event: Event) -> int:
        """A section with no file: store its audio and log its `ok` (seq, or 0: final already/ended)."""
        return (await self.made_ok_ending(job_id, node, idx, wav, event))[0]

    async def made_ok_ending(
        self, job_id: str, node: str, idx: int, wav: bytes | StagedWav, event: Event
    ) -> tuple[int, Done | None]:
        """`made_ok`, with the job's `done` if this `ok` ended it (as `final_ending`); b"" stores none."""
        up = await staged(self.redis, job_id, idx, wav)
        keys = [job_key(job_id), log_key(job_id), final_key(job_id), PENDING, finished_key(node), BATCH]
        keys += [wav_key(job_id, idx), staged_key(job_id, idx, up)]
        args = [job_id, idx, wire.encode(event), up.token, up.size or ""]
        seq, done = ending(await self._made_ok(keys=keys, args=args))
        if seq < 0:
            raise StagedWavLost(f"section {idx} of job {job_id}: its staged wav went before MADE_OK")
        return seq, done

    async def spec_and_audio(
        self, job_id: str, idx: int, *, with_spec: bool = True, piece: int
    ) -> tuple[str | None, bool, bytes | None, int, bytes | None] | None:
        """(spec, ended, the wav's first `piece` bytes, its length, its upload's token) in one round trip:
        the writer's first step for each section, which reads the rest in pieces; the spec only
        `with_spec` (the writer keeps the jobs it has seen); no wav (a wav is never empty: a RIFF header
        at least), or one replaced between its reads here (another run's MADE), is None."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(job_key(job_id))
            pipe.hmget(
                job_key(job_id),
                ["done", token_field(idx), "spec"] if with_spec else ["done", token_field(idx)],
            )
            pipe.strlen(wav_key(job_id, idx))
            pipe.getrange(wav_key(job_id, idx), 0, piece - 1)
            pipe.hget(job_key(job_id), token_field(idx))
            exists, values, size, first, token = await pipe.execute()
        if not exists:
            return None
        spec = values[2].decode(errors="replace") if with_spec and values[2] is not None else None
        wav = bytes(first) if size and token == values[1] else None
        return spec, values[0] not in (None, b"0"), wav, int(size), token

    async def drop_audio(self, job_id: str, idx: int) -> None:
        """A preview's wav, once its accepting node wrote the file: no route serves it."""
        await self.redis.delete(wav_key(job_id, idx))
