"""Settings come from flags, then NPU_WORKER_* env vars, then defaults."""

from __future__ import annotations

import argparse
import inspect
import os
import re
import tempfile

import pytest

from npu_worker import client
from npu_worker.client import aio
from npu_worker.config import MAX_HEARTBEAT_INTERVAL, Settings
from npu_worker.config_sources import add_settings_arguments, load_settings, settings_table
from npu_worker.config_values import shown_url


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_settings_arguments(parser)
    return parser.parse_args(argv)


DAY_AS = "(86400 s)"
RETAINED = "must be 0 (no time bound) or from 1 min to 10 years (315576000 s), as seconds or a number and s, m, h or d"
CLAIMED = "must be from 1 s to 1 day (86400 s), as seconds or a number and s, m, h or d"
HEARD = "(the Python client takes a stream silent for its read_timeout, 120 s, as stalled)"
CHUNKS = "chunk sizes are milliseconds above zero and at most 3600000 (an hour), separated by commas"


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


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("preview-lanes", "5", "preview lanes are 1 to 4, not '5'"),
        ("preview-lanes", "two", "preview lanes are 1 to 4, not 'two'"),
        ("job-retention", "5x", f"{RETAINED}, not '5x'"),
        ("job-retention", "inf", f"{RETAINED}, not 'inf'"),
        ("job-retention", "1e308d", f"{RETAINED}, not '1e308d'"),  # finite, but not once in seconds
        ("job-retention", "-1h", f"{RETAINED}, not '-1h'"),
        ("job-retention", "1e10", f"{RETAINED}, not '1e10'"),  # a wait that long overflows a timer
        ("job-retention", "3653d", f"{RETAINED}, not '3653d'"),
        ("job-retention", "59s", f"{RETAINED}, not '59s'"),  # gone before a poller could read it
        (
            "claim-timeout",
            "0",
            f"{CLAIMED}, not '0'",
        ),
        ("claim-timeout", "0.5", f"{CLAIMED}, not '0.5'"),
        ("claim-timeout", "2d", f"{CLAIMED}, not '2d'"),
        ("port", "70000", "must be a whole number from 0 to 65535, not '70000'"),
        ("seed", "-1", "must be a whole number from 0 to 4294967295, not '-1'"),
        ("max-queue", "0", "must be a whole number from 1 up, not '0'"),
        ("threads", "100000", "must be a whole number from 0 to 256, not '100000'"),  # loaded for minutes
        ("max-connections", "many", "must be a whole number from 1 up, not 'many'"),
        ("cache-max-bytes", "-1", "must be a whole number from 0 up, not '-1'"),
        ("body-timeout", "-1", f"must be seconds from 0.1 s to 1 day {DAY_AS}, not '-1'"),
        ("body-timeout", "1e10", f"must be seconds from 0.1 s to 1 day {DAY_AS}, not '1e10'"),
        ("header-timeout", "nan", f"must be seconds from 0.1 s to 1 day {DAY_AS}, not 'nan'"),
        ("header-timeout", "1e-9", "must be seconds from 0.1 s to 1 day (86400 s), not '1e-9'"),  # cuts all
        ("heartbeat-interval", "0.000001", f"must be seconds from 0.1 s to 1 min, not '0.000001' {HEARD}"),
        ("heartbeat-interval", "1e10", f"must be seconds from 0.1 s to 1 min, not '1e10' {HEARD}"),
        ("heartbeat-interval", "61", f"must be seconds from 0.1 s to 1 min, not '61' {HEARD}"),
        ("shutdown-grace", "inf", f"must be seconds from 0 s to 1 day {DAY_AS}, not 'inf'"),
        ("shutdown-grace", "1e10", "must be seconds from 0 s to 1 day"),  # past threading.TIMEOUT_MAX
        ("shutdown-grace", "-1", "must be seconds from 0 s to 1 day"),
        ("voice-max-seconds", "0.5", "must be seconds from 1 s to 3600 s, not '0.5'"),
        ("voice-max-seconds", "1e9", "must be seconds from 1 s to 3600 s, not '1e9'"),
        (
            "chunk-schedule-ms",
            "40,0",
            f"{CHUNKS}, not '40,0'",
        ),
        ("chunk-schedule-ms", "a", f"{CHUNKS}, not 'a'"),
        ("chunk-schedule-ms", "40,1e308", f"{CHUNKS}, not '40,1e308'"),  # inf in samples: a traceback
        ("chunk-schedule-ms", "3600001", f"{CHUNKS}, not '3600001'"),
        (
            "allowed-origins",
            "slides.example,https://ok.example",
            "origins are http(s)://host[:port] or *, not 'slides.example'",
        ),
        (
            "allowed-origins",
            "https://a.example/page",
            "origins are http(s)://host[:port] or *, not 'https://a.example/page'",
        ),
        ("output-roots", "/tmp: /srv", "folders are absolute paths, ':'-separated, not ' /srv'"),  # under cwd
        ("voices-dir", "voices", "folders are absolute paths, ':'-separated, not 'voices'"),
        ("token", " s3cret", "the token must not be blank or begin or end with a space"),
        ("token", " ", "the token must not be blank or begin or end with a space"),
        ("token", "Bearer s3cret", "the token is what follows 'Bearer ' alone, not 'Bearer ' and the token"),
        ("token", "bearer  s3cret", "the token is what follows 'Bearer ' alone, not 'Bearer ' and the token"),
        (
            "token",
            "s3cret\tagain",
            "the token must be printable ASCII, with no line break or control character",
        ),
    ],
)
def test_a_bad_setting_says_why_as_a_flag_and_as_an_env_var(capsys, flag, value, message):
    with pytest.raises(SystemExit):
        parse([f"--{flag}={value}"])
    assert f"argument --{flag}: {message}" in capsys.readouterr().err
    name = "NPU_WORKER_" + flag.upper().replace("-", "_")
    with pytest.raises(SystemExit, match=f"^{name}: {re.escape(message)}"):
        load_settings(None, environ={name: value})


