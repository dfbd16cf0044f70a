"""Shared fixtures: settings in a temp dir, a live worker on a real socket, the blocking-call guard."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from aiohttp.web_runner import BaseRunner
from blockbuster import blockbuster_ctx

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.config import Settings
from npu_worker.server import Listener, listen
from tests.redis_server import RedisServer, redis_available
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytest_plugins = ["tests.player_support"]  # the player's browser fixtures (open_player, lecture)


@pytest.fixture(autouse=True)
def blockbuster(request: pytest.FixtureRequest) -> Any:
    """Fail any test that makes a blocking call on the event loop (as aiohttp's own suite does)."""
    if request.node.get_closest_marker("allow_blocking"):
        yield None
        return
    # Only calls made from the package's own frames count: a test reading a wav it got back is fine,
    # the server doing blocking I/O on its loop is not.
    with blockbuster_ctx("npu_worker") as bb:
        yield bb


@pytest.fixture(scope="module", autouse=True)
def no_child_left_by_the_module(request: pytest.FixtureRequest) -> Any:
    """A module that leaves a child process running fails at its last test, naming it (child_guard.py)."""
    from tests.child_guard import module_guard

    yield from module_guard(request.module.__name__)


@pytest.fixture
def redis_server(tmp_path: Path) -> Any:
    """A real redis-server of this test's own (loopback, free port, no persistence)."""
    if not redis_available():
        pytest.skip("redis-server is not installed (Debian package `redis-server`; .ci/run installs it)")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def jobs(redis_server: RedisServer) -> AsyncIterator[Any]:
    """The shared-job store on `redis_server`, its work groups made for nodes n1 and n2."""
    from npu_worker.jobs.cluster.store import RedisJobs  # the Redis client loads for these tests only

    store = RedisJobs(redis_server.url)
    await store.ensure_groups("n1")
    await store.ensure_groups("n2")
    yield store
    await store.close()


@pytest.fixture(scope="module")
def browser() -> Any:
    """Headless Chromium, one per test module (skipped where it is not installed)."""
    from tests.browser_support import chromium, require_chromium

    require_chromium()
    with chromium() as launched:
        yield launched


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        state_dir=str(tmp_path / "state"),
        output_roots=(str(tmp_path),),
        heartbeat_interval=10.0,
        cache_max_bytes=0,
    )


WorkerFactory = Callable[..., Awaitable[TestClient]]


class ServedAsInProduction(TestServer):
    """aiohttp's test server cancels a handler whose client went away; `serve` does not (aiohttp's
    default), and that difference once hid a /synth that ran on after its caller hung up. Tests run
    the handlers the way production does."""

    async def _make_runner(self, **kwargs: Any) -> BaseRunner:
        kwargs["handler_cancellation"] = False
        return await super()._make_runner(**kwargs)


@pytest.fixture
async def openai_sdks_closed() -> AsyncIterator[None]:
    """The OpenAI SDK clients a test opened (`tests.openai_support.kept`) are closed on its loop."""
    from tests.openai_support import sdks_closed_after

    async for _ in sdks_closed_after():
        yield


@pytest.fixture
async def worker(aiohttp_client: Any, settings: Settings) -> AsyncIterator[WorkerFactory]:
    """Start a real worker on a TCP port: `client = await worker(engine, **setting_overrides)`."""

    async def start(engine: Any = "tone", wait_loaded: bool = True, **overrides: Any) -> TestClient:
        """`engine="tone"`: a fresh ToneEngine; `engine=None`: the configured backend, as `serve` does."""
        if engine == "tone":
            engine = ToneEngine()
        client = await aiohttp_client(await production_server(settings.replace(**overrides), engine))
        if wait_loaded:
            await wait_until_loaded(client)
        return client

    yield start


async def production_server(settings: Settings, engine: Any) -> ServedAsInProduction:
    """The app `serve` builds, served as in production: `worker`'s, and a module's shared worker
    (tests/zipvoice/test_server_e2e.py). build_app is a synchronous factory (it runs before the loop
    in `serve`): built off the loop."""
    return ServedAsInProduction(await asyncio.to_thread(build_app, settings, engine))


async def wait_until_loaded(client: TestClient) -> None:
    """The engine's load in the background (a ZipVoice load specialises decoders: seconds of CPU); 120 s,
    not 30: under load (≈ 20) on the 2-core VM a ZipVoice load in test_server_e2e.py ran past 30 s. The
    load's speed is no test's subject; a load that fails ends the wait at once (`load_error`)."""
    scheduler = client.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(120)):
        while not scheduler.loaded and scheduler.load_error is None:
            await asyncio.sleep(0.01)


Start = Callable[..., Awaitable[Listener]]


