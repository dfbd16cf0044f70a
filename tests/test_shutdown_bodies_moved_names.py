"""`shutdown_bodies` reads three of aiohttp's private slots (no public API says whether a connection is
upgraded, waits for its next request or holds one queued, aiohttp 3.14). An aiohttp that has moved one
must leave the connection closed as aiohttp closes it: the shutdown's `pre_shutdown` raised an
AttributeError, the connections after it left unclosed. Each name is taken off a real handler here as
a later aiohttp would not have it."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from npu_worker.shutdown_bodies import finish_bodies_at_shutdown, waiting_for_a_request


async def answer(request: web.BaseRequest) -> web.StreamResponse:
    return web.Response()


def waiting_handler(server: web.Server) -> web.RequestHandler:
    """A real handler as aiohttp leaves it between two requests of a kept-alive connection."""
    handler = server()
    handler._waiter = asyncio.get_running_loop().create_future()
    return handler


async def test_while_aiohttp_has_its_names_a_waiting_or_upgraded_connection_is_left_reading():
    """(So the checks below can fail: the fallback is not the only answer.)"""
    server = web.Server(answer)
    handler, socket = waiting_handler(server), server()
    assert waiting_for_a_request(handler)
    socket._upgraded = True
    server.connection_made(socket, None)  # type: ignore[arg-type]
    finish_bodies_at_shutdown(server)
    server.pre_shutdown()
    assert socket._close is False


@pytest.mark.parametrize("name", ["_waiter", "_messages"])
async def test_a_moved_name_leaves_a_waiting_connection_to_aiohttps_close(name):
    handler = waiting_handler(web.Server(answer))
    delattr(handler, name)
    assert waiting_for_a_request(handler) is False


async def test_a_moved_upgraded_flag_leaves_the_connection_to_aiohttps_close_and_the_rest_too():
    server = web.Server(answer)
    moved, other = server(), server()
    delattr(moved, "_upgraded")
    for handler in (moved, other):
        server.connection_made(handler, None)  # type: ignore[arg-type]
    finish_bodies_at_shutdown(server)
    server.pre_shutdown()
    assert (moved._close, other._close) == (True, True)