def test_the_heartbeat_comes_twice_within_the_clients_read_timeout():
    """An interval past half the client's `read_timeout` (it was allowed up to a day) made each quiet
    stretch of a stream a spurious re-attach; a minute, the most, is taken."""
    for streaming in (client.synth_batch_streaming, aio.synth_batch_streaming):
        read_timeout = inspect.signature(streaming).parameters["read_timeout"].default
        assert 2 * MAX_HEARTBEAT_INTERVAL <= read_timeout and f"{read_timeout:g} s" in HEARD
    settings = load_settings(None, environ={"NPU_WORKER_HEARTBEAT_INTERVAL": "60"})
    assert settings.heartbeat_interval == MAX_HEARTBEAT_INTERVAL == 60.0


def test_every_duration_setting_has_an_upper_bound_under_the_timer_limit():
    """A wait longer than threading.TIMEOUT_MAX overflows (`--shutdown-grace 1e10` crashed at SIGTERM):
    every setting in seconds refuses a value past it."""
    import threading

    for name in (
        "heartbeat_interval",
        "header_timeout",
        "body_timeout",
        "job_retention",
        "voice_max_seconds",
    ):
        env = {"NPU_WORKER_" + name.upper(): str(threading.TIMEOUT_MAX)}
        with pytest.raises(SystemExit, match="^NPU_WORKER_" + name.upper()):
            load_settings(None, environ=env)
    for name in ("claim_timeout", "shutdown_grace"):
        with pytest.raises(SystemExit, match="^NPU_WORKER_" + name.upper()):
            load_settings(None, environ={"NPU_WORKER_" + name.upper(): "1e10"})


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("NPU_WORKER_TOKN", "NPU_WORKER_TOKEN"),  # the worker ran without a token, and said nothing
        ("NPU_WORKER_OUTPUT_ROOT", "NPU_WORKER_OUTPUT_ROOTS"),
        ("NPU_WORKER_STATEDIR", "NPU_WORKER_STATE_DIR"),
    ],
)
def test_an_env_var_spelt_like_a_setting_is_refused(name, meant):
    with pytest.raises(SystemExit, match=f"^{name} is not a setting \\({meant}\\?\\): rename or unset it$"):
        load_settings(None, environ={name: "x"})


