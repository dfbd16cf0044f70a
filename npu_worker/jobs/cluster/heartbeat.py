"""A node's heartbeat, and the cluster as its last one saw it: the live nodes and the queue depth
(/health, an api node's engine info), how long a silent node's sections are left to it (the longest
`--claim-timeout` alive), and engine nodes that would voice one job differently.

Apart from the scheduler because it is a loop of its own with its own state (the view, Redis full),
which the scheduler only reads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from redis.exceptions import OutOfMemoryError, ResponseError

from ...config import DAY, Settings
from ...engine.base import DecoderCalls, EngineInfo
from ...errors import ModelLoadError, NodeRestarting, QueueUnavailable, WorkerError
from .outage import REDIS_DOWN, WriteRefusals, redis_unreachable, refuses_every_write, reraise_if_cancelling
from .presence import Refused
from .store import RedisJobs

log = logging.getLogger(__name__)
HEARTBEAT_SECONDS, ALIVE_WITHIN = 1.0, 5.0
# A node silent this long is gone for good: what Redis keeps for it is dropped (store.forget_gone_nodes),
# checked every FORGET_EVERY heartbeats by every node, with the queue depth counted again (store.recount).
NODE_GONE_AFTER, FORGET_EVERY = DAY, 60
# Engine nodes that failed to load are told as the cluster's failure only once no other engine node
# was heard for this long: one restarting (silent past ALIVE_WITHIN) beside a failed one is no refusal.
RESTART_GRACE = 30.0
# What makes two engine nodes voice one request differently (their heartbeats carry it).
ENGINE_KEYS = ("backend", "model", "precision", "sample_rate", "seed")
# Seconds Redis may refuse every write (a replica that stays one, a full Redis) before the streams this
# node follows end and a job's status and events answer `QueueUnavailable` (`Heartbeat.writes_refused`):
# every hand-over waited, and its callers heard heartbeats and nothing else, for as long as it lasted.
WRITES_REFUSED_LIMIT = 60.0
# /health and /ready share one read of the view begun within this long (`Heartbeat.health`).
HEALTH_VIEW_FRESH = 0.25
# What a beat carries that /health's `cluster.nodes` leaves out: `languages` (4.5 KB a node), `presence`.
UNSHOWN = ("languages", "presence")


def claim_patience(own: float, nodes: Sequence[dict[str, Any]]) -> float:
    """The longest `--claim-timeout` among the live nodes (and this one's): each touches its sections
    every third of its own, so a node started with a shorter one than a peer must not take over that
    peer's sections after its own timeout (every section of the patient peer would run twice)."""
    longest = own
    for node in nodes:
        value = node.get("claim_timeout")
        if (
            isinstance(value, int | float) and 0 < value <= DAY
        ):  # past the bound of --claim-timeout: not of ours
            longest = max(longest, float(value))
    return longest


class EngineDifferences:
    """Engine nodes that voice a job differently (another backend, model, precision, rate or seed):
    a job's sections go to whichever engine node is free, so one lecture would be spoken in several
    voices (the queue does not route by engine). Logged once for each set of differences."""

    def __init__(self) -> None:
        self._differing: frozenset[tuple[str, ...]] = frozenset()  # engine kinds last said to differ

    def check(self, live: Sequence[dict[str, Any]]) -> None:
        kinds: dict[tuple[str, ...], list[str]] = {}
        for node in live:
            if "backend" in node:
                kinds.setdefault(tuple(str(node.get(key)) for key in ENGINE_KEYS), []).append(node["node"])
        differing = frozenset(kinds) if len(kinds) > 1 else frozenset()
        if differing and differing != self._differing:
            seen = "; ".join(
                f"{'/'.join(kind)} on {', '.join(nodes)}" for kind, nodes in sorted(kinds.items())
            )
            log.warning(
                "engine nodes differ (%s): one job's sections may be voiced by each: %s",
                "/".join(ENGINE_KEYS),
                seen,
            )
        self._differing = differing


class Heartbeat:
    def __init__(self, jobs: RedisJobs, settings: Settings) -> None:
        self.jobs, self.settings = jobs, settings
        self.role = settings.role
        self.node = ""  # known once the node has read its name (`ClusterScheduler.start`)
        self.view: dict[str, Any] = {"nodes": [], "queue_depth": 0}
        self.sound_engine_ago: float | None = None  # since an engine node not failed was heard (view's)
        self.redis_full = False  # this node's last heartbeat met a full Redis (OOM)
        self.writes_refused_since: float | None = None  # (monotonic) Redis refusing every write since
        self.differences = EngineDifferences()
        self.presence_refused = Refused()  # its subscription refused (`hold_presence`): its beat says so
        self.on_view: Callable[[], object] | None = None  # after each view the loop reads (on the loop)
        self._health_read: asyncio.Future[None] | None = None  # the view read /health and /ready share
        self._health_read_at = 0.0

    def patience(self) -> float:
        """`claim_patience` over the last view (the engine node asks before each reclaim)."""
        return claim_patience(self.settings.claim_timeout, self.view["nodes"])

    def engines_failed(self) -> WorkerError | None:
        """ModelLoadError when every live engine node says its engine failed to load (None while one
        runs or loads, or none is alive; NodeRestarting, a 503, when one's beat says a loop of it waits to
        start again): its heartbeat looked like a loading one's, so an api node
        said `Loading` for ever and its jobs' streams sent heartbeats for ever. Not while another
        engine node was heard within RESTART_GRACE s (a rolling restart's gap is no failure)."""
        engines = [n for n in self.view["nodes"] if n["role"] in ("both", "engine")]
        failed = [n for n in engines if isinstance(n.get("load_error"), str)]
        if not engines or len(failed) < len(engines):
            return None
        if self.sound_engine_ago is not None and self.sound_engine_ago < RESTART_GRACE:
            return None  # one that ran or loaded a moment ago may be restarting: not refused yet
        restarting = [n for n in failed if n["load_error"].startswith(f"{NodeRestarting.name}: ")]
        if restarting:  # a loop of it waits to start again (`node_loops.py`): it was a 500 ModelLoadError
            said = restarting[0]["load_error"][:1000]
            return NodeRestarting(f"no engine node runs; {restarting[0]['node']} starts again soon ({said})")
        first = failed[0]
        fallback = first["fallback"][:40] if isinstance(first.get("fallback"), str) else None
        said = first["load_error"][:1000]  # a value in Redis may be of another's making: bounded
        reason = f"every engine node failed to load its engine ({first['node']}: {said})"
        return ModelLoadError(reason, fallback=fallback)

    def common_languages(self) -> list[str] | None:
        """The languages every live loaded engine node speaks, as an api node's /health lists them: a
        caller's `lang` from it is spoken whichever engine node takes the job (a union listed some that
        one node refuses, its sections failing there). An engine node that lists none takes any (sovits,
        ZipVoice's `simple` tokenizer) and narrows nothing; None when none lists any. In the first
        list's order (codes, then names, as `spoken_languages.espeak_spoken` makes it)."""
        lists = [
            n["languages"]
            for n in self.view["nodes"]
            if n["role"] in ("both", "engine") and n.get("backend") and "languages" in n
        ]
        if not lists:
            return None
        everywhere = set(lists[0]).intersection(*lists[1:])
        return list(dict.fromkeys(code for code in lists[0] if code in everywhere))  # (each once: a planted
        # list first by name repeated its codes, up to 64 KiB of them, in every /health)

    async def read_view(self) -> None:
        refused = None if self.writes_refused_since is None else self.alive_within()
        view = await self.jobs.cluster_view(ALIVE_WITHIN, refused)
        self.sound_engine_ago = view.pop("sound_engine_ago", None)
        self.view = view

    async def health(self) -> dict[str, Any]:
        """What /health says of the queue (`ClusterScheduler.queue_health`): the view read again."""
        try:
            await self._shared_read()
        except ResponseError as exc:  # the heartbeat loop says it; the last view stands
            log.debug("cluster view: Redis answered %s", exc)
        except (TimeoutError, *REDIS_DOWN) as exc:
            return {
                "queue_backend": "redis",
                "role": self.role,
                "node": self.node,
                "redis": "unreachable",
                "error": str(redis_unreachable(exc)),
            }
        engines = [n for n in self.view["nodes"] if n["role"] in ("both", "engine")]
        nodes = [{key: value for key, value in n.items() if key not in UNSHOWN} for n in self.view["nodes"]]
        cluster = {**self.view, "nodes": nodes, "engines_alive": len(engines)}  # (languages: 4.5 KB a node)
        return {
            "queue_backend": "redis",
            "role": self.role,
            "node": self.node,
            "redis": "full" if self.redis_full else "ok",  # it answers reads, refuses every write
            "cluster": cluster,
        }

    async def _shared_read(self) -> None:
        """The view read again for /health and /ready, once for every call within HEALTH_VIEW_FRESH s
        of a read's start (and while it runs): each call read it itself, and 400 open /health calls at
        once took the node's 100 Redis connections from its submits, its engine and its heartbeat
        (`MaxConnectionsError`, told to callers as `Redis is unreachable`) and answered most with 503."""
        read = self._health_read
        if read is None or (read.done() and time.monotonic() - self._health_read_at > HEALTH_VIEW_FRESH):
            self._health_read_at = time.monotonic()
            read = self._health_read = asyncio.ensure_future(asyncio.wait_for(self.read_view(), timeout=1.0))
            read.add_done_callback(lambda done: done.cancelled() or done.exception())  # (read by no caller)
        await asyncio.shield(read)  # a caller that hangs up leaves the read to the others

    async def run(
        self,
        engine_info: Callable[[], EngineInfo | None],
        load_error: Callable[[], WorkerError | None] = lambda: None,
        decoder_calls: Callable[[], DecoderCalls | None] = lambda: None,
        load_phase: Callable[[], str | None] = lambda: None,
        languages: Callable[[], list[str] | None] = lambda: None,
    ) -> None:
        """Every HEARTBEAT_SECONDS: this node's beat (its role and engine, with a bucketed decoder's
        calls as its /health counts them, or why its engine failed to load, or what its loading engine
        is doing), then the view read back; Redis down or full is waited out, never the end of the loop."""
        refused = False  # Redis answered an error (a value not of ours at the nodes key): said once
        refusals = WriteRefusals(f"heartbeat of node {self.node}")
        beats = 0
        while True:
            reraise_if_cancelling()  # redis-py may retry away a cancellation that hit a call
            body = self._beat_body(engine_info(), load_error, decoder_calls, load_phase, languages)
            try:
                await self._beat(body, beats)
                refused, self.redis_full, self.writes_refused_since = False, False, None
                refusals.ended()
                beats += 1
            except REDIS_DOWN:
                reraise_if_cancelling()
            except OutOfMemoryError as exc:  # every beat refused: the view as the refusals began
                if not self.redis_full:
                    log.warning("heartbeat of node %s: Redis is full (%s)", self.node, exc)
                self.redis_full = True
                await self._view_while_writes_refused()
            except ResponseError as exc:  # never a heartbeat that stops for good: the node would look dead
                if refuses_every_write(exc):  # (a replica: READONLY) said as it starts and as it ends
                    refusals.refused(exc)
                    await self._view_while_writes_refused()
                elif not refused:
                    log.error("heartbeat of node %s: Redis answered %s; trying again", self.node, exc)
                refused = True
            await asyncio.sleep(HEARTBEAT_SECONDS)

    def _beat_body(
        self,
        info: EngineInfo | None,
        load_error: Callable[[], WorkerError | None],
        decoder_calls: Callable[[], DecoderCalls | None],
        load_phase: Callable[[], str | None],
        languages: Callable[[], list[str] | None],
    ) -> dict[str, Any]:
        """What this node's beat says: its role, and its engine, or why it failed, or its load's phase."""
        body: dict[str, Any] = {"role": self.role, "claim_timeout": self.settings.claim_timeout}
        if not self.presence_refused.now:  # peers count it by its subscription while writes are refused
            body["presence"] = True
        if info is not None:
            body.update(
                backend=info.backend,
                device=info.device,
                precision=info.precision,
                sample_rate=info.sample_rate,
                model=info.model,
                seed=self.settings.seed,
            )
            if (spoken := languages()) is not None:  # what an api node's /health intersects
                body["languages"] = spoken  # (`common_languages`)
            if (calls := decoder_calls()) is not None:  # (an api node showed no overflow share)
                body["decoder_calls"] = {"total": calls.total, "cpu_overflow": calls.cpu_overflow}
        elif (error := load_error()) is not None:
            body.update(load_error=str(error)[:1000], fallback=error.fallback)
        elif (phase := load_phase()) is not None:  # a `both` node serving through a peer meanwhile
            body["load_phase"] = phase[:200]
        return body

    async def _beat(self, body: dict[str, Any], beats: int) -> None:
        """One beat written and the view read back; every FORGET_EVERY beats, the gone nodes forgotten
        and the queue depth counted again."""
        await self.jobs.heartbeat(self.node, body)
        await self.read_view()
        self.differences.check(self.view["nodes"])
        if self.on_view is not None:
            self.on_view()
        if beats % FORGET_EVERY == 0:
            if gone := await self.jobs.forget_gone_nodes(NODE_GONE_AFTER):
                log.info("forgot nodes silent for over %d s: %s", NODE_GONE_AFTER, ", ".join(gone))
            if off := await self.jobs.recount():
                log.warning("the cluster's queue depth counter held %r; recounted as %d", *off)

    async def _view_while_writes_refused(self) -> None:
        """Redis refuses every write (full, a replica): no node's beat is written, so the view counts a
        node heard before while its process holds its presence (`presence.py`; where Redis answers no
        PUBSUB, within ALIVE_WITHIN s of when the refusals began: `alive_within`), read still (Redis
        answers reads). Every node dropped out of every view 5 s in: /health said no engine alive."""
        if self.writes_refused_since is None:
            self.writes_refused_since = time.monotonic()
        try:
            await self.read_view()
        except (ResponseError, *REDIS_DOWN):
            reraise_if_cancelling()
        if self.on_view is not None:
            self.on_view()

    def writes_refused(self) -> WorkerError | None:
        """Redis has refused every write for over WRITES_REFUSED_LIMIT s: what a job's caller is told
        (nothing of the job can move meanwhile; its section's audio waits on its engine node)."""
        since = self.writes_refused_since
        if since is None or (lasted := time.monotonic() - since) <= WRITES_REFUSED_LIMIT:
            return None
        said = "full, or a replica" if not self.redis_full else "it is full"
        return QueueUnavailable(
            f"Redis has refused every write for {lasted:.0f} s ({said}); the job goes on once it takes writes"
        )

    def alive_within(self) -> float:
        """ALIVE_WITHIN, and as long again as Redis has refused every write (`_view_while_writes_refused`)."""
        since = self.writes_refused_since
        return ALIVE_WITHIN + (0.0 if since is None else time.monotonic() - since)

    async def leave(self, limit: float = 1.0) -> None:
        """At a clean stop, once `run` has ended: this node's beat marked `stopped`, so the others drop
        it from their view at once (it counted as alive until its beat was ALIVE_WITHIN s old: an api
        node listed a stopped engine node and counted it in `engines_alive`). The beat stays, stamped
        now, so a rolling restart is still one (RESTART_GRACE) and a node gone for good is forgotten.
        Only the beat this process wrote (`RedisJobs.leave`): a node restarted under the same name meanwhile
        keeps its own. Bounded: a Redis that is down at the stop leaves the beat to age out as before."""
        if not self.node:
            return
        try:
            await asyncio.wait_for(self.jobs.leave(self.node), limit)
        except (TimeoutError, OutOfMemoryError, ResponseError, *REDIS_DOWN) as exc:
            reraise_if_cancelling()
            log.info("node %s could not mark its heartbeat stopped (%s): it ages out", self.node, exc)
