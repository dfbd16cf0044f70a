"""A WAV header checked against what libsndfile will make of it, before it decodes the file.

libsndfile reads two headers quietly wrong: one whose frame size disagrees with its sample width (7-bit
samples in 2-byte frames read as 8-bit samples, one a byte: the voice twice its length, each frame's
two bytes two samples), and one whose `data` chunk says 0 bytes while samples follow (a writer to a
pipe leaves it so): 0 frames, refused as "0.00 s long" with the audio right there. Each is a
ValueError here, in words that name the header's fault. Pure: bytes in.
"""

from __future__ import annotations

import struct

PCM_TAGS = (1, 0xFFFE)  # WAVE_FORMAT_PCM, WAVE_FORMAT_EXTENSIBLE
MAX_CHUNKS = 64  # walked before `data`: a real header has a few (fmt, fact, LIST, bext)


def check_wav_header(data: bytes) -> None:
    """ValueError for a RIFF/WAVE header libsndfile would read as other audio than it holds; anything
    else (not a WAV, a header cut short) is left to libsndfile to judge."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return
    offset, fmt = 12, None
    for _ in range(MAX_CHUNKS):
        if offset + 8 > len(data):
            return
        chunk, size = data[offset : offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        body = offset + 8
        if chunk == b"fmt " and size >= 16 and body + 16 <= len(data):
            fmt = struct.unpack_from("<HHIIHH", data, body)
            _check_frame_size(*fmt)
        elif chunk == b"data":
            following = len(data) - body
            if size == 0 and following >= 2 and fmt is not None:
                raise ValueError(
                    f"its header says the audio data is 0 bytes long, but {following} bytes follow it "
                    "(written to a pipe?); send a WAV whose header gives its length"
                )
            return
        offset = body + size + (size & 1)  # chunks are padded to an even length
    return


def _check_frame_size(tag: int, channels: int, _rate: int, _byte_rate: int, block: int, bits: int) -> None:
    if tag not in PCM_TAGS or not channels or not bits:
        return
    expected = channels * ((bits + 7) // 8)
    if block != expected:
        raise ValueError(
            f"its header gives {bits}-bit samples in {channels} channel(s), {expected} byte(s) a frame, "
            f"but frames of {block} bytes: it cannot be read as the audio it holds"
        )
