"""Shared jobs in Redis (redis.asyncio): records, event logs, work queue, audio, nodes.

Every method runs on the event loop. Changes that need a check and a write in one step are the Lua
scripts of `scripts.py`; the rest are plain commands. Connection errors surface as
`redis.exceptions.ConnectionError`/`TimeoutError`; the callers turn them into `QueueUnavailable`
(requests) or retry (the engine and writer loops): `outage.py`. The key names are `keys.py`'s, what
is read back is decoded by `entries.py`.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from redis.exceptions import ResponseError

from ... import wire
from ...protocol import Done, Event
from ..admission import PASSED_OVER_LIMIT
from ..model import Job, LogEntry, apply_event
from . import scripts
from .entries import WorkItem, entry_of, node_entry, work_items
from .keys import (
    BATCH,
    ENGINES,
    FIRST,
    JOBS,
    NODES,
    PENDING,
    PREVIEWS,
    WRITERS,
    final_key,
    finished_key,
    finished_previews_key,
    job_key,
    log_key,
    pcm_key,
    ready_key,
    wav_key,
)
from .outage import cancellable
from .pools import COMMAND_CONNECTIONS, FOLLOW_CONNECTIONS, OWN_COMMANDS, OWN_CONNECTIONS, waiting_client
from .presence import present
from .section_audio import SectionAudioStore, ending
from .spec import job_from_spec, job_spec

log = logging.getLogger(__name__)


# How long a command may go unanswered before it fails (a request then gets QueueUnavailable).
COMMAND_TIMEOUT = 5.0
SPEC_IN_ITEM = 64 * 1024  # a job spec up to this size rides in its first work item (one round trip less)


class RedisJobs(SectionAudioStore):
    def __init__(self, url: str) -> None:
        # Commands wait up to COMMAND_TIMEOUT for a connection of their pool, then for Redis's answer.
        self.redis: Any = waiting_client(
            url, connections=COMMAND_CONNECTIONS, wait=COMMAND_TIMEOUT, socket_timeout=COMMAND_TIMEOUT
        )
        # Blocking reads (XREAD/XREADGROUP BLOCK ≤ 2 s) wait longer than a command may take: own pools,
        # with a timeout still, so a Redis that vanished without a reset (a partition) is noticed; the
        # callers' (`blocking`: followed jobs) apart from the node's loops' (`own_reads`).
        self.blocking: Any = waiting_client(
            url, connections=FOLLOW_CONNECTIONS, wait=10.0, socket_timeout=10.0
        )
        self.own_reads: Any = waiting_client(url, connections=OWN_CONNECTIONS, wait=10.0, socket_timeout=10.0)
        # The node's beat and its view of the cluster (/health, /ready): never behind callers' commands.
        self.own_commands: Any = waiting_client(
            url, connections=OWN_COMMANDS, wait=COMMAND_TIMEOUT, socket_timeout=COMMAND_TIMEOUT
        )
        self._create = self.redis.register_script(scripts.CREATE)
        self._append = self.redis.register_script(scripts.APPEND)
        self._final = self.redis.register_script(scripts.FINAL)
        self._made = self.redis.register_script(scripts.MADE)
        self._made_ok = self.redis.register_script(scripts.MADE_OK)
        self._cancel = self.redis.register_script(scripts.CANCEL)
        self._forget_nodes = self.redis.register_script(scripts.FORGET_NODES)
        self._recount = self.redis.register_script(scripts.RECOUNT)
        self._voice_user = self.redis.register_script(scripts.VOICE_USER)
        self._leave = self.redis.register_script(scripts.LEAVE)
        self._beats: dict[str, str] = {}  # the beat last sent for each node of this process (`leave`)
        self._present_at: dict[str, float] = {}  # when each node was last seen present (Redis's clock)
        self._firsts: dict[str, int] = {}  # first sections a node claimed in a row (`claim`)

    async def close(self) -> None:
        await self.redis.aclose()
        await self.blocking.aclose()
        await self.own_reads.aclose()
        await self.own_commands.aclose()

    async def ping(self) -> None:
        await self.redis.ping()

    async def ensure_groups(self, node: str) -> None:
        for stream, group in ((FIRST, ENGINES), (BATCH, ENGINES), (ready_key(node), WRITERS)):
            kind = await self.redis.type(stream)
            if kind not in (b"stream", b"none"):  # holds no work of ours, and stopped every node's loop
                log.error("%s was a %s, not a stream of ours: removed", stream, kind.decode(errors="replace"))
                await self.redis.delete(stream)
            try:
                await self.redis.xgroup_create(stream, group, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    # -- jobs and their logs -----------------------------------------------------------------------

    async def create(self, job: Job, node: str, start: Event, *, max_queue: int, window: int) -> int:
        """Record and queue a job; returns -1 - waiting when the shared bound refuses it, else 1."""
        keys = [job_key(job.id), log_key(job.id), PENDING, PREVIEWS if job.preview else JOBS, FIRST, BATCH]
        spec = job_spec(job, node)
        args: list[Any] = [job.id, spec, job.total, max_queue, min(window, job.total)]
        args += [wire.encode(start), repr(job.created_at), node, int(len(spec) <= SPEC_IN_ITEM)]
        args += [int(job.preview), job.params.ref_wav or ""]
        return int(await self._create(keys=keys, args=args))

    async def voice_user(self, ref_wav: str) -> tuple[str, bool] | None:
        """(id, preview) of a job under way on any node that speaks with `ref_wav`, else None."""
        reply = await self._voice_user(keys=[JOBS, PREVIEWS], args=[ref_wav])
        return (reply[0].decode(errors="replace"), reply[1] == b"1") if reply else None

    async def append(self, job_id: str, event: Event) -> int:
        """Append one event; its seq, or 0 when the job has already ended."""
        keys = [job_key(job_id), log_key(job_id)]
        return int(await self._append(keys=keys, args=[wire.encode(event)]))

    async def final(self, job_id: str, idx: int, event: Event, *, ok: bool, node: str, advance: bool) -> int:
        return (await self.final_ending(job_id, idx, event, ok=ok, node=node, advance=advance))[0]

    async def final_ending(
        self, job_id: str, idx: int, event: Event, *, ok: bool, node: str, advance: bool
    ) -> tuple[int, Done | None]:
        """Log a section's final event: its seq (0: final already, or the job had ended) and the job's
        `done` if this event ended it (once in the cluster: /metrics counts it where it is logged)."""
        keys = [job_key(job_id), log_key(job_id), final_key(job_id), PENDING, finished_key(node), BATCH]
        body = wire.encode(event)
        args: list[Any] = [job_id, idx, body, "ok" if ok else "fail", int(advance)]
        return ending(await self._final(keys=keys, args=args))

    async def cancel(self, job_id: str, node: str) -> bool:
        return await self.cancel_ending(job_id, node) is not None

    async def cancel_ending(self, job_id: str, node: str) -> Done | None:
        """End a job as cancelled: the `done` logged, None if it had already ended."""
        keys = [job_key(job_id), log_key(job_id), final_key(job_id), PENDING, finished_key(node)]
        return ending(await self._cancel(keys=keys, args=[job_id]))[1]

    async def settled(self, job_id: str, idx: int) -> bool:
        """Whether a section needs nothing more: final already (another node's run of it), or its job
        ended or gone."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hexists(final_key(job_id), idx)
            pipe.hget(job_key(job_id), "done")
            final, done = await pipe.execute()
        return bool(final) or done != b"0"

    async def spec(self, job_id: str) -> tuple[str, bool] | None:
        """(spec JSON, ended) of a job, None if unknown."""
        spec, done = await self.redis.hmget(job_key(job_id), ["spec", "done"])
        if spec is None:
            return None
        return spec.decode(errors="replace"), done not in (None, b"0")

    async def ended(self, job_id: str) -> bool | None:
        """Whether a job has ended, None if unknown; without its spec (which grows with the sections)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(job_key(job_id))
            pipe.hget(job_key(job_id), "done")
            exists, done = await pipe.execute()
        return done not in (None, b"0") if exists else None

    async def load(self, job_id: str) -> Job | None:
        """The job with its whole log folded in (status, finals, seq). Reads, and the removals and
        acknowledgements below, are plain pipelines, never MULTI: a Redis at its `maxmemory` refuses
        every command queued in a transaction, and status calls, retention (what frees the memory)
        and the writers' and engines' acknowledgements all stopped with it."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(job_key(job_id), "spec")
            pipe.xrange(log_key(job_id))
            spec, entries = await pipe.execute()
        if spec is None:
            return None
        try:
            job = job_from_spec(spec.decode(errors="replace"))
            for entry_id, fields in entries:
                entry = entry_of(entry_id, fields)
                apply_event(job, entry.event)
                job.log.append(entry)
                job.next_seq = entry.seq + 1
        except (KeyError, ValueError) as exc:  # a value not of ours (BadSpec, an event that is none)
            log.warning("job %s: its record in Redis does not decode (%s); treated as gone", job_id, exc)
            return None
        return job

    async def read_log(self, job_id: str, after: int, block_ms: int) -> list[LogEntry]:
        reply = await cancellable(
            self.blocking.xread({log_key(job_id): f"0-{after}"}, block=block_ms, count=500)
        )
        return [entry_of(eid, fields) for _, rows in reply for eid, fields in rows]

    async def recent(self, limit: int) -> list[str]:
        return [raw.decode() for raw in await self.redis.zrevrange(JOBS, 0, limit - 1)]

    async def last_seq(self, job_id: str) -> int | None:
        """The seq of the job's last log entry (0: none), None for no job: what its copy is known by."""
        pipe = self.redis.pipeline(transaction=False).hexists(job_key(job_id), "spec")
        exists, last = await pipe.xrevrange(log_key(job_id), count=1).execute()
        return None if not exists else int(last[0][0].split(b"-")[1]) if last else 0

    async def remove(self, job: Job, node: str) -> None:
        keys = [job_key(job.id), log_key(job.id), final_key(job.id), pcm_key(job.id)]
        keys += [wav_key(job.id, s.idx) for s in job.sections]
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(*keys)
            pipe.zrem(PREVIEWS if job.preview else JOBS, job.id)
            pipe.zrem(finished_previews_key(node) if job.preview else finished_key(node), job.id)
            await pipe.execute()

    async def forget(self, job_id: str, node: str) -> None:
        """A finished job whose record is gone (expired, evicted, deleted by hand) or does not decode: out
        of the lists too, so it is not looked up at every retention pass nor counted toward
        `--max-jobs-kept`."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(job_key(job_id), log_key(job_id), final_key(job_id), pcm_key(job_id))
            pipe.zrem(JOBS, job_id)
            pipe.zrem(PREVIEWS, job_id)
            pipe.zrem(finished_key(node), job_id)
            pipe.zrem(finished_previews_key(node), job_id)
            await pipe.execute()

    async def finished(self, node: str, *, previews: bool = False) -> list[tuple[str, float]]:
        """The jobs (or `previews`) `node` accepted that have ended, oldest first, with their end time."""
        key = finished_previews_key(node) if previews else finished_key(node)
        rows = await self.redis.zrange(key, 0, -1, withscores=True)
        return [(raw.decode(), float(score)) for raw, score in rows]

    # -- the work queue ----------------------------------------------------------------------------

    async def claim(self, node: str, *, own: bool, block_ms: int) -> list[WorkItem]:
        """Work for `node`: its own unacknowledged items (`own`, after a restart), else the next new
        item, first-sections stream before the batch stream, but the batch stream first once the node
        took PASSED_OVER_LIMIT first sections in a row (a flood of `/synth` never starves a batch)."""
        if own:
            reply = await self.redis.xreadgroup(ENGINES, node, {FIRST: "0", BATCH: "0"}, count=1)
            return work_items(reply)
        order = (FIRST, BATCH) if self._firsts.get(node, 0) < PASSED_OVER_LIMIT else (BATCH, FIRST)
        for stream in order:
            items = work_items(await self.redis.xreadgroup(ENGINES, node, {stream: ">"}, count=1))
            if items:
                return self._counted(node, items)
        reply = await cancellable(
            self.own_reads.xreadgroup(ENGINES, node, {FIRST: ">", BATCH: ">"}, count=1, block=block_ms)
        )
        return self._counted(node, work_items(reply))

    def _counted(self, node: str, items: list[WorkItem]) -> list[WorkItem]:
        """`claim`'s answer, after counting the first sections `node` took in a row."""
        if items:
            self._firsts[node] = self._firsts.get(node, 0) + 1 if items[0].stream == FIRST else 0
        return items

    async def reclaim(self, node: str, min_idle_ms: int) -> list[WorkItem]:
        """Items another node claimed and has not touched for `min_idle_ms` (it died): now ours."""
        found: list[WorkItem] = []
        for stream in (FIRST, BATCH):
            _next, rows, *_ = await self.redis.xautoclaim(stream, ENGINES, node, min_idle_ms, count=1)
            found += work_items([[stream.encode(), rows]])
            if found:
                break
        return found

    async def touch(self, item: WorkItem, node: str) -> None:
        """Reset the item's idle time: a long section is not reclaimed from a node that is alive."""
        await self.redis.xclaim(item.stream, ENGINES, node, 0, [item.entry_id], justid=True)

    async def ack(self, item: WorkItem) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xack(item.stream, ENGINES, item.entry_id)
            pipe.xdel(item.stream, item.entry_id)
            await pipe.execute()

    async def release(self, item: WorkItem) -> None:
        """Give back an item this node claimed but will not run (it is shutting down): queued again."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xadd(item.stream, {"job": item.job_id, "pos": item.pos})
            pipe.xack(item.stream, ENGINES, item.entry_id)
            pipe.xdel(item.stream, item.entry_id)
            await pipe.execute()

    async def ready(self, node: str, *, own: bool, block_ms: int) -> list[tuple[str, dict[str, str]]]:
        """Sections made for jobs `node` accepted, whose files it must write and log `ok`."""
        stream = ready_key(node)
        if own:
            reply = await self.redis.xreadgroup(WRITERS, node, {stream: "0"}, count=64)
        else:
            reply = await cancellable(
                self.own_reads.xreadgroup(WRITERS, node, {stream: ">"}, count=64, block=block_ms)
            )
        out = []
        for _, rows in reply or []:
            for entry_id, fields in rows:
                if fields:
                    decoded = {
                        k.decode(errors="replace"): v.decode(errors="replace") for k, v in fields.items()
                    }
                    out.append((entry_id.decode(), decoded))
        return out

    async def ready_done(self, node: str, entry_id: str) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xack(ready_key(node), WRITERS, entry_id)
            pipe.xdel(ready_key(node), entry_id)
            await pipe.execute()

    # -- nodes ---------------------------------------------------------------------------------------

    async def now(self, client: Any = None) -> float:
        """Redis's clock: the one every node shares (heartbeats, job ends, retention), so a node whose own
        clock is off neither looks dead to the others nor ends jobs in the past or future."""
        seconds, micros = await (client or self.redis).time()
        return seconds + micros / 1e6

    async def heartbeat(self, node: str, body: dict[str, Any]) -> None:
        """The node's beat, through its own connections (`own_commands`): behind a flood of callers'
        commands it waited its turn past the 5 s after which peers count the node out."""
        seen = await self.now(self.own_commands)
        self._beats[node] = beat = json.dumps({**body, "seen": seen})  # (kept before it is sent)
        await self.own_commands.hset(NODES, node, beat)

    async def leave(self, node: str) -> bool:
        """At a clean stop: the beat this process last sent for `node` marked `stopped`, stamped now; left
        alone where another replaced it (scripts.LEAVE: the node restarted under its name meanwhile)."""
        if (sent := self._beats.get(node)) is None:
            return False
        stopped = json.dumps({**json.loads(sent), "stopped": True, "seen": await self.now(self.own_commands)})
        return bool(await self._leave(keys=[NODES], args=[node, sent, stopped], client=self.own_commands))

    async def forget_gone_nodes(self, gone_after: float) -> list[str]:
        """Drop what Redis keeps for nodes silent for `gone_after` seconds (scripts.FORGET_NODES)."""
        names = await self._forget_nodes(
            keys=[NODES, FIRST, BATCH], args=[gone_after], client=self.own_commands
        )
        return [name.decode(errors="replace") for name in names]

    async def recount(self) -> tuple[str, int] | None:
        """Count the sections waiting over all jobs again (scripts.RECOUNT): (what the counter held,
        the count) when it was off, else None."""
        reply = await self._recount(keys=[PENDING], client=self.own_commands)
        return (reply[0].decode(errors="replace"), int(reply[1])) if reply else None

    async def cluster_view(self, alive_within: float, refused_within: float | None = None) -> dict[str, Any]:
        """The nodes heard within `alive_within` s, the queue depth, and how long ago any engine node
        that did not report a failed load was heard (`sound_engine_ago`, None for never). Read by the
        heartbeat and /health through the node's own connections: behind a flood of callers' commands,
        /health's 1 s ran out waiting for one and said `Redis is unreachable (TimeoutError)`. While Redis
        refuses every write (`refused_within` given: no beat is written) a node heard earlier counts
        while its process holds its presence (`presence.py`), or, where Redis answers no PUBSUB,
        within `refused_within` s."""
        async with self.own_commands.pipeline(transaction=False) as pipe:
            pipe.hgetall(NODES)
            pipe.get(PENDING)
            pipe.time()
            rows, pending, (seconds, micros) = await pipe.execute()
        now = seconds + micros / 1e6
        nodes: list[dict[str, Any]] = []
        stale: list[dict[str, Any]] = []  # heard before ALIVE_WITHIN: only while Redis refuses writes
        last_sound = None  # the latest heartbeat of an engine node that did not fail, any age
        for name, raw in rows.items():
            body = node_entry(raw)
            # A beat is stamped by Redis's clock as it is written: one ahead of it by more than a live
            # node's age was planted, or outlived a step back of that clock (its node, if alive, beats
            # again within a second). It counted as alive as long as it was ahead: for ever, 1e18.
            if body is None or body["seen"] - now > alive_within:
                continue
            if body["role"] in ("both", "engine") and not isinstance(body.get("load_error"), str):
                last_sound = body["seen"] if last_sound is None else max(last_sound, body["seen"])
            if body.get("stopped") is True:  # (a clean stop)
                continue
            heard = nodes if now - body["seen"] <= alive_within else stale
            heard.append({**body, "node": name.decode(errors="replace")})
        if refused_within is not None and stale:
            nodes += await self._present_while_refused(stale, now, alive_within, refused_within)
        nodes.sort(key=lambda n: n["node"])
        try:
            depth = int(pending or 0)
        except ValueError:  # a value not of ours: the view still answers (and the heartbeat goes on)
            depth = 0
        sound_ago = None if last_sound is None else max(0.0, now - last_sound)
        return {"nodes": nodes, "queue_depth": depth, "sound_engine_ago": sound_ago}

    async def _present_while_refused(
        self, stale: list[dict[str, Any]], now: float, alive_within: float, refused_within: float
    ) -> list[dict[str, Any]]:
        """Of the nodes whose beat Redis's refusals left old, those seen present (`presence.present`)
        within `alive_within` s where their last beat said they hold a presence, the others heard within
        `refused_within` s: one that holds none (its ACL refuses its channel, an older release) read
        NUMSUB 0 and was counted out; a subscription made again (Redis restarted) counted every node out
        for a beat."""
        holding = [node["node"] for node in stale if node.get("presence") is True]
        there = await present(self.own_commands, holding)
        if there is not None:
            seen = {name: at for name, at in self._present_at.items() if name in holding}
            self._present_at = seen | dict.fromkeys(there, now)

        def counted(node: dict[str, Any]) -> bool:
            if there is not None and node["node"] in holding:
                last = max(node["seen"], self._present_at.get(node["node"], node["seen"]))
                return bool(now - last <= alive_within)
            return bool(now - node["seen"] <= refused_within)

        return [node for node in stale if counted(node)]
