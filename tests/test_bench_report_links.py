"""The bench's report files in a shared folder: a link planted at their names is never followed."""

from __future__ import annotations

import json
import os

import pytest

from npu_worker.bench.cli import _unwritable
from npu_worker.bench.cli import main as bench_main
from npu_worker.bench.report import write_report
from tests.test_bench_rerender import report_of


def test_a_link_at_a_report_name_is_replaced_not_written_through(tmp_path):
    """`--out /tmp/run` wrote the report into the file a link at /tmp/run.json pointed at."""
    victim = tmp_path / "victim"
    victim.write_text("keep me", encoding="utf-8")
    for suffix in (".json", ".md", ".png"):
        (tmp_path / f"run{suffix}").symlink_to(victim)
    paths = write_report(report_of("shared"), tmp_path / "run")
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert all(path.is_file() and not path.is_symlink() for path in paths)
    assert json.loads(paths[0].read_text(encoding="utf-8"))["machine"]["note"] == "shared"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([victim.name, *(p.name for p in paths)])


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a link to another user needs root")
def test_another_users_entry_at_a_report_name_is_refused_before_the_run(tmp_path):
    """Renamed over in a sticky folder it fails (EPERM): found after the run, its figures lost."""
    mine = tmp_path / "mine.json"
    mine.write_text("{}", encoding="utf-8")
    link = tmp_path / "run.json"
    link.symlink_to(mine)
    os.lchown(link, 12345, 12345)
    problem = _unwritable(tmp_path / "run", (".json", ".md"))
    assert problem is not None and "belongs to another user" in problem, problem
    os.unlink(link)
    assert _unwritable(tmp_path / "run", (".json", ".md")) is None


@pytest.mark.parametrize("mode", ["load", "fragments"])
def test_an_out_prefix_naming_an_input_is_refused_before_the_run(tmp_path, capsys, mode):
    """`--texts run.json --out run` replaced the texts with the report once the run had ended."""
    texts = tmp_path / "run.json"
    texts.write_text(json.dumps(["안녕하세요."]), encoding="utf-8")
    argv = ["bench", "--base", "http://127.0.0.1:9", "--mode", mode, "--texts", str(texts)]
    code = bench_main([*argv, "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "is an input of this run" in err, err
    assert json.loads(texts.read_text(encoding="utf-8")) == ["안녕하세요."]


@pytest.mark.parametrize("name", ["r" * 240, "🎤" * 61])
def test_a_long_prefix_its_folder_takes_is_written(tmp_path, name):
    """The file beside the name was the name plus 19 bytes: a 240-byte prefix (its `.json` taken by the
    folder) was ENAMETOOLONG once the run had ended, the report lost."""
    prefix = tmp_path / name  # (61 four-byte characters: 244 bytes)
    assert _unwritable(prefix, (".json", ".md", ".png")) is None
    paths = write_report(report_of("long"), prefix)
    assert json.loads(paths[0].read_text(encoding="utf-8"))["machine"]["note"] == "long"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temp left


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a link to another user needs root")
def test_a_report_folder_reached_through_another_users_link_is_refused(tmp_path, capsys):
    """`--out /tmp/b/run`, /tmp/b another user's link to a folder of ours: the reports replaced the
    run.json and run.md there (renamed over: the link at the folder was followed)."""
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    ours = tmp_path / "project"
    ours.mkdir()
    (ours / "run.json").write_text("keep me", encoding="utf-8")
    link = shared / "b"
    link.symlink_to(ours)
    os.lchown(link, 12345, 12345)
    problem = _unwritable(link / "run", (".json", ".md"))
    assert problem is not None and "belongs to another user (uid 12345)" in problem, problem
    code = bench_main(["bench", "--base", "http://127.0.0.1:9", "--out", str(link / "run")])
    assert code == 2 and "give a folder of your own" in capsys.readouterr().err
    assert (ours / "run.json").read_text(encoding="utf-8") == "keep me"
    assert _unwritable(shared / "run", (".json", ".md")) is None  # a sticky folder itself is fine
