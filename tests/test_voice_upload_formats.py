"""What a voice upload keeps of each sample format: 16-bit mono bit for bit, every other format at its
level, and the headers and codecs libsndfile reads (a wrong block align, GSM 6.10) read as it reads them."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
import soundfile

from npu_worker.protocol import InvalidAudio
from npu_worker.voice_upload import UploadLimits, decode_upload
from npu_worker.voices import VoiceLibrary

pytestmark = pytest.mark.allow_blocking  # plain filesystem calls, no event loop

LIMITS = UploadLimits(max_bytes=1 << 22, max_seconds=30.0)
RATE = 16_000
TONE = 0.4 * np.sin(np.arange(RATE) * (2 * np.pi * 220 / RATE))


def encoded(samples: np.ndarray, subtype: str, audio_format: str = "WAV", rate: int = RATE) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format=audio_format, subtype=subtype)
    return buffer.getvalue()


def stored(tmp_path, data: bytes) -> np.ndarray:
    """The int16 samples of the wav the library stores for an upload of `data`."""
    voice = VoiceLibrary(tmp_path / "voices").add("voice", data, "안녕하세요", LIMITS)
    with soundfile.SoundFile(voice.wav_path) as wav:
        assert (wav.subtype, wav.channels) == ("PCM_16", 1)
        return wav.read(dtype="int16")


def test_a_16_bit_mono_upload_is_stored_bit_for_bit(tmp_path):
    """Read through libsndfile's float (÷32768) and written ×32767, 32767 came back 32766 and −32768
    came back −32767: no 16-bit voice was stored as sent."""
    pcm = np.concatenate([[-32768, 32767, -1, 1, 0], np.rint(TONE * 32767)]).astype(np.int16)
    for audio_format in ("WAV", "FLAC"):
        kept = stored(tmp_path / audio_format, encoded(pcm, "PCM_16", audio_format))
        assert np.array_equal(kept, pcm), audio_format


@pytest.mark.parametrize(
    ("subtype", "channels", "lsb"),
    [("PCM_U8", 1, 256), ("PCM_24", 1, 1), ("PCM_32", 1, 1), ("FLOAT", 1, 1), ("PCM_16", 2, 1)],
)
def test_every_other_sample_format_is_stored_at_its_level(tmp_path, subtype, channels, lsb):
    samples = np.tile(TONE[:, None], (1, channels))
    kept = stored(tmp_path, encoded(samples, subtype)).astype(np.int32)
    assert np.abs(kept - np.rint(TONE * 32767)).max() <= lsb


def wav(pcm: bytes, *, bits: int, block: int, byte_rate: int, channels: int = 1) -> bytes:
    """A RIFF/WAVE file of `pcm` whose header says what it is told to, true or not."""
    fmt = struct.pack("<HHIIHH", 1, channels, RATE, byte_rate, block, bits)
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm
    return b"RIFF" + struct.pack("<I", len(body)) + body


def test_a_16_bit_mono_header_whose_block_align_alone_is_wrong_is_read_as_libsndfile_reads_it():
    """Block align 4 where its byte rate (2 a frame) says packed 16-bit mono: libsndfile reads it so,
    the upload was refused as 'frames of 4 bytes'."""
    pcm = np.rint(TONE * 32767).astype("<i2")
    samples, rate = decode_upload(wav(pcm.tobytes(), bits=16, block=4, byte_rate=2 * RATE), LIMITS)
    assert rate == RATE and np.array_equal(np.rint(samples * 32767), pcm)


def test_a_16_bit_mono_header_whose_frames_really_are_4_bytes_is_refused_saying_what_to_send():
    """Byte rate and block align both say 4-byte frames: 16-bit samples padded to 32 bits, or two
    channels called one; libsndfile reads either as twice the frames, so it is refused by name."""
    pcm = np.zeros((RATE, 2), "<i2")
    pcm[:, 0] = np.rint(TONE * 32767)
    with pytest.raises(InvalidAudio, match=r"frames of 4 bytes.*send a WAV whose block align is 2"):
        decode_upload(wav(pcm.tobytes(), bits=16, block=4, byte_rate=4 * RATE), LIMITS)


def test_a_gsm_610_wav_is_decoded_not_refused_as_unseekable(tmp_path):
    """libsndfile decodes GSM 6.10 (telephone audio) but cannot seek in it: the upload was refused as
    'Seek attempted on unseekable file type.', a libsndfile fault for a file it reads."""
    telephone = 0.4 * np.sin(np.arange(2 * 8000) * (2 * np.pi * 220 / 8000))
    samples, rate = decode_upload(encoded(telephone, "GSM610", rate=8000), LIMITS)
    assert rate == 8000 and samples.size == telephone.size
    assert 0.3 < np.abs(samples).max() < 0.6  # a lossy codec: its level, not its samples
    assert stored(tmp_path, encoded(telephone, "GSM610", rate=8000)).size == telephone.size


@pytest.mark.parametrize(
    ("audio_format", "subtype"),
    [
        ("WAV", "ULAW"),
        ("WAV", "ALAW"),
        ("WAV", "IMA_ADPCM"),
        ("WAV", "MS_ADPCM"),
        ("W64", "GSM610"),
        ("AIFF", "GSM610"),
        ("OGG", "VORBIS"),
        ("OGG", "OPUS"),
        ("MP3", "MPEG_LAYER_III"),
    ],
)
def test_each_codec_libsndfile_decodes_is_a_voice_at_its_level(tmp_path, audio_format, subtype):
    """(GSM 6.10 in W64 or AIFF was refused as unseekable, as in WAV.)"""
    telephone = 0.4 * np.sin(np.arange(2 * 8000) * (2 * np.pi * 220 / 8000))
    kept = stored(tmp_path, encoded(telephone, subtype, audio_format, rate=8000)) / 32767
    assert abs(kept.size - telephone.size) < 200 and 0.3 < np.abs(kept).max() < 0.6


def seven_bit(byte_values: np.ndarray) -> bytes:
    return wav(byte_values.astype(np.uint8).tobytes(), bits=7, block=1, byte_rate=RATE)


def test_7_bit_samples_in_a_byte_s_high_bits_are_read_at_their_level_as_libsndfile_reads_them():
    """A WAV keeps narrow samples in a byte's high bits, so libsndfile (and players) read 7-bit ones
    as 8-bit: their level as written."""
    high = (np.rint(TONE * 63).astype(np.int16) + 64) << 1  # 7-bit offset binary, shifted up
    samples, _rate = decode_upload(seven_bit(high), LIMITS)
    assert np.abs(samples - TONE).max() < 2 / 128 and abs(samples.mean()) < 0.01


def test_7_bit_samples_written_right_aligned_are_refused_by_name_not_read_at_half_level():
    """0-127 in each byte was read as 8-bit: the voice stored at half level, 0.5 of full scale below 0."""
    with pytest.raises(InvalidAudio, match="7-bit samples.*use the low 1 bit.*send 8-bit or 16-bit PCM"):
        decode_upload(seven_bit(np.rint(TONE * 63) + 64), LIMITS)


def other_form(riff: bytes, form: bytes) -> bytes:
    """The same WAV as RF64 (its data size in a `ds64` chunk), RIFX (every number big-endian) or Wave64
    (chunks named by GUIDs, 64-bit sizes counting their 24-byte heads)."""
    fmt, pcm = riff[20:36], riff[44:]
    if form == b"W64":
        tail = bytes.fromhex("f3acd3118cd100c04f8edb8a")
        chunks = (
            b"fmt " + tail + struct.pack("<Q", 40) + fmt + b"data" + tail + struct.pack("<Q", 24 + len(pcm))
        )
        body = b"wave" + tail + chunks + pcm
        return b"riff" + bytes.fromhex("2e91cf11a5d628db04c10000") + struct.pack("<Q", 24 + len(body)) + body
    if form == b"RIFX":
        fmt = struct.pack(">HHIIHH", *struct.unpack("<HHIIHH", fmt))
        if struct.unpack(">H", fmt[14:])[0] == 16:
            pcm = np.frombuffer(pcm, "<i2").astype(">i2").tobytes()
        body = b"WAVEfmt " + struct.pack(">I", 16) + fmt + b"data" + struct.pack(">I", len(pcm)) + pcm
        return b"RIFX" + struct.pack(">I", len(body)) + body
    ds64 = b"ds64" + struct.pack("<IQQQI", 28, 0, len(pcm), len(pcm), 0)
    body = b"WAVE" + ds64 + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + b"\xff" * 4 + pcm
    return b"RF64" + b"\xff" * 4 + body


@pytest.mark.parametrize("form", [b"RF64", b"RIFX", b"W64"])
def test_an_rf64_rifx_or_wave64_wav_is_checked_as_a_riff_one_is(form):
    """The header checks read RIFF only: right-aligned 7-bit samples as RF64, RIFX or Wave64 were
    stored at half level about −0.5, the fault refused by name in a RIFF WAV."""
    with pytest.raises(InvalidAudio, match="7-bit samples.*use the low 1 bit"):
        decode_upload(other_form(seven_bit(np.rint(TONE * 63) + 64), form), LIMITS)
    high = (np.rint(TONE * 63).astype(np.int16) + 64) << 1
    samples, _rate = decode_upload(other_form(seven_bit(high), form), LIMITS)
    assert np.abs(samples - TONE).max() < 2 / 128
    pcm = np.rint(TONE * 32767).astype("<i2")
    riff = wav(pcm.tobytes(), bits=16, block=2, byte_rate=2 * RATE)
    assert np.array_equal(np.rint(decode_upload(other_form(riff, form), LIMITS)[0] * 32767), pcm)


def test_7_bit_samples_in_no_channels_are_refused_for_the_channels_not_the_bits():
    """A header of 0 channels and 0-byte frames passed as 1-byte frames of 7-bit samples: refused for
    right-aligned samples, though no byte of it could be read; now libsndfile's "Channel count is zero."."""
    data = wav(bytes([0x81]) * RATE, bits=7, block=0, byte_rate=RATE, channels=0)
    with pytest.raises(InvalidAudio, match=r"\(Channel count is zero\.\)$"):
        decode_upload(data, LIMITS)


