"""One time unit for every test timeout, scaled by NPU_WORKER_TEST_TIME_SCALE on slow machines."""

import os

SCALE = float(os.environ.get("NPU_WORKER_TEST_TIME_SCALE", "1"))


def seconds(value: float) -> float:
    """A test timeout of `value` seconds on a normal machine."""
    return value * SCALE
