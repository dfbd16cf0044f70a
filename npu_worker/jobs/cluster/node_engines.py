"""Which engines a cluster node answers for: its own, or, on an `api` node and on a `both` node whose
engine failed to load (or still loads while a peer's runs), those of the live engine nodes its
heartbeat sees. What /health, /ready and the views' checks read; apart from `ClusterScheduler`'s
wiring (its loops, submission, lookups) because it decides nothing but what the node says."""

from __future__ import annotations

from typing import Any

from redis.exceptions import OutOfMemoryError

from ...engine.base import DecoderCalls, EngineInfo
from ...engine.spoken_languages import spoken_languages
from ...protocol import Loading, Unsupported, WorkerError
from ..scheduler import Scheduler
from .engine_node import EngineNode
from .heartbeat import Heartbeat
from .outage import redis_unreachable


class ClusterEngines(Scheduler):
    _engine: Any  # the node's own engine (`engine` is what the views consult)
    _draining: bool
    engine_node: EngineNode | None
    heartbeat: Heartbeat
    role: str
    loop_failure: WorkerError | None  # one of the node's loops ended on an exception (`ClusterScheduler`)
    submitting: (
        int  # `/synth`s and others this node is submitting, not yet in Redis (`ClusterScheduler.submit`)
    )

    def _own_load_error(self) -> WorkerError | None:
        """Why this node's engine failed to load (its heartbeat carries it); None on an api node."""
        return self.engine_node.runner.load_failure if self.engine_node is not None else None

    def _serves_as_api(self) -> bool:
        """An api node, or a `both` node whose own engine failed to load or, while a peer's engine runs,
        still loads: it accepts work for the other engine nodes to run (it refused every submission, a
        failed one 500, a loading one 503, while a loaded peer could run them), and answers for the
        cluster's engines, as an api node does. Its beat still says why it failed or how far it is."""
        if self.engine_node is None:
            return True
        if self.role != "both":
            return False
        if self._own_load_error() is not None:
            return True
        return self.engine_node.runner.info is None and self._peer_engine_alive()

    def _peer_engine_alive(self) -> bool:
        """Some node of the cluster view runs a loaded engine (its beat names the backend)."""
        return any(node.get("backend") for node in self.heartbeat.view["nodes"])

    @property
    def engine(self) -> Any:
        """The engine the views consult for what it speaks (languages, voices, espeak's voice list): none
        on an api node, nor on a `both` node whose own engine failed to load, which answers for its peers'
        engines as an api node does (its failed espeak made `GET /v1/audio/voices` a 500 there)."""
        return None if self._serves_as_api() else self._engine

    @engine.setter
    def engine(self, engine: Any) -> None:
        self._engine = engine

    def _own_languages(self) -> list[str] | None:
        """This node's own loaded engine's languages, for its heartbeat."""
        if self.engine_node is None or self.engine_node.runner.info is None:
            return None
        return spoken_languages(self._engine)

    def spoken_languages(self) -> list[str] | None:
        """What /health lists: its own engine's, or, answering for its peers' engines (an api node), the
        languages all of them speak (`Heartbeat.common_languages`)."""
        if self._serves_as_api():
            return self.heartbeat.common_languages()
        return super().spoken_languages()

    def _engine_info(self) -> EngineInfo | None:
        """What this node's engine says (its heartbeat carries it); None on an api node or while loading."""
        return self.engine_node.runner.info if self.engine_node is not None else None

    def _beat_engine_info(self) -> EngineInfo | None:
        """The engine the node's beat names: none once a loop of the node has failed (peers count it out)."""
        return None if self.loop_failure is not None else self._engine_info()

    def _beat_failure(self) -> WorkerError | None:
        """What the node's beat says failed: a loop of the node, else its engine's load."""
        return self.loop_failure or self._own_load_error()

    def _own_decoder_calls(self) -> DecoderCalls | None:
        """This node's own engine's decoder calls, for its heartbeat (also while it answers as an api node)."""
        return self.engine_node.runner.decoder_calls if self.engine_node is not None else None

    @property
    def info(self) -> EngineInfo | None:
        if self.engine_node is not None and not self._serves_as_api():
            return self.engine_node.runner.info
        for node in self.heartbeat.view["nodes"]:  # an api node reports the engines it feeds
            if node.get("backend"):
                return EngineInfo(
                    node["backend"], node["device"], node["precision"], node["sample_rate"], node["model"]
                )
        return None

    @property
    def load_error(self) -> WorkerError | None:
        """This node's engine's failure; on an api node (and a `both` node whose engine failed), every
        live engine node's (`engines_failed`); first, a loop of the node that ended on an exception."""
        if self.loop_failure is not None:
            return self.loop_failure
        if not self._serves_as_api():
            return self._own_load_error()
        return self.heartbeat.engines_failed()

    @property
    def load_seconds(self) -> float | None:
        return self.engine_node.runner.load_seconds if self.engine_node is not None else None

    @property
    def load_phase(self) -> str | None:
        """This node's engine's; none while the node answers for its peers' engines (`loaded: true`,
        their `backend`): its own load's phase is in its `cluster.nodes` entry then."""
        return None if self._serves_as_api() else self._own_load_phase()

    def _own_load_phase(self) -> str | None:
        return self.engine_node.runner.load_phase if self.engine_node is not None else None

    @property
    def decoder_calls(self) -> DecoderCalls | None:
        """This node's own engine's (an api node's answers run elsewhere: none)."""
        if self.engine_node is None or self._serves_as_api():
            return None
        return self.engine_node.runner.decoder_calls

    def queue_size(self) -> int:
        return int(self.heartbeat.view["queue_depth"])

    def jobs_running(self) -> int:
        """This node's engine's job, and the submits still on their way to Redis (their checks off the
        loop, the write): /health said idle meanwhile, `queue_depth` not yet counting them. A job in
        Redis as its submit ends is counted twice for that moment, never missed."""
        own = int(self.engine_node is not None and self.engine_node.running is not None)
        return own + self.submitting

    async def queue_health(self) -> dict[str, Any]:
        return await self.heartbeat.health()

    def check_accepting(self) -> None:
        if self.role == "engine":
            raise Unsupported("this node runs with --role engine; send requests to an api or both node")
        super().check_accepting()  # (what a local worker says, and while it shuts down: QueueFull)

    def loading(self) -> WorkerError:
        """An api node without an engine alive in the queue is not loading one (/ready, OpenAI routes)."""
        api = self._serves_as_api()
        if api and self.heartbeat.redis_full:  # the engines are silent, not gone
            return redis_unreachable(OutOfMemoryError())
        if api:
            return Loading("no engine node is alive in the queue; retry shortly")
        return super().loading()
