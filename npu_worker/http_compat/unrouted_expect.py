"""`Expect: 100-continue` on a path no route serves, or with a method its route does not take: the
refusal comes instead of `100 Continue`.

aiohttp asks the matched route whether the caller may send its body before any middleware runs; a 404
or 405 "route" (aiohttp's MatchInfoError) said yes to every caller, so a client sent a whole body only
to be told the path or method was wrong. Here its answer is no `100`: the request goes on to
error_middleware (the access rules, then the 404 or 405 in the shape of its path), and the
connection is closed after it where a body was declared, since it was never sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.abc import AbstractMatchInfo
from aiohttp.web_urldispatcher import MatchInfoError

from .errors import CLOSE_AFTER_KEY


async def _no_continue(request: web.Request) -> None:
    """No `100 Continue`: a body the caller declared is never asked for, so the connection ends with the
    answer (one with no body keeps its connection)."""
    if request.body_exists:
        request[CLOSE_AFTER_KEY] = True


class _Unrouted(MatchInfoError):
    """A 404 or 405 match whose Expect handler says no `100 Continue`."""

    __slots__ = ()

    @property
    def expect_handler(self) -> Callable[[web.Request], Awaitable[None]]:
        return _no_continue


def refuse_continue_unrouted(router: web.UrlDispatcher) -> None:
    """Make `router`'s 404 and 405 matches refuse `100 Continue` (aiohttp has no public hook for the
    Expect handler of a request no route takes; the router is the app's own)."""
    resolve = router.resolve

    async def resolved(request: web.Request) -> AbstractMatchInfo:
        match = await resolve(request)
        if isinstance(match, MatchInfoError):
            return _Unrouted(match.http_exception)
        return match

    router.resolve = resolved  # type: ignore[method-assign,assignment]