def test_other_env_vars_with_the_prefix_pass():
    env = {"NPU_WORKER_TEST_TIME_SCALE": "2", "NPU_WORKER_QNN_TESTS": "0", "NPU_WORKER_WRITE_GOLDEN": "1"}
    assert load_settings(None, environ=env) == Settings()


def test_an_output_root_inside_the_state_directory_is_refused(tmp_path):
    """Every output_path under it was refused, one request at a time; the worker started silently."""
    state, inside = tmp_path / "state", tmp_path / "state" / "out"
    message = f"{inside} is inside the state directory {state}, where no caller may write"
    with pytest.raises(SystemExit, match=f"^--output-roots: {re.escape(message)}"):
        load_settings(parse(["--state-dir", str(state), "--output-roots", f"/srv:{inside}"]), environ={})
    env = {"NPU_WORKER_STATE_DIR": str(state), "NPU_WORKER_OUTPUT_ROOTS": str(state)}
    with pytest.raises(SystemExit, match=f"^NPU_WORKER_OUTPUT_ROOTS: {re.escape(str(state))} is inside"):
        load_settings(None, environ=env)
    beside = load_settings(None, environ={**env, "NPU_WORKER_OUTPUT_ROOTS": f"{state}-out:{tmp_path}"})
    assert beside.output_roots == (f"{state}-out", str(tmp_path))  # a root holding the state dir is fine


def test_values_at_their_bounds_are_taken():
    env = {"NPU_WORKER_PREVIEW_LANES": "4", "NPU_WORKER_JOB_RETENTION": "0", "NPU_WORKER_CLAIM_TIMEOUT": "2m"}
    env |= {"NPU_WORKER_PORT": "0", "NPU_WORKER_SEED": str(2**32 - 1), "NPU_WORKER_MAX_QUEUE": "1"}
    env |= {
        "NPU_WORKER_CACHE_MAX_BYTES": "0",
        "NPU_WORKER_SHUTDOWN_GRACE": "0",
        "NPU_WORKER_BODY_TIMEOUT": "0.5",
        "NPU_WORKER_ALLOWED_ORIGINS": "https://Slides.example:443/, *, http://[::1]:8000",
    }
    settings = load_settings(None, environ=env)
    assert (settings.preview_lanes, settings.job_retention, settings.claim_timeout) == (4, 0.0, 120.0)
    assert (settings.port, settings.seed, settings.max_queue) == (0, 2**32 - 1, 1)
    assert (settings.cache_max_bytes, settings.shutdown_grace, settings.body_timeout) == (0, 0.0, 0.5)
    assert settings.allowed_origins == ("https://Slides.example:443/", "*", "http://[::1]:8000")
    highest = {
        "NPU_WORKER_SHUTDOWN_GRACE": "86400",
        "NPU_WORKER_JOB_RETENTION": "3652.5d",
        "NPU_WORKER_CLAIM_TIMEOUT": "1d",
        "NPU_WORKER_HEADER_TIMEOUT": "86400",
        "NPU_WORKER_HEARTBEAT_INTERVAL": "0.1",
        "NPU_WORKER_VOICE_MAX_SECONDS": "3600",
    }
    settings = load_settings(None, environ=highest)
    assert (settings.shutdown_grace, settings.job_retention, settings.claim_timeout) == (
        86400.0,
        3652.5 * 86400,
        86400.0,
    )
    assert (settings.header_timeout, settings.heartbeat_interval, settings.voice_max_seconds) == (
        86400.0,
        0.1,
        3600.0,
    )
    assert load_settings(None, environ={"NPU_WORKER_JOB_RETENTION": "1m"}).job_retention == 60.0


def test_an_empty_token_in_the_environment_is_refused_not_read_as_no_token():
    """`--token ''` is refused; `NPU_WORKER_TOKEN=` ran with no authentication at all."""
    with pytest.raises(SystemExit, match="^NPU_WORKER_TOKEN: set but empty: unset it to run without a token"):
        load_settings(None, environ={"NPU_WORKER_TOKEN": ""})
    assert load_settings(None, environ={}).token is None
    assert load_settings(parse(["--token", "s3cret"]), environ={"NPU_WORKER_TOKEN": ""}).token == "s3cret"


