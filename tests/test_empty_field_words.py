"""An empty (or blank) string where a field wants a value was refused in msgspec's words
(`Expected `str` of length >= 1 - at `$.output_path``), which a caller had to translate, and a blank
`ref_wav` went on to the voice lookup and came back as `RefWavNotAllowed`, where the same mistake in
OpenAI's `ref_audio` is a `BadRequest`. Each now says the field is empty (or blank), what to send
instead, and where; the same mistake is the same error on every route."""

from __future__ import annotations

import pytest

from tests.test_ws_support import connect


@pytest.mark.parametrize(
    ("route", "body", "message"),
    [
        (
            "/synth",
            {"text": "a.", "output_path": ""},
            "output_path is empty: send an absolute path under the allowed roots - at `$.output_path`",
        ),
        (
            "/synth_batch",
            {"sections": [{"text": "a."}, {"text": "b.", "output_path": ""}]},
            "output_path is empty: leave it out or send null for the default - at `$.sections[1].output_path`",
        ),
        (
            "/synth_batch",
            {"sections": [{"text": "a."}], "ref_wav": "  "},
            "ref_wav is blank: leave it out or send null for the default - at `$.ref_wav`",
        ),
        (  # was `OutputPathNotAllowed: output_path must be an absolute path: '  '`
            "/synth",
            {"text": "a.", "output_path": "  "},
            "output_path is blank: send an absolute path under the allowed roots - at `$.output_path`",
        ),
        (
            "/synth_batch",
            {"sections": [{"text": "a.", "output_path": " \t"}]},
            "output_path is blank: leave it out or send null for the default - at `$.sections[0].output_path`",
        ),
        # lang was told `lang is blank` for "": "" is empty, as ref_wav's is
        *(
            (
                "/synth",
                {"text": "a.", "output_path": "OUT", field: value},
                f"{field} is {word}: leave it out or send null for the default - at `$.{field}`",
            )
            for field in ("ref_wav", "lang")
            for value, word in (("", "empty"), (" \t", "blank"), ("  ", "blank"))
        ),
    ],
)
async def test_an_empty_field_is_told_in_the_callers_words(worker, tmp_path, route, body, message):
    client = await worker()
    if body.get("output_path") == "OUT":
        body = {**body, "output_path": str(tmp_path / "a.wav")}
    response = await client.post(route, json=body)
    assert response.status == 400
    assert (await response.json())["error"] == f"BadRequest: {message}"
    assert not (tmp_path / "a.wav").exists()


async def test_a_blank_ref_wav_on_the_socket_is_the_same_bad_request(worker):
    client = await worker()
    ws = await connect(client)
    await ws.send_text('{"type": "synth", "text": "a", "ref_wav": "   "}')
    error = await ws.receive()
    assert error["event"] == "error"
    assert (
        error["error"]
        == "BadRequest: ref_wav is blank: leave it out or send null for the default - at `$.ref_wav`"
    )


@pytest.mark.parametrize("blank", ["", "   "])
async def test_a_blank_ref_wav_and_a_blank_ref_audio_are_one_error(worker, tmp_path, blank):
    client = await worker()
    native = await client.post(
        "/synth", json={"text": "a.", "output_path": str(tmp_path / "a.wav"), "ref_wav": blank}
    )
    openai = await client.post("/v1/audio/speech", json={"model": "tts-1", "input": "a.", "ref_audio": blank})
    assert (native.status, openai.status) == (400, 400)
    name = (await native.json())["error"].partition(":")[0]
    assert name == (await openai.json())["error"]["code"] == "BadRequest"


@pytest.mark.parametrize(("value", "word"), [("", "empty"), ("   ", "blank")])
async def test_a_ref_audio_is_told_empty_or_blank_as_ref_wav_is(worker, tmp_path, value, word):
    """A blank `ref_audio` ("   ") was told `ref_audio is empty`, where the same ref_wav is `blank`."""
    client = await worker()
    native = await client.post(
        "/synth", json={"text": "a.", "output_path": str(tmp_path / "a.wav"), "ref_wav": value}
    )
    openai = await client.post("/v1/audio/speech", json={"model": "tts-1", "input": "a.", "ref_audio": value})
    assert f"ref_wav is {word}: leave it out" in (await native.json())["error"]
    said = (await openai.json())["error"]["message"]
    assert said == f"ref_audio is {word}: leave it out or send null for the default voice", said


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (  # /ws writes no file without one: it was told "send null for the default"
            '{"type": "synth", "text": "a", "output_path": ""}',
            "output_path is empty: leave it out or send null to write no file - at `$.output_path`",
        ),
        (
            '{"type": "synth_batch", "sections": [{"text": "a", "output_path": "  "}]}',
            "output_path is blank: leave it out or send null to write no file - at `$.sections[0].output_path`",
        ),
    ],
)
async def test_an_empty_output_path_on_the_socket_is_told_null_writes_no_file(worker, message, said):
    client = await worker()
    ws = await connect(client)
    await ws.send_text(message)
    error = await ws.receive()
    assert (error["event"], error["idx"]) == ("error", None)
    assert error["error"] == f"BadRequest: {said}"
