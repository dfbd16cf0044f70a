"""POST /v1/audio/speech/batch: a default reference voice or language that every item taking it would
fail on is one 400 naming the field, as a default `model`, `response_format` or `voice` is; items that
give their own are not refused for it."""

from __future__ import annotations

import base64

from npu_worker import voices
from npu_worker.openai_compat import speech_batch
from tests.openai_support import tone_wav


async def batch(client, body: dict) -> tuple[int, dict]:
    async with client.post("/v1/audio/speech/batch", json=body) as response:
        return response.status, await response.json()


def assert_refusal(status: int, answer: dict, code: str, param: str) -> None:
    assert status == 400, answer
    assert (answer["error"]["code"], answer["error"]["param"]) == (code, param), answer


async def test_a_default_language_the_engine_lacks_is_one_400(worker):
    """It was a 200 whose every item failed with the same UnknownLanguage."""
    client = await worker(None)  # espeak-ng: it knows its languages
    status, answer = await batch(client, {"language": "zz", "items": [{"input": "hi"}, {"input": "yo"}]})
    assert_refusal(status, answer, "UnknownLanguage", "language")


async def test_items_with_their_own_language_or_voice_are_not_refused_for_the_default(worker):
    client = await worker(None)
    items = [{"input": "hi", "language": "en"}, {"input": "hi", "voice": "en-us"}]
    status, answer = await batch(client, {"language": "zz", "items": items})
    assert status == 200 and answer["succeeded"] == 2, answer


async def test_a_default_inline_ref_audio_that_does_not_decode_is_one_400(worker):
    """Each of 64 items decoded the same bad audio again, each its own InvalidAudio; its words said
    "the upload", where the caller had sent no upload but the batch's inline `ref_audio`."""
    client = await worker()
    bad = "data:audio/wav;base64," + base64.b64encode(b"RIFF" + bytes(5000)).decode()
    body = {"ref_audio": bad, "ref_text": "안녕.", "items": [{"input": "첫 번째."}] * 64}
    status, answer = await batch(client, body)
    assert_refusal(status, answer, "InvalidAudio", "ref_audio")
    assert answer["error"]["message"].startswith("the inline ref_audio is not a readable audio file (")


async def test_a_default_ref_audio_path_outside_the_roots_is_one_400(worker):
    client = await worker()
    body = {"ref_audio": "/etc/passwd", "items": [{"input": "첫 번째."}]}
    status, answer = await batch(client, body)
    assert_refusal(status, answer, "RefWavNotAllowed", "ref_audio")


async def test_a_default_inline_ref_audio_that_decodes_speaks_every_item(worker):
    client = await worker()
    audio = "data:audio/wav;base64," + base64.b64encode(tone_wav()).decode()
    items = [{"input": "첫 번째."}, {"input": "두 번째.", "ref_text": "다른 말."}]
    status, answer = await batch(client, {"ref_audio": audio, "ref_text": "안녕.", "items": items})
    assert status == 200 and answer["succeeded"] == 2, answer


async def test_an_item_with_its_own_reference_is_not_refused_for_a_bad_default(worker, tmp_path):
    client = await worker()
    own = tmp_path / "own.wav"
    tone_wav(own)
    (tmp_path / "own.txt").write_text("안녕.", encoding="utf-8")
    items = [{"input": "첫 번째.", "ref_audio": str(own)}]
    status, answer = await batch(client, {"ref_audio": "/etc/passwd", "items": items})
    assert status == 200 and answer["succeeded"] == 1, answer


async def test_an_item_naming_its_own_voice_takes_no_default_reference(worker):
    """The default `ref_audio` won over an item's own `voice`: the item failed with the default's
    RefWavNotAllowed (or, with a default that decodes, spoke in that reference's voice, not its own)."""
    client = await worker()
    items = [
        {"input": "첫 번째.", "voice": "alloy"},
        {"input": "두 번째.", "voice": "alloy", "ref_text": "x"},
    ]
    status, answer = await batch(client, {"ref_audio": "/etc/passwd", "ref_text": "안녕.", "items": items})
    assert status == 200 and answer["succeeded"] == 2, answer
    mixed = [{"input": "첫 번째.", "voice": "alloy"}, {"input": "두 번째."}]
    status, answer = await batch(client, {"ref_audio": "/etc/passwd", "items": mixed})
    assert_refusal(status, answer, "RefWavNotAllowed", "ref_audio")  # the second takes it: one 400


async def test_a_default_inline_ref_audio_items_take_with_their_own_words_is_decoded_once(worker):
    """Items that give a `language` or `ref_text` of their own were not checked once: each decoded the
    same bad audio again (64 items, 64 decodes), each its own InvalidAudio in a 200."""
    client = await worker()
    bad = "data:audio/wav;base64," + base64.b64encode(b"RIFF" + bytes(5000)).decode()
    items = [{"input": "첫 번째.", "language": "ko"}, {"input": "두 번째.", "ref_text": "다른 말."}] * 32
    status, answer = await batch(client, {"ref_audio": bad, "ref_text": "안녕.", "items": items})
    assert_refusal(status, answer, "InvalidAudio", "ref_audio")
    good = "data:audio/wav;base64," + base64.b64encode(tone_wav()).decode()
    status, answer = await batch(client, {"ref_audio": good, "ref_text": "안녕.", "items": items[:2]})
    assert status == 200 and answer["succeeded"] == 2, answer
    own = [{"input": "첫 번째.", "voice": "alloy", "language": "ko"}]  # takes no default reference
    status, answer = await batch(client, {"ref_audio": bad, "ref_text": "안녕.", "items": own})
    assert status == 200 and answer["succeeded"] == 1, answer


async def test_a_default_inline_ref_audio_is_decoded_once_whatever_transcript_each_item_gives(
    worker, monkeypatch
):
    """A valid default audio that items took with a transcript of their own was decoded again by each
    (a voice is stored per audio and transcript): 1 + 4 decodes for 4 items. The real decoder runs,
    counted (the item without a transcript of its own speaks as the defaults: that path too)."""
    decoded = []

    def counted(real):
        def decode(data, *rest):
            decoded.append(len(data))
            return real(data, *rest)

        return decode

    for module in (voices, speech_batch):
        monkeypatch.setattr(module, "upload_wav", counted(module.upload_wav))
    client = await worker()
    audio = "data:audio/wav;base64," + base64.b64encode(tone_wav()).decode()
    items = [{"input": f"{n} 번째.", "ref_text": f"다른 말 {n}."} for n in range(4)] + [{"input": "끝."}]
    status, answer = await batch(client, {"ref_audio": audio, "ref_text": "안녕.", "items": items})
    assert status == 200 and answer["succeeded"] == 5, answer
    assert len(decoded) == 1, decoded
