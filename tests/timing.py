"""One time unit for every test timeout, scaled by NPU_WORKER_TEST_TIME_SCALE on slow machines."""

import asyncio
import os
from collections.abc import Callable

SCALE = float(os.environ.get("NPU_WORKER_TEST_TIME_SCALE", "1"))


def seconds(value: float) -> float:
    """A test timeout of `value` seconds on a normal machine."""
    return value * SCALE


async def until(condition: Callable[[], object], what: str = "the condition") -> None:
    """Poll `condition` every 10 ms until it holds; fail after 10 (scaled) seconds."""
    try:
        async with asyncio.timeout(seconds(10)):
            while not condition():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None
