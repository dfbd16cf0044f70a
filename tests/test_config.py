"""Settings come from flags, then NPU_WORKER_* env vars, then defaults."""

from __future__ import annotations

import argparse
import os
import tempfile

import pytest

from npu_worker.config import Settings, add_settings_arguments, load_settings, settings_table


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_settings_arguments(parser)
    return parser.parse_args(argv)


def test_defaults_match_the_protocol():
    settings = load_settings(parse([]), environ={})
    assert (settings.host, settings.port, settings.backend) == ("127.0.0.1", 7768, "espeak")
    assert (settings.max_text_chars, settings.max_sections, settings.max_body_bytes) == (
        2000,
        1000,
        8 * 1024 * 1024,
    )


def test_env_vars_fill_in_and_flags_win():
    env = {"NPU_WORKER_PORT": "9000", "NPU_WORKER_HOST": "0.0.0.0", "NPU_WORKER_SOVITS_BASE": "http://x:1"}
    settings = load_settings(parse(["--port", "9100"]), environ=env)
    assert settings.port == 9100 and settings.host == "0.0.0.0" and settings.sovits_base == "http://x:1"


def test_list_settings_parse_from_env():
    env = {"NPU_WORKER_CHUNK_SCHEDULE_MS": "20,40", "NPU_WORKER_OUTPUT_ROOTS": "/a:/b"}
    settings = load_settings(None, environ=env)
    assert settings.chunk_schedule_ms == (20.0, 40.0) and settings.output_roots == ("/a", "/b")


def test_bad_env_value_is_a_clear_exit():
    with pytest.raises(SystemExit, match="NPU_WORKER_PORT"):
        load_settings(None, environ={"NPU_WORKER_PORT": "many"})
    with pytest.raises(SystemExit, match="NPU_WORKER_BACKEND"):
        load_settings(None, environ={"NPU_WORKER_BACKEND": "magic"})


def test_default_roots_are_the_temp_dir_only(tmp_path):
    settings = Settings(state_dir=str(tmp_path / "state"))
    assert settings.resolved_output_roots() == (os.path.realpath(tempfile.gettempdir()),)


def test_every_setting_is_documented_in_the_table():
    table = settings_table()
    assert "`NPU_WORKER_STATE_DIR`" in table and "`--ref-wav`" in table


def test_readme_lists_every_setting_as_the_code_defines_it():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for row in settings_table().splitlines()[2:]:
        assert row in readme, f"README's configuration table is out of date: {row}"
