"""Who may open /ws: origin and token rules, decided before the upgrade (pure functions)."""

from __future__ import annotations

import pytest

from npu_worker.access import (
    check_origin_and_host,
    check_token,
    host_allowed,
    loopback_bind,
    origin_allowed,
    presented_tokens,
    token_valid,
)
from npu_worker.protocol import OriginNotAllowed, Unauthorized


@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:7768",
        "http://localhost",
        "https://localhost:8443",
        "http://[::1]:5173",
        "HTTP://LocalHost:1",
    ],
)
def test_loopback_origins_are_allowed_by_default(origin: str) -> None:
    assert origin_allowed(origin, ())


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://127.0.0.1.evil.example",
        "http://localhost.evil.example:7768",
        "null",
        "file://",
        "ws://127.0.0.1:7768",
        "http://127.0.0.1:99999",
        "",
    ],
)
def test_other_origins_are_refused_by_default(origin: str) -> None:
    assert not origin_allowed(origin, ())


def test_a_request_without_origin_is_not_a_browser_and_is_allowed() -> None:
    assert origin_allowed(None, ())
    assert origin_allowed(None, ("https://app.example",))


def test_a_configured_list_replaces_the_loopback_default() -> None:
    allowed = ("https://app.example", "http://10.0.0.5:7768/")
    assert origin_allowed("https://app.example", allowed)
    assert origin_allowed("https://APP.example:443", allowed)
    assert origin_allowed("http://10.0.0.5:7768", allowed)
    assert not origin_allowed("http://10.0.0.5:7769", allowed)
    assert not origin_allowed("http://127.0.0.1:7768", allowed)


def test_star_allows_every_origin() -> None:
    assert origin_allowed("http://anything.example", ("*",))


def test_token_comes_from_a_bearer_header_or_the_query() -> None:
    assert presented_tokens("Bearer s3cret", None) == ("s3cret",)
    assert presented_tokens("bearer  s3cret ", None) == ("s3cret",)
    assert presented_tokens(None, "q") == ("q",)
    assert presented_tokens("Basic abc", "q") == ("q",)
    assert presented_tokens(None, None) == ()


def test_token_check_passes_everything_when_no_token_is_configured() -> None:
    assert token_valid(None, None)
    assert token_valid("", "whatever")


def test_token_check_needs_the_exact_token() -> None:
    assert token_valid("s3cret", "s3cret")
    assert not token_valid("s3cret", "s3cre")
    assert not token_valid("s3cret", None)


def test_the_origin_and_token_checks_name_the_refusal() -> None:
    with pytest.raises(OriginNotAllowed):
        check_origin_and_host((), "http://evil.example", None, loopback=False, token_configured=False)
    check_origin_and_host((), "http://localhost:1", None, loopback=False, token_configured=True)
    with pytest.raises(Unauthorized):
        check_token("t", None, None)
    check_origin_and_host((), None, None, loopback=False, token_configured=True)
    check_token("t", "Bearer t", None)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:7768",
        "127.0.0.1",
        "[::1]:7768",
        "localhost:7768",
        "LOCALHOST",
        "player.localhost:1",
        "10.0.0.5:7768",
    ],
)
def test_a_loopback_worker_answers_its_addresses_and_localhost(host: str) -> None:
    assert host_allowed(host, (), token_configured=False, loopback=True)


@pytest.mark.parametrize(
    "host",
    ["rebound.example:7768", "localhost.rebound.example", "127.0.0.1.nip.io:7768", "", "a:b:c", "[zz]:1"],
)
def test_a_loopback_worker_without_a_token_refuses_other_names(host: str) -> None:
    assert not host_allowed(host, (), token_configured=False, loopback=True)
    with pytest.raises(OriginNotAllowed, match="not a name of this worker"):
        check_origin_and_host((), None, host, loopback=True, token_configured=False)


def test_a_name_is_allowed_by_an_allowed_origin_a_token_or_a_wider_bind() -> None:
    host = "tts.example:7768"
    assert host_allowed(host, ("https://tts.example",), token_configured=False, loopback=True)
    assert not host_allowed(host, ("https://other.example",), token_configured=False, loopback=True)
    assert host_allowed(host, ("*",), token_configured=False, loopback=True)
    assert host_allowed(host, (), token_configured=True, loopback=True)
    assert host_allowed(host, (), token_configured=False, loopback=False)
    assert host_allowed(None, (), token_configured=False, loopback=True)  # HTTP/1.0: not a browser


@pytest.mark.parametrize(
    ("bind", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.9", False),
        ("npu-box", False),
    ],
)
def test_which_binds_are_loopback(bind: str, loopback: bool) -> None:
    assert loopback_bind(bind) is loopback
