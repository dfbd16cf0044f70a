"""The player's files under RFC 9110's range rules: `Range: bytes=-0` asks for no bytes, 416 (it was the
whole file as 206); an `If-Range` that is neither a date nor a strong tag of the file answers the whole
file, 200 (it was the range, 206, whatever the validator said)."""

from __future__ import annotations

import pytest


async def whole(client) -> tuple[bytes, str]:
    response = await client.get("/")
    assert response.status == 200
    return await response.read(), response.headers["ETag"]


@pytest.mark.parametrize("asked", ["bytes=-0", "bytes=-000", "BYTES=-0"])
async def test_a_suffix_of_no_bytes_is_not_satisfiable(worker, asked):
    client = await worker()
    body, _ = await whole(client)
    response = await client.get("/", headers={"Range": asked})
    assert response.status == 416
    assert response.headers["Content-Range"] == f"bytes */{len(body)}"
    assert response.headers["X-Frame-Options"] == "DENY" and await response.read() == b""


async def test_a_suffix_of_some_bytes_is_their_range(worker):
    client = await worker()
    body, _ = await whole(client)
    response = await client.get("/", headers={"Range": "bytes=-5"})
    assert response.status == 206 and await response.read() == body[-5:]


@pytest.mark.parametrize(
    ("if_range", "status"),
    [
        ("{etag}", 206),  # the file's own strong tag: the range
        ('"another"', 200),
        ("W/{etag}", 200),  # a weak tag never lets a range through (RFC 9110 §13.1.5)
        ("not a date nor a tag", 200),
        ("{modified}", 206),  # its Last-Modified, exactly (§13.1.5)
        ("Fri, 01 Jan 2100 00:00:00 GMT", 200),  # a later date is not the file's (aiohttp served the range)
        ("Thu, 01 Jan 1970 00:00:00 GMT", 200),
    ],
)
async def test_if_range_serves_the_range_only_when_it_names_this_file(worker, if_range, status):
    client = await worker()
    body, etag = await whole(client)
    modified = (await client.head("/")).headers["Last-Modified"]
    headers = {"Range": "bytes=0-9", "If-Range": if_range.format(etag=etag, modified=modified)}
    response = await client.get("/", headers=headers)
    assert response.status == status
    assert await response.read() == (body[:10] if status == 206 else body)
    assert response.headers["Cache-Control"] == "no-cache"


@pytest.mark.parametrize(("asked", "status"), [("items=0-9", 200), (" Bytes = 0-9", 416), ("BYTES=0-9", 206)])
async def test_a_range_in_another_unit_is_ignored(worker, asked, status):
    """RFC 9110 §14.2: a unit the server does not know is ignored, the whole file (aiohttp: 416)."""
    client = await worker()
    body, _ = await whole(client)
    response = await client.get("/", headers={"Range": asked})
    assert response.status == status
    assert await response.read() == {200: body, 206: body[:10], 416: b""}[status]


async def test_other_conditions_still_hold_when_the_range_is_dropped(worker):
    client = await worker()
    _, etag = await whole(client)
    headers = {"Range": "bytes=0-9", "If-Range": '"another"', "If-None-Match": etag}
    response = await client.get("/", headers=headers)
    assert response.status == 304


@pytest.mark.parametrize("asked", ["bytes=0-1,3-4", "bytes=0-1, 3-4", "bytes=-5,0-0", "bytes=0-0,,2-3"])
async def test_several_ranges_are_ignored_for_the_whole_file(worker, asked):
    """RFC 9110 §14.2 lets a server ignore a request for several ranges: it answers the whole file, 200
    (aiohttp answered 416, which read as a file without those bytes)."""
    client = await worker()
    body, _ = await whole(client)
    response = await client.get("/", headers={"Range": asked})
    assert response.status == 200 and "Content-Range" not in response.headers
    assert await response.read() == body