async def test_over_http_gsm_610_is_a_voice_and_right_aligned_7_bit_a_named_400(worker):
    """What a caller of POST /v1/audio/voices saw: a 400 'Seek attempted on unseekable file type.' for
    telephone audio libsndfile decodes, a 201 for 7-bit samples stored at half level about −0.5."""
    from tests.test_openai_voices import upload

    client = await worker()
    telephone = 0.4 * np.sin(np.arange(2 * 8000) * (2 * np.pi * 220 / 8000))
    response = await upload(client, "telephone", encoded(telephone, "GSM610", rate=8000))
    assert response.status == 201, await response.text()
    assert (await response.json())["sample_rate"] == 8000
    response = await upload(client, "seven", seven_bit(np.rint(TONE * 63) + 64))
    error = (await response.json())["error"]
    assert (response.status, error["code"]) == (400, "InvalidAudio")
    assert "use the low 1 bit(s) (written right-aligned?)" in error["message"]


def test_an_mp3_cut_short_of_its_stated_length_is_read_as_far_as_it_goes(tmp_path):
    """An MP3 whose Xing header says 4 s, cut to half: the frames it did not hold were the decode
    buffer's uninitialised memory (values like -9e19, clipped to full scale) stored as the voice; now
    only what it decodes to, at its level."""
    tone = 0.4 * np.sin(np.arange(4 * RATE) * (2 * np.pi * 220 / RATE))
    data = encoded(tone, "MPEG_LAYER_III", "MP3")
    cut = data[: len(data) // 2]
    with soundfile.SoundFile(io.BytesIO(cut)) as sound:
        assert sound.frames >= tone.size  # the header still says the whole
        decoded = len(sound.read(dtype="float32"))
    samples, _rate = decode_upload(cut, LIMITS)
    assert samples.size == decoded < tone.size and np.abs(samples).max() < 0.6
    kept = stored(tmp_path, cut)
    assert kept.size == decoded and np.abs(kept).max() < 0.6 * 32767


def test_more_samples_than_8_channels_at_192_khz_hold_are_refused_before_they_are_decoded():
    """Channels × frames was bounded only by the bytes, which a codec's are not: 19 KB of Ogg Vorbis
    (64 channels, 48 kHz, 29 s) took 2.6 s of CPU to decode, 255 channels allowed. Shown here with 8-bit
    PCM under a 0.55 s limit: 9 channels at 192 kHz for 0.5 s, one channel past FLAC's 8."""
    limits = UploadLimits(max_bytes=1 << 22, max_seconds=0.55)
    rate, frames = 192_000, 96_000
    tone = np.sin(np.arange(frames) * (2 * np.pi * 220 / rate))[:, None]
    with pytest.raises(InvalidAudio, match=r"9 channels of 96000 frames.*limit is 844800.*send mono"):
        decode_upload(encoded(np.tile(0.4 * tone, (1, 9)), "PCM_U8", rate=rate), limits)
    samples, _rate = decode_upload(encoded(np.tile(0.4 * tone, (1, 8)), "PCM_U8", rate=rate), limits)
    assert samples.size == frames // 4  # (stored at 48 kHz)
