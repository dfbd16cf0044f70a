"""Error words that quote a caller's byte that was not UTF-8 (aiohttp decodes one as a lone surrogate, in
a header, or in a path with its pure-Python parser) could not be encoded: on whichever surface quoted it
raw, the refusal became a 500. Every WorkerError's words are encodable, the byte written as `\\xff`."""

from __future__ import annotations

import json

from npu_worker.http_compat.errors import error_response
from npu_worker.openai_compat.errors import openai_error_response
from npu_worker.protocol import BadRequest


def test_a_refusal_quoting_a_lone_surrogate_is_still_its_json_body():
    error = BadRequest("no voice a\udcffb\ud800")
    assert json.loads(error_response(error).body)["error"] == "BadRequest: no voice a\\xffb\\ud800"
    assert json.loads(openai_error_response(error).body)["error"]["message"] == "no voice a\\xffb\\ud800"


def test_words_that_encode_are_kept_as_they_are():
    words = "no voice 'é\\x9b' (a\tb)"
    assert BadRequest(words).message == words