@pytest.mark.parametrize("asked", ["bytes=0-1,", "bytes=,0-1", "bytes=0-1, ", "bytes=0-1,,"])
async def test_one_range_among_empty_list_elements_is_that_range(worker, asked):
    """Empty list elements are none (RFC 9110 §5.6.1): `bytes=0-1,` asks for bytes 0-1, as the count of
    several ranges already took it; it was 416, as if the file had no such bytes."""
    client = await worker()
    body, _ = await whole(client)
    response = await client.get("/", headers={"Range": asked})
    assert (response.status, response.headers.get("Content-Range")) == (206, f"bytes 0-1/{len(body)}")
    assert await response.read() == body[:2]
    nothing = await client.get("/", headers={"Range": asked.replace("0-1", "-0")})
    assert (nothing.status, nothing.headers.get("Content-Range")) == (416, f"bytes */{len(body)}")


@pytest.mark.parametrize("asked", ["bytes=999999999-", "bytes=9-3", "bytes=x", "bytes=-0"])
async def test_a_416_is_shaped_as_a_sections(worker, asked):
    """A range of no bytes: aiohttp's 416 was chunked, `Content-Type: application/octet-stream` over no
    bytes and without `Accept-Ranges`; now every 416 of the player's files is a section's wav's: no body
    (`Content-Length: 0`), no `Content-Type`, `Accept-Ranges` and `Content-Range`."""
    client = await worker()
    body, _ = await whole(client)
    response = await client.get("/", headers={"Range": asked})
    assert response.status == 416 and await response.read() == b""
    assert response.headers["Content-Range"] == f"bytes */{len(body)}"
    assert response.headers["Content-Length"] == "0" and "Transfer-Encoding" not in response.headers
    assert "Content-Type" not in response.headers and response.headers["Accept-Ranges"] == "bytes"
    assert response.headers["X-Frame-Options"] == "DENY"  # (the page's own headers kept)


@pytest.mark.parametrize("asked", ["bytes=999999999-", "bytes=-0", "bytes=x"])
async def test_a_precondition_comes_before_a_416(worker, asked):
    """RFC 9110 §13.2.2: `If-None-Match` naming the file is its 304 even with a range of no bytes
    (`bytes=-0` was the 416, before the precondition was looked at)."""
    client = await worker()
    _, etag = await whole(client)
    response = await client.get("/", headers={"Range": asked, "If-None-Match": etag})
    assert response.status == 304


@pytest.mark.parametrize(
    "precondition",
    [
        {"If-None-Match": '"another"'},
        {"If-Match": "{etag}"},
        {"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"},
    ],
)
@pytest.mark.parametrize("asked", ["bytes=999999999-", "bytes=-0", ""])
async def test_a_416_after_a_precondition_that_holds_is_shaped_as_a_sections(worker, precondition, asked):
    """A precondition that holds, then a range of no bytes (or an empty `Range`, which does not parse):
    it was aiohttp's 416 again (chunked, a `Content-Type` over no bytes, no `Accept-Ranges`), as was an
    empty `Range` with no precondition; now the worker's, as docs/protocol.md says."""
    client = await worker()
    body, etag = await whole(client)
    headers = {name: value.format(etag=etag) for name, value in precondition.items()}
    response = await client.get("/", headers={"Range": asked, **headers})
    assert response.status == 416 and await response.read() == b""
    assert response.headers["Content-Range"] == f"bytes */{len(body)}"
    assert response.headers["Content-Length"] == "0" and "Transfer-Encoding" not in response.headers
    assert "Content-Type" not in response.headers and response.headers["Accept-Ranges"] == "bytes"
    assert response.headers["X-Frame-Options"] == "DENY"


async def test_an_empty_range_alone_is_the_workers_416(worker):
    client = await worker()
    body, _ = await whole(client)
    response = await client.get("/", headers={"Range": ""})
    assert (response.status, response.headers["Content-Range"]) == (416, f"bytes */{len(body)}")
    assert "Content-Type" not in response.headers and response.headers["Accept-Ranges"] == "bytes"


@pytest.mark.parametrize("second", ['"another"', "{etag}"])
async def test_if_range_given_twice_is_the_whole_file_as_range_twice_is(worker, second):
    """`If-Range` is no list (RFC 9110 §13.1.5): two name no one file, so the whole file, 200, as for
    two `Range` fields; the first was taken (the file's own tag then `"another"` served the range)."""
    client = await worker()
    body, etag = await whole(client)
    headers = [("Range", "bytes=0-9"), ("If-Range", etag), ("If-Range", second.format(etag=etag))]
    response = await client.get("/", headers=headers)
    assert response.status == 200 and "Content-Range" not in response.headers
    assert await response.read() == body
