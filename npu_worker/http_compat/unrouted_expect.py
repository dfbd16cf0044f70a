"""`Expect: 100-continue` on a path no route serves, or with a method its route does not take: the
refusal comes instead of `100 Continue`.

aiohttp asks the matched route whether the caller may send its body before any middleware runs; a 404
or 405 "route" (aiohttp's MatchInfoError) said yes to every caller, so a client sent a whole body only
to be told the path or method was wrong. Here its answer is no `100`: the request goes on to
error_middleware (the access rules, then the 404 or 405 in the shape of its path), and the
connection is closed after it where a body was declared, since it was never sent.

A route that reads no body (any method but POST: `error_middleware` refuses a body there) said
`100 Continue` too, through aiohttp's default handler, to a request that declared one: the caller sent
it, without the token as well, to be told `a GET request takes no body` (or 401). It is told at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.abc import AbstractMatchInfo
from aiohttp.web_urldispatcher import MatchInfoError, UrlMappingMatchInfo

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


class _BodyUnread(UrlMappingMatchInfo):
    """A match of a route that reads no body, for a request that declared one: no `100 Continue`."""

    __slots__ = ()

    @property
    def expect_handler(self) -> Callable[[web.Request], Awaitable[None]]:
        return _no_continue


def refuse_continue_unrouted(router: web.UrlDispatcher) -> None:
    """Make `router`'s 404 and 405 matches, and those of a route that reads no body for a request that
    declared one, refuse `100 Continue` (aiohttp has no public hook for the Expect handler of a request
    no route takes; the router is the app's own)."""
    resolve = router.resolve

    async def resolved(request: web.Request) -> AbstractMatchInfo:
        match = await resolve(request)
        if isinstance(match, MatchInfoError):
            return _Unrouted(match.http_exception)
        if request.method != "POST" and request.body_exists and isinstance(match, UrlMappingMatchInfo):
            unread = _BodyUnread(dict(match), match.route)  # (only POST routes read a body)
            for app in match.apps:
                unread.add_app(app)
            return unread
        return match

    router.resolve = resolved  # type: ignore[method-assign,assignment]
