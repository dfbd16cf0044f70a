"""The espeak-child engine the espeak-process tests share (`--espeak-process`): one loaded
`EspeakProcessEngine` per test module that imports the fixture, closed (its child ended) after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from npu_worker.engine.espeak import EspeakConfig, create
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine


@pytest.fixture(scope="module")
def engine() -> Iterator[EspeakProcessEngine]:
    engine = create(EspeakConfig(process=True))
    assert isinstance(engine, EspeakProcessEngine)
    engine.load()
    yield engine
    engine.close()
