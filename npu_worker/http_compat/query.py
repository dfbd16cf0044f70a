"""The one reader of a request's query parameters: a parameter given twice is refused.

aiohttp's `request.query.get` takes the first of `?after=1&after=2` and drops the rest without a word,
so a caller (or a proxy that appends its own copy) got an answer to a question it did not mean to ask.
"""

from __future__ import annotations

from aiohttp import web

from ..protocol import BadRequest


def query_value(request: web.Request, name: str) -> str | None:
    """The value of query parameter `name`, None when absent; BadRequest naming it when given twice."""
    values = request.query.getall(name, [])
    if len(values) > 1:
        raise BadRequest(f"the query parameter {name} is given {len(values)} times; give it once")
    return values[0] if values else None
