"""International `--allowed-origins` names that browsers reach but IDNA 2008's strict checks refuse
(`idna.encode`): a symbol (`☃.net`, which a browser opens as `xn--n3h.net`), `_` or `--` beside
non-ASCII letters. Written in Unicode, such an entry failed the start as no `http(s)://host`; browsers
map names by the URL Standard (UTS #46 without its hyphen and STD3 rules), and so does the worker now,
on a real socket."""

from __future__ import annotations

import pytest

from npu_worker.access import normalize_origin
from npu_worker.config_values import origins
from tests.raw_http import raw_exchange, refusal_of, status_lines
from tests.timing import seconds

SNOWMAN = "http://☃.net:8080"
SNOWMAN_HOST = b"xn--n3h.net:8080"


@pytest.mark.parametrize(
    ("written", "sent"),
    [
        ("http://☃.net", "http://xn--n3h.net"),
        ("http://i❤.ws", "http://xn--i-7iq.ws"),
        ("http://büro_1.example", "http://xn--bro_1-kva.example"),
        ("http://ab--cü.example", "http://xn--ab--c-ova.example"),
    ],
)
def test_a_name_a_browser_reaches_is_one_origin_in_either_form(written, sent):
    assert normalize_origin(written) == normalize_origin(sent) is not None
    assert origins(written) == (written,)


@pytest.mark.parametrize(
    "written",
    [
        "http://\u0301a.example",  # a label that begins with a combining mark
        "http://a\u200db.example",  # a joiner out of its context
        "http://aעב.example",  # left-to-right and right-to-left in one label
        "http://ü\u00a0x.example",  # a space, once mapped
        "http://" + "ü" * 254,  # longer than a DNS name
    ],
)
def test_a_name_no_browser_reaches_is_still_refused_as_a_setting(written):
    assert normalize_origin(written) is None
    with pytest.raises(ValueError, match="origins are http"):
        origins(written)


async def test_a_page_on_a_symbol_name_is_let_in_by_its_unicode_entry(served):
    listener = await served(allowed_origins=(SNOWMAN,))
    request = (
        b"GET /jobs HTTP/1.1\r\nHost: " + SNOWMAN_HOST + b"\r\nOrigin: http://" + SNOWMAN_HOST + b"\r\n"
        b"Connection: close\r\n\r\n"
    )
    answer = await raw_exchange(listener.port, request, seconds(5))
    assert status_lines(answer) == [b"200"], answer
    other = request.replace(b"Origin: http://xn--n3h.net", b"Origin: http://xn--n4h.net")
    answer = await raw_exchange(listener.port, other, seconds(5))
    assert refusal_of(answer)[:2] == (403, "OriginNotAllowed"), answer