@pytest.fixture
async def served(settings: Settings) -> AsyncIterator[Start]:
    """`listener = await served(engine=None, **overrides)`: the app behind npu_worker.server (the
    connection guard, as `serve` runs it) on a free port; a ToneEngine unless `engine` is given."""
    listeners: list[Listener] = []

    async def start(engine: Any = None, **overrides: Any) -> Listener:
        configured = settings.replace(**overrides)
        app = await asyncio.to_thread(build_app, configured, engine or ToneEngine())
        listener = await listen(app, configured, host="127.0.0.1", port=0)
        listeners.append(listener)
        async with asyncio.timeout(seconds(30)):
            while not app[SCHEDULER_KEY].loaded and app[SCHEDULER_KEY].load_error is None:
                await asyncio.sleep(0.01)
        return listener

    yield start
    for listener in listeners:
        await listener.close()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Without pytest-xdist (`-p no:xdist`, or an environment without it) pyproject's `-n auto --dist
    loadfile` still parses, and the suite runs in this one process, instead of pytest refusing to start."""
    if not pluginmanager.hasplugin("xdist"):
        group = parser.getgroup("xdist", "pytest-xdist is not loaded: these options are ignored")
        # pytest keeps lowercase short options for plugins; xdist registers `-n` the same way.
        group._addoption("-n", "--numprocesses", dest="numprocesses", default=None)
        group.addoption("--dist", dest="dist", default="no")
        group.addoption("--no-loadscope-reorder", dest="loadscopereorder", action="store_false")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject): the CPUs this run may use, at most 4 (tests/worker_count.py says why);
    xdist's own count where PYTEST_XDIST_AUTO_NUM_WORKERS names one (not a number: xdist ignored it and
    counted the host's cores, past any quota)."""
    from tests.worker_count import auto_workers, named_workers

    return None if named_workers() is not None else auto_workers()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    """No cyclic collection while the suite is collected, then what collection made frozen: the
    collector otherwise ran ≈ 30 full passes over a heap growing to 300 000 objects as each module was
    imported and rewritten (4.7 of 15.5 s of a collection's CPU, in each xdist worker), and every full
    pass of the run after (a test's own `gc.collect()`, the automatic ones) walked the modules and
    test items again. Frozen objects are alive for the whole run anyway; `gc.get_objects()` leaves
    them out, so a test counting what it made counts the same."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()
        gc.enable()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, the rest by number of tests (suite_order.py says why); the same order in
    every xdist worker, and the controller hands the files out in it."""
    from tests.suite_order import ordered

    items[:] = [items[index] for index in ordered([item.nodeid for item in items])]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start test_prepare_qdq.py's and test_prepare.py's simulator work in background processes now, if
    they are to run (tests/zipvoice/qdq_background.py says why). Not in a pytest-xdist worker: there the
    controller starts it, once for all workers (`pytest_xdist_node_collection_finished`)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        start_simulator_work([item.nodeid for item in session.items])
        start_static_checks([item.nodeid for item in session.items])


def start_static_checks(nodeids: list[str]) -> None:
    """mypy and the benchmarks' `--help` in background processes, those whose tests are to run
    (tests/static_background.py)."""
    from tests import static_background

    jobs = [job for job, test in static_background.JOBS.items() if test in nodeids]
    if jobs:
        folder = os.environ.get(static_background.FOLDER_VARIABLE) or tempfile.mkdtemp(
            prefix="npu-worker-checks-"
        )
        static_background.start(Path(folder), jobs)


def start_simulator_work(nodeids: list[str]) -> None:
    from tests.zipvoice import qdq_background
    from tests.zipvoice.test_providers import qnn

    def wanted(module: str) -> bool:
        return any(nodeid.startswith(f"tests/zipvoice/{module}") for nodeid in nodeids)

    jobs = (qdq_background.FIXTURES if wanted("test_prepare_qdq.py") else ()) + (
        (qdq_background.FP32_FIVE,) if wanted("test_prepare.py") else ()
    )
    if jobs and not qnn.args[0]:  # the `qnn` marker's skip condition
        root = os.environ.get(qdq_background.ROOT_VARIABLE) or tempfile.mkdtemp(prefix="npu-worker-qdq-")
        qdq_background.start(Path(root), jobs)


def pytest_configure(config: pytest.Config) -> None:
    """The xdist controller names the simulator work's directory, and the static checks', before its
    workers start (they inherit the environment; `qdq_background.wait`, `static_background.answer` look
    there)."""
    from tests import static_background
    from tests.zipvoice import qdq_background

    if "PYTEST_XDIST_WORKER" not in os.environ:  # one named by the environment is not this session's
        os.environ.pop(static_background.FOLDER_VARIABLE, None)  # (its end removes the folder)
    if config.pluginmanager.hasplugin("xdist") and "PYTEST_XDIST_WORKER" not in os.environ:
        if config.getoption("numprocesses", None):
            os.environ[qdq_background.ROOT_VARIABLE] = tempfile.mkdtemp(prefix="npu-worker-qdq-")
            os.environ[static_background.FOLDER_VARIABLE] = tempfile.mkdtemp(prefix="npu-worker-checks-")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """The xdist controller: the first worker's collection (each collects the whole suite) says which
    tests run; the simulator work and the static checks start once (`start` ignores the later calls)."""
    start_simulator_work(ids)
    start_static_checks(ids)


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests import static_background
    from tests.zipvoice import qdq_background

    qdq_background.stop()
    static_background.stop()
    if "PYTEST_XDIST_WORKER" not in os.environ:
        for variable in (qdq_background.ROOT_VARIABLE, static_background.FOLDER_VARIABLE):
            if variable in os.environ:
                shutil.rmtree(os.environ.pop(variable), ignore_errors=True)  # (none started)
