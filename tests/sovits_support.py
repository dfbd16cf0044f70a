"""What the tests of the sovits proxy engine against misbehaving upstreams share: the stand-in upstream
as a fixture, an engine loaded against a rogue one, and a section's outcome."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.sovits import SovitsEngine
from tests.sovits_rogue import RogueUpstream
from tests.sovits_standin import SovitsStandIn
from tests.test_sovits_engine import in_thread
from tests.timing import seconds

TEXT = "안녕하세요."


@pytest.fixture
def upstream() -> Iterator[SovitsStandIn]:
    """A test module imports it as `from tests.sovits_support import upstream as upstream`."""
    with SovitsStandIn() as standin:
        yield standin


def loaded_against(rogue: RogueUpstream, **options: float) -> SovitsEngine:
    """An engine loaded against `rogue` (its /health answers ok), for sections to meet its /synth."""
    engine = SovitsEngine(rogue.base, **options)
    engine.load()
    return engine


def section_error(engine: SovitsEngine, text: str = TEXT, within: float = 5.0) -> Any:
    try:
        return in_thread(lambda: list(engine.stream(SynthesisRequest(text)))).error(seconds(within))
    finally:
        engine.close()