def test_other_empty_env_vars_still_mean_unset():
    env = {
        "NPU_WORKER_HOST": "",
        "NPU_WORKER_PORT": "",
        "NPU_WORKER_ALLOWED_ORIGINS": "",
        "NPU_WORKER_QUEUE": "",
    }
    settings = load_settings(None, environ=env)
    assert (settings.host, settings.port, settings.allowed_origins, settings.queue) == (
        "127.0.0.1",
        7768,
        (),
        "local",
    )


def test_a_role_without_a_shared_queue_is_refused_naming_the_flag_or_env_var():
    """With the local queue `--role` did nothing: an `api` node that is silently also the engine."""
    wording = "needs a shared queue (--queue redis://HOST:PORT/DB): with the local queue the one process"
    with pytest.raises(SystemExit, match=re.escape(f"--role api {wording}")):
        load_settings(parse(["--role", "api"]), environ={})
    with pytest.raises(SystemExit, match=re.escape(f"NPU_WORKER_ROLE=engine {wording}")):
        load_settings(None, environ={"NPU_WORKER_ROLE": "engine"})
    redis = {"NPU_WORKER_QUEUE": "redis://127.0.0.1:6379/0"}
    assert load_settings(parse(["--role", "engine"]), environ=redis).role == "engine"
    assert load_settings(None, environ={"NPU_WORKER_ROLE": "both"}).role == "both"


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


