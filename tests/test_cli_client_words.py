"""`npu-worker synth` and `batch` say a caller's mistake, or a worker out of reach, in the project's
words: one line naming what failed, never Python's reprs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from npu_worker.bench.cli import main as bench_main
from npu_worker.cli_client import main
from npu_worker.client import aio
from npu_worker.client.errors import NotConnected
from tests.test_cli_client import write_lecture
from tests.worker_process import refusing_port


@pytest.fixture
def refused_base() -> Iterator[str]:
    """A worker's address every connect to is refused: bound, never listening (a port bound and closed
    first may be another test's worker or Redis by the time the command connects)."""
    with refusing_port() as port:
        yield f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("command", ["synth", "batch"])
def test_a_worker_not_listening_is_said_without_urllibs_wrapper(command, tmp_path, capsys, refused_base):
    """It was `POST http://...: <urlopen error [Errno 111] Connection refused>`."""
    base = refused_base
    if command == "synth":
        argv = ["synth", "--base", base, "-o", str(tmp_path / "x.wav"), "hi"]
    else:
        argv = [
            "batch",
            "--base",
            base,
            "--out-dir",
            str(tmp_path),
            str(write_lecture(tmp_path / "l.json", ["a."])),
        ]
    assert main(argv) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert said[-1].endswith(": cannot reach the worker: Connection refused"), said
    assert not any("urlopen" in line for line in said), said


@pytest.mark.parametrize("lang", ["", "  "])
@pytest.mark.parametrize("command", ["synth", "batch", "bench"])
def test_a_blank_lang_is_refused_in_the_flags_words(command, lang, tmp_path, capsys, refused_base):
    """`--lang ''` silently became the default ('ko', or the lecture's), where the worker refuses a
    blank `lang`: now argparse's exit 2 naming the flag, before anything is sent."""
    argv = {
        "synth": ["synth", "-o", str(tmp_path / "x.wav"), "hi"],
        "batch": ["batch", "--out-dir", str(tmp_path), str(write_lecture(tmp_path / "l.json", ["a."]))],
        "bench": ["bench", "--out", str(tmp_path / "r")],
    }[command]
    run = bench_main if command == "bench" else main
    with pytest.raises(SystemExit) as refused:
        run([*argv, "--base", refused_base, "--lang", lang])
    assert refused.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.endswith(
        f"argument --lang: {lang!r} is blank: give a language code such as ko, or leave --lang out for the default"
    ), said


async def test_the_async_client_says_a_worker_not_listening_in_the_same_words(tmp_path, refused_base):
    """Its error was aiohttp's repr: `ClientConnectorError(ConnectionKey(host='127.0.0.1', …), …)`."""
    base = refused_base
    with pytest.raises(NotConnected) as refused:
        await aio.synth("hi", str(tmp_path / "x.wav"), base=base)
    assert str(refused.value) == f"POST {base}/synth: cannot reach the worker: Connection refused"
