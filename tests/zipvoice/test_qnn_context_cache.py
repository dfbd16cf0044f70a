"""The compiled QNN context cache (`qnn_cache.py`, the state dir's `qnn-cache/`): a context compiled once
is loaded again by the next start, its key follows the decoder's bytes and the runtime's versions (not
its inode, ctime or mtime), an old context is replaced, not kept, the folder is the worker's alone, a
killed compile's scratch is removed, and a full disk still gets the NPU, uncached.

Apart from test_providers.py (device choice and placement) because the cache is its own job, with a
module of its own; the QNN tests here run the real plugin on the HTP simulator as those do.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_worker.engine import providers, qnn_cache
from npu_worker.engine.providers import RuntimeConfig
from npu_worker.engine.zipvoice import runtime
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from tests.zipvoice.simple_decoder import write_simple_decoder
from tests.zipvoice.test_providers import (
    BUCKETS,
    LOADED,
    decoder_feed,
    engines_closed,  # noqa: F401 - autouse: the engines a test loaded (LOADED) closed after it, here too
    qnn,
    qnn_engine,
    relative_l2,
)


@dataclasses.dataclass(frozen=True)
class CompiledTwice:
    """Two `--device qnn` loads on one state dir: the first compiles every bucket, the second finds the cached
    contexts (`contexts`: the cache after the first; `again_log`: the records of the second load)."""

    first: ZipVoiceEngine
    again: ZipVoiceEngine
    contexts: list[Path]
    again_log: str


@pytest.fixture(scope="module")
def compiled_twice(qnn_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CompiledTwice]:
    """Shared by the two tests below, which made the same two loads each (≈ 2.5 s of CPU a pair); the
    engines are the module's, closed after both (not after the first test, as LOADED's are)."""
    state = tmp_path_factory.mktemp("compiled-twice")
    first = qnn_engine(qnn_model_dir, state, device="qnn")
    LOADED.remove(first)
    contexts = sorted((state / "qnn-cache").glob("fm_decoder-*_ctx.onnx"))
    records: list[str] = []
    handler = logging.Handler()  # on the root logger, with the engine's logger at INFO, as caplog.at_level
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    engine_log = logging.getLogger("npu_worker.engine.zipvoice.engine")
    level = engine_log.level
    engine_log.setLevel(logging.INFO)
    logging.getLogger().addHandler(handler)
    try:
        again = qnn_engine(qnn_model_dir, state, device="qnn")
        LOADED.remove(again)
    except BaseException:
        first.close()
        raise
    finally:
        logging.getLogger().removeHandler(handler)
        engine_log.setLevel(level)
    try:
        yield CompiledTwice(first, again, contexts, "\n".join(records))
    finally:
        first.close()
        again.close()


@qnn
def test_placement_of_a_whole_qnn_decoder_is_reported_again_from_the_cached_context(compiled_twice):
    first, again = compiled_twice.first.info.placement, compiled_twice.again.info.placement
    assert first[f"fm_decoder@{BUCKETS[0]}"] == {"device": "qnn", "nodes": 11, "on_device": 11}
    assert again == first


@qnn
def test_compiled_qnn_context_is_cached_on_disk_and_reused(compiled_twice):
    assert len(compiled_twice.contexts) == len(BUCKETS)
    # /health load_phase said "specialising and compiling" while a later start loaded the cache
    assert (
        f"loading: loading the cached compiled fm_decoder@{BUCKETS[0]} for qnn (1/3)"
        in compiled_twice.again_log
    )
    assert "specialising" not in compiled_twice.again_log
    session = compiled_twice.again.models.decoder.decoders[BUCKETS[0]].session
    ops = {node.op_type for sub in session.get_provider_graph_assignment_info() for node in sub.get_nodes()}
    assert ops == {"EPContext"}  # loaded from the compiled context, not compiled again


def test_the_qnn_context_cache_key_changes_with_the_runtime_and_the_specialiser(tmp_path, monkeypatch):
    """After an upgrade of onnxruntime, its QNN plugin or the specialiser the old context (with its
    old placement) was loaded again: the key had only the file, the shape and the provider options."""
    import importlib.metadata

    from npu_worker.engine import specialize

    model = tmp_path / "fm_decoder.onnx"
    model.write_bytes(b"graph")
    config = RuntimeConfig(cache_dir=tmp_path / "qnn-cache")
    before = qnn_cache.context_cache_path(config, model, {"N": 1, "T": 63})
    assert qnn_cache.context_cache_path(config, model, {"N": 1, "T": 63}) == before
    installed = importlib.metadata.version
    for upgraded in ("onnxruntime", "onnxruntime-qnn"):
        with monkeypatch.context() as patch:
            patch.setattr(
                importlib.metadata,
                "version",
                lambda name, upgraded=upgraded: "99.0" if name == upgraded else installed(name),
            )
            assert qnn_cache.context_cache_path(config, model, {"N": 1, "T": 63}) != before, upgraded
    monkeypatch.setattr(specialize, "VERSION", specialize.VERSION + 1)
    assert qnn_cache.context_cache_path(config, model, {"N": 1, "T": 63}) != before


def test_a_decoder_hard_linked_chmodded_or_copied_keeps_its_compiled_qnn_context(tmp_path):
    """The key held the decoder's inode and ctime: `prepare` hard-linking it into --out (a new link moves
    the ctime), a deploy's `chmod`, or a copy onto a mount with other inodes had the next start compile
    every bucket again (minutes on the NPU), though the weights were the same."""
    model = tmp_path / "fm_decoder.onnx"
    model.write_bytes(b"graph")
    config = RuntimeConfig(cache_dir=tmp_path / "qnn-cache")
    before = qnn_cache.context_cache_path(config, model, {"N": 1, "T": 63})
    os.link(model, tmp_path / "prepared-fm_decoder.onnx")
    os.chmod(model, 0o640)
    assert qnn_cache.context_cache_path(config, model, {"N": 1, "T": 63}) == before
    stamp = model.stat()
    model.write_bytes(b"graf!")  # other weights, the same size and mtime
    os.utime(model, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert qnn_cache.context_cache_path(config, model, {"N": 1, "T": 63}) != before


@qnn
def test_a_decoder_replaced_by_another_of_the_same_size_and_mtime_is_compiled_again(tmp_path):
    """The cache key had the file's size and mtime only: two exports of one architecture have the same
    size, and a copy that keeps times (`cp -p`, `rsync -t`, an image built with SOURCE_DATE_EPOCH) the
    same mtime, so the NPU went on running the old weights, its context loaded from the cache."""
    path = write_simple_decoder(tmp_path / "fm_decoder.onnx", seed=0)
    dims = runtime.bucket_dims(path, (63,))[63]
    config = RuntimeConfig(threads=1, allow_htp_simulator=True, cache_dir=tmp_path / "qnn-cache")
    feed = decoder_feed(63)
    old = providers.open_session(path, "qnn", config, dims).run(None, feed)[0]
    stamp = path.stat()
    write_simple_decoder(path, seed=1)  # in place: the same inode
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stamp.st_size, stamp.st_mtime_ns)
    expected = providers.open_session(path, "cpu", RuntimeConfig(threads=1)).run(None, feed)[0]
    new = providers.open_session(path, "qnn", config, dims).run(None, feed)[0]
    assert relative_l2(expected, new) < 3e-3 < relative_l2(old, new)


@qnn
def test_a_context_compiled_again_after_an_upgrade_replaces_the_old_one_in_the_cache(
    qnn_model_dir, tmp_path, monkeypatch
):
    """Every upgrade or model change left the old context behind (hundreds of MB per bucket at full
    size), never loaded again."""
    import importlib.metadata

    path = qnn_model_dir / "fm_decoder.onnx"
    dims = runtime.bucket_dims(path, (BUCKETS[0],))[BUCKETS[0]]
    config = RuntimeConfig(threads=1, allow_htp_simulator=True, cache_dir=tmp_path / "qnn-cache")
    other = runtime.bucket_dims(path, (BUCKETS[1],))[BUCKETS[1]]
    providers.open_session(path, "qnn", config, other)  # another bucket: kept
    installed = importlib.metadata.version
    with monkeypatch.context() as patch:
        patch.setattr(
            importlib.metadata, "version", lambda name: "0.1" if "onnx" in name else installed(name)
        )
        providers.open_session(path, "qnn", config, dims)
        old = sorted(p.name for p in config.cache_dir.iterdir())
    providers.open_session(path, "qnn", config, dims)
    now = sorted(p.name for p in config.cache_dir.iterdir())
    assert len(old) == len(now) and len(now) >= 4, now  # two contexts with their placement (and bins)
    kept = qnn_cache.context_cache_path(config, path, dims)
    assert kept is not None and kept.name in now and kept.name not in old
    assert qnn_cache.context_cache_path(config, path, other).name in now


@qnn
def test_the_qnn_context_cache_is_a_folder_only_the_worker_can_write_in(qnn_model_dir, tmp_path):
    """The worker loads whatever context the cache holds: a folder made group-writable (a service's
    UMask=0007, as the synthesis cache's was) let the group plant one."""
    cache = tmp_path / "qnn-cache"
    cache.mkdir(mode=0o770)
    cache.chmod(0o770)
    qnn_engine(qnn_model_dir, tmp_path, device="qnn")
    assert cache.stat().st_mode & 0o022 == 0
    assert len(list(cache.glob("fm_decoder-*_ctx.onnx"))) == len(BUCKETS)


@qnn
def test_a_graph_a_killed_worker_was_specialising_is_removed_from_the_cache_and_a_live_one_kept(
    qnn_model_dir, tmp_path
):
    """A worker killed while it compiled (a restart during a first start's minutes of compiling) left
    its specialised graph, as large as the decoder, in `qnn-cache/` for good: one more per kill."""
    import fcntl

    cache = tmp_path / "qnn-cache"
    dead, live = cache / "specialise-dead", cache / "specialise-live"
    for scratch in (dead, live):
        scratch.mkdir(parents=True)
        shutil.copy(qnn_model_dir / "fm_decoder.onnx", scratch / "fm_decoder.onnx")
    held = os.open(live, os.O_RDONLY | os.O_DIRECTORY)  # another process specialising there right now
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        config = RuntimeConfig(allow_htp_simulator=True, cache_dir=cache)
        providers.open_session(qnn_model_dir / "fm_decoder.onnx", "qnn", config, {"N": 1, "T": 127})
    finally:
        os.close(held)
    assert not dead.exists()
    assert (live / "fm_decoder.onnx").is_file()
    assert len(list(cache.glob("fm_decoder-*_ctx.onnx"))) == 1


COMPILE_INTO_CACHE = """
import sys
from pathlib import Path
from npu_worker.engine import providers
config = providers.RuntimeConfig(allow_htp_simulator=True, cache_dir=Path(sys.argv[2]))
session, placed = providers.open_placed_session(Path(sys.argv[1]), "qnn", config, {"N": 1, "T": 127})
print(placed.device, placed.on_device, placed.nodes)
"""


@qnn
def test_a_state_disk_that_cannot_take_the_compiled_context_still_gets_the_npu(qnn_model_dir, tmp_path):
    """QNN compiled the decoder, then onnxruntime could not write the context into the full state disk
    ("Failed to write context cache file"): `--device qnn` failed to load and `auto` fell back to the
    CPU for the worker's life, and the half-written binary stayed in the cache."""
    decoder = qnn_model_dir / "fm_decoder.onnx"
    command = [sys.executable, "-c", COMPILE_INTO_CACHE, str(decoder)]
    fits = subprocess.run([*command, str(tmp_path / "roomy")], capture_output=True, text=True, timeout=120)
    placed = fits.stdout.splitlines()[-1]  # (QNN's own lines come first)
    assert fits.returncode == 0 and placed.startswith("qnn "), fits.stderr
    binary = max(path.stat().st_size for path in (tmp_path / "roomy").glob("*_qnn.bin"))
    if decoder.stat().st_size * 1.1 >= binary:  # the specialised graph must still fit, the binary not
        pytest.skip(f"this runtime's context binary ({binary} bytes) is not larger than the graph")

    def full_disk() -> None:  # a write past the binary's last bytes fails (EFBIG) as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (binary - 1, binary - 1))

    full = tmp_path / "full"
    done = subprocess.run(
        [*command, str(full)], capture_output=True, text=True, timeout=120, preexec_fn=full_disk
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == placed  # on QNN, whole
    assert "not cached" in done.stderr and "compiling it again, uncached" in done.stderr
    assert not [path.name for path in full.iterdir() if path.name.startswith("fm_decoder")]
