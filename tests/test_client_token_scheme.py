"""A token given as the header's value, `Bearer X`, to a client command or the benchmark: it went out as
`Bearer Bearer X`, and every request was a 401; now refused at the start in one line, as --token-file is."""

from __future__ import annotations

import pytest

from npu_worker.bench.cli import main as bench_main
from npu_worker.cli_client import main as client_main
from npu_worker.client import InvalidArgument, synth

TOKEN = "a-token-of-some-length-0123456789"
NOWHERE = "http://127.0.0.1:9"  # never reached: the token is refused before any request


@pytest.mark.parametrize("token", [f"Bearer {TOKEN}", f"bearer\t{TOKEN}"])
def test_a_token_flag_with_the_scheme_is_one_line_and_exit_two(tmp_path, capsys, token):
    argv = ["synth", "x", "-o", str(tmp_path / "a.wav"), "--base", NOWHERE, "--token", token]
    assert client_main(argv) == 2
    err = capsys.readouterr().err
    assert "npu-worker synth: --token holds 'Bearer ' and the token: give the token alone" in err
    assert not (tmp_path / "a.wav").exists()


def test_the_token_variable_with_the_scheme_is_one_line_and_exit_two(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NPU_WORKER_TOKEN", f"Bearer {TOKEN}")
    lecture = tmp_path / "lecture.json"
    lecture.write_text('[{"idx": 0, "text": "x"}]', encoding="utf-8")
    argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", NOWHERE]
    assert client_main(argv) == 2
    err = capsys.readouterr().err
    assert "npu-worker batch: NPU_WORKER_TOKEN holds 'Bearer ' and the token" in err


@pytest.mark.parametrize("mode", ["load", "fragments"])
def test_the_benchmark_refuses_a_token_with_the_scheme(tmp_path, capsys, mode):
    argv = ["bench", "--mode", mode, "--base", NOWHERE, "--token", f"Bearer {TOKEN}"]
    assert bench_main([*argv, "--out", str(tmp_path / "report")]) == 2
    assert "npu-worker bench: --token holds 'Bearer ' and the token" in capsys.readouterr().err


@pytest.mark.parametrize("token", ["Bearer", "bearer-token-0123"])  # a token that only looks like one
def test_a_token_named_like_the_scheme_is_still_sent(tmp_path, capsys, token):
    argv = ["synth", "x", "-o", str(tmp_path / "a.wav"), "--base", NOWHERE, "--token", token]
    client_main(argv)
    assert "holds 'Bearer '" not in capsys.readouterr().err


@pytest.mark.parametrize("token", [f"Bearer {TOKEN}", f"BEARER  {TOKEN}"])
def test_the_python_client_refuses_a_token_with_the_scheme(token):
    """`synth(..., token="Bearer X")` sent `Bearer Bearer X`: a 401 the caller could not explain."""
    with pytest.raises(InvalidArgument, match="the token is what follows 'Bearer ' alone"):
        synth("x", "/tmp/never.wav", base=NOWHERE, token=token)