def test_readme_has_no_configuration_row_that_serve_does_not_take():
    """The row check above misses a stale row (a setting renamed or removed): compare both ways with
    `npu-worker serve --help`'s own options."""
    from pathlib import Path

    from npu_worker.cli import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(--[a-z0-9-]+)` \| `(NPU_WORKER_[A-Z0-9_]+)` \|", readme, re.MULTILINE))
    serve = build_parser()._subparsers._group_actions[0].choices["serve"]
    flags = {
        option
        for action in serve._actions
        for option in action.option_strings
        if option.startswith("--") and not option.startswith("--no-") and option != "--help"
    } - {"--token-file"}  # (its row, `--token-file PATH`, names no setting: another way to give --token)
    assert {flag for flag, _ in rows} == flags
    assert all(env == "NPU_WORKER_" + flag[2:].upper().replace("-", "_") for flag, env in rows)


def test_a_queue_url_is_shown_without_its_password():
    assert shown_url("redis://:s3cret@10.0.0.5:6379/0") == "redis://:***@10.0.0.5:6379/0"
    assert shown_url("redis://worker:s3cret@host/1") == "redis://worker:***@host/1"
    assert shown_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert shown_url("local") == "local"
    # redis-py reads a password from the query too: it was shown as given
    assert shown_url("redis://h:6379/0?password=s3cret&ssl=0") == "redis://h:6379/0?password=***&ssl=0"


@pytest.mark.parametrize(
    "url", ["redis://:s3cret@host:notaport/0", "redis://:s3cret@host/db", "http://:s3cret@h"]
)
def test_a_refused_queue_url_is_shown_without_its_password(capsys, url):
    """The refusal quoted the URL as given: the password went to the terminal and the journal."""
    with pytest.raises(SystemExit):
        parse([f"--queue={url}"])
    err = capsys.readouterr().err
    assert "argument --queue: " in err and ":***@" in err and "s3cret" not in err
    with pytest.raises(SystemExit) as refused:
        load_settings(None, environ={"NPU_WORKER_QUEUE": url})
    assert ":***@" in str(refused.value) and "s3cret" not in str(refused.value)


@pytest.mark.parametrize("password", ["Ab/cd+Ef", "Ab?cdEf", "12#cdEf", "Ab@cd/Ef"])
def test_a_password_with_a_slash_is_not_shown_when_its_queue_is_refused(capsys, password):
    """A base64 password has `/` (and `?`, `#` pasted unencoded end the host too): urlsplit then saw no
    password, and the refusal quoted the URL whole to the terminal and the journal."""
    url = f"redis://:{password}@redis.lan:6379/0"
    with pytest.raises(SystemExit):
        parse([f"--queue={url}"])
    err = capsys.readouterr().err
    assert "argument --queue: " in err and "redis://:***@redis.lan:6379/0" in err, err
    assert password[3:] not in err  # (the part after the mark: a part before it may spell a port)
    with pytest.raises(SystemExit) as refused:
        load_settings(None, environ={"NPU_WORKER_QUEUE": url})
    assert "redis://:***@redis.lan:6379/0" in str(refused.value) and password[3:] not in str(refused.value)


def test_a_queue_url_that_cannot_be_parsed_once_masked_is_shown_as_its_scheme_only():
    """`redis://u:12?pw@[::1` is a valid queue to urlsplit (host `u`, port 12); masked, what follows the
    `@` is an unclosed IPv6 literal: showing it raised ValueError (the node's start line, a refusal)."""
    assert shown_url("redis://u:12?pw@[::1") == "redis://***"
    assert shown_url("redis://[::1") == "redis://***"


def test_a_tls_key_password_in_the_query_is_not_shown():
    """redis-py passes every query key on: `?ssl_password=` is the TLS key's passphrase."""
    assert shown_url("rediss://h:6380/0?ssl_password=s3cret") == "rediss://h:6380/0?ssl_password=***"


def test_the_default_reference_wav_is_found_under_home_and_named_absolutely(tmp_path, monkeypatch):
    """`~` in --ref-wav was kept as is where no shell expands it (an env var, a systemd unit): the load
    failed with "No such file or directory: '~/…'", while --model-dir and --state-dir expand it; and a
    relative one was shown as given in /health's fixed `ref_wav`."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path / "..")
    expected = str(tmp_path / "voices" / "ref.wav")
    assert load_settings(parse(["--ref-wav", "~/voices/ref.wav"]), environ={}).ref_wav == expected
    assert load_settings(parse([]), environ={"NPU_WORKER_REF_WAV": "~/voices/ref.wav"}).ref_wav == expected
    relative = f"{tmp_path.name}/voices/ref.wav"
    assert load_settings(parse(["--ref-wav", relative]), environ={}).ref_wav == expected
    assert load_settings(parse([]), environ={}).ref_wav is None


def test_a_blank_reference_wav_is_none_and_a_tilde_with_no_home_is_refused(tmp_path, monkeypatch, capsys):
    """`--ref-wav ""` (a script's `--ref-wav "$REF"` with REF unset) named the folder the worker was
    started in, made absolute, where the env var set to "" is none; and `~nobody/...` (no such user:
    nothing to expand) became a folder named `~nobody` under it, a load failure far from its cause."""
    monkeypatch.chdir(tmp_path)
    assert load_settings(parse(["--ref-wav", ""]), environ={}).ref_wav is None
    assert load_settings(parse(["--ref-wav", " "]), environ={}).ref_wav is None
    unknown = "~npu_worker_no_such_user/ref.wav"
    with pytest.raises(SystemExit):
        parse(["--ref-wav", unknown])
    assert "no home directory for ~npu_worker_no_such_user" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        load_settings(parse([]), environ={"NPU_WORKER_REF_WAV": unknown})
    assert str(refused.value).startswith("NPU_WORKER_REF_WAV: ") and "no home directory" in str(refused.value)


def test_a_state_dir_under_a_home_that_does_not_exist_is_refused_in_words(capsys):
    """`--state-dir ~nobody_here/st` (no such user) was taken, and `serve` then died with pathlib's
    RuntimeError "Could not determine home directory." and a traceback."""
    with pytest.raises(SystemExit):
        parse(["--state-dir", "~npu_worker_no_such_user/st"])
    assert "no home directory for ~npu_worker_no_such_user" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="NPU_WORKER_STATE_DIR: .*no home directory"):
        load_settings(parse([]), environ={"NPU_WORKER_STATE_DIR": "~npu_worker_no_such_user/st"})
    assert (
        load_settings(parse(["--state-dir", "~/st"]), environ={}).state_dir == "~/st"
    )  # expanded where used
