"""`localhost.` (the trailing dot: the same name written absolute) is `localhost` to a loopback worker,
on a real socket: as a `Host` and as an `Origin`. Browsers answer `localhost.` with the loopback
themselves, as `localhost`, never through DNS, so a page under it is served from this machine, no
rebinding page; it was refused 403 as a stranger. A name that only begins like it is still refused."""

from __future__ import annotations

import aiohttp
import pytest

from npu_worker.access import loopback_bind


async def get_jobs(port: int, headers: dict[str, str]) -> tuple[int, str | None]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}/jobs", headers=headers) as response:
            await response.read()
            return response.status, response.headers.get("Access-Control-Allow-Origin")


@pytest.mark.parametrize("name", ["localhost.", "LOCALHOST.", "app.localhost."])
async def test_a_host_of_localhost_with_its_trailing_dot_is_answered(served, name):
    listener = await served()
    status, _ = await get_jobs(listener.port, {"Host": f"{name}:{listener.port}"})
    assert status == 200


@pytest.mark.parametrize("origin", ["http://localhost.", "http://localhost.:5173", "https://localhost.:8443"])
async def test_an_origin_of_localhost_with_its_trailing_dot_is_a_loopback_origin(served, origin):
    listener = await served()
    status, allowed = await get_jobs(listener.port, {"Origin": origin})
    assert (status, allowed) == (200, origin)


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "localhost..:7768"},
        {"Host": "localhost.evil.example."},
        {"Origin": "http://localhost.evil.example"},
        {"Origin": "http://app.localhost.evil.example."},
    ],
    ids=["two-dots", "host-under-another", "origin-under-another", "origin-under-another-absolute"],
)
async def test_names_that_only_begin_as_localhost_are_still_refused(served, headers):
    listener = await served()
    status, _ = await get_jobs(listener.port, headers)
    assert status == 403


def test_a_bind_to_localhost_with_its_trailing_dot_is_not_taken_for_a_loopback_bind():
    """`--host localhost.` is bound where the resolver answers it, and glibc asks DNS for an absolute
    name, not /etc/hosts: a DNS server may answer it with a LAN address, and a tokenless worker taken for
    a loopback one would listen there without the warning a bind beyond loopback gives (rve67)."""
    assert loopback_bind("localhost") and loopback_bind("LocalHost")
    assert not loopback_bind("localhost.") and not loopback_bind("LocalHost.")
    assert not loopback_bind("localhost..") and not loopback_bind("evil.localhost.")


@pytest.mark.parametrize(
    "origin", ["http://app.localhost", "http://app.localhost:5173", "https://Player.LocalHost.:8443"]
)
async def test_an_origin_under_localhost_is_a_loopback_origin(served, origin):
    """Chromium and Firefox answer `*.localhost` with the loopback themselves, as the `Host` rule takes
    it: a page served there on this machine was refused 403 by the default origin rule."""
    listener = await served()
    status, allowed = await get_jobs(listener.port, {"Origin": origin})
    assert (status, allowed) == (200, origin)
