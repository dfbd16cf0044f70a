"""The runner's side of a batch's next section sent ahead to espeak's child (`engine/espeak_ahead.py`;
split out of `runner.py`, 430 lines, by job): which section goes ahead, and its request, checked and
keyed once, kept for its pick, where it was built and checked a second time (benchmarks/
SERVER_OVERHEAD.md, 2026-12-08, stop 64).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..engine.base import Engine, SynthesisRequest
from ..protocol import Limits, WorkerError, check_text
from .model import Job, Section

if TYPE_CHECKING:
    from ..engine.base import EngineInfo
    from .admission import Admission
    from .cache import SynthesisCache
    from .delivery import SectionAudio
    from .finisher import Finisher


class SendsAhead:
    """`Runner`'s base for what goes ahead; the state it reads lives there."""

    admission: Admission
    cache: SynthesisCache
    finisher: Finisher
    info: EngineInfo | None
    limits: Limits
    _engine_ident: int
    _unkept: dict[str, SectionAudio]
    # The section last sent ahead, with its request and cache key: its pick takes them as they are (the
    # engine thread's alone: set as it goes ahead, taken at its pick, replaced at the next one sent; a
    # pick of another with held work releases that work first, since the one sent ahead is read away
    # before its request goes, and forgets it).
    _sent_ahead: tuple[Section, SynthesisRequest, str] | None = None

    def _request(self, job: Job, section: Section) -> SynthesisRequest:  # (`Runner`'s)
        raise NotImplementedError

    def _caches(self, job: Job, section: Section) -> bool:  # (`Runner`'s)
        raise NotImplementedError

    def _text_checked_ahead(self, section: Section) -> bool:
        """`section`'s text was checked as it went ahead (the same text, the same limits)."""
        ahead = self._sent_ahead
        return ahead is not None and ahead[0] is section

    def _request_and_key(self, job: Job, section: Section, engine: Engine) -> tuple[SynthesisRequest, str]:
        """`section`'s request and cache key: those made as it went ahead, else made now."""
        ahead = self._sent_ahead
        if ahead is not None and ahead[0] is section:
            self._sent_ahead = None
            return ahead[1], ahead[2]
        request = self._request(job, section)
        assert self.info is not None
        return request, self.cache.key_for(self.info, request, getattr(engine, "default_voice", None))

    def _when_sent(
        self, job: Job, engine: Engine, held: bool, in_hand: tuple[Section, str]
    ) -> Callable[[], None] | None:
        """What runs once a section's request is on its way to the child: the finisher's held work, then,
        on the engine thread for a job nobody listens to live and alone with sections to take (`_alone`),
        the job's next section sent ahead (`espeak_ahead.py`: the child starts it as this one ends; the
        admission still picks, and a pick of anything else stops it unread). `in_hand`: the section in
        hand and its key."""
        send_ahead = getattr(engine, "send_ahead", None)
        if send_ahead is None or job.stream_audio or threading.get_ident() != self._engine_ident:
            return self.finisher.release if held else None

        def sent() -> None:
            if held:
                self.finisher.release()
            following = self._worth_sending_ahead(job, engine, in_hand)
            if following is not None:
                send_ahead(following)

        return sent

    def _worth_sending_ahead(
        self, job: Job, engine: Engine, in_hand: tuple[Section, str]
    ) -> SynthesisRequest | None:
        """The request of `job`'s next section where it is the admission's likely next pick and the
        engine's to make: none for a cancelled job, another job with a section to take (`_alone`), a
        text that fails at its turn, or a hit in the cache (or among the made ones) at its turn: the one
        in hand, kept, is among them then (the same text said again, sent ahead, was made for nothing)."""
        following = _following(job)
        if following is None or job.cancel_requested.requested or not _alone(job, self.admission.live_jobs()):
            return None
        try:
            check_text(following.text, self.limits)
        except WorkerError:
            return None  # (it fails at its turn, as before)
        request = self._request(job, following)
        assert self.info is not None
        key = self.cache.key_for(self.info, request, getattr(engine, "default_voice", None))
        if key in self._unkept or self.cache.holds(key):  # (in this order: `_keep` puts, then forgets)
            return None
        if key and key == in_hand[1] and self._caches(job, in_hand[0]):  # ("": the cache is off)
            return None
        self._sent_ahead = (following, request, key)
        return request


def _following(job: Job) -> Section | None:
    """The job's first section not yet taken nor ended (`Job.next_untaken`'s, read without moving its
    cursor: the admission's lock is not held here)."""
    sections = job.sections
    for at in range(job.untaken_from, len(sections)):
        section = sections[at]
        if not section.taken and section.final is None:
            return section
    return None


def _alone(job: Job, live: list[Job]) -> bool:
    """No other live job has a section to take, so the admission's next pick is `job`'s (batches take
    turns, a queued preview goes first: a section sent ahead then was stopped and read away at each)."""
    for other in live:
        if other is not job and not other.cancel_requested.requested and _following(other) is not None:
            return False
    return True
