"""A WAV header checked against what libsndfile will make of it, before it decodes the file.

libsndfile reads some headers quietly wrong: one whose frame size disagrees with its sample width (7-bit
samples in 2-byte frames read as 8-bit samples, one a byte: the voice twice its length, each frame's
two bytes two samples), samples short of whole bytes written right-aligned (7-bit in 1-byte frames read at
half level about −0.5 of full scale, 12-bit in 2-byte frames at 1/16 of theirs), and one whose `data` chunk says 0 bytes while samples follow (a writer to a pipe
leaves it so): 0 frames, refused as "0.00 s long" with the audio right there. Each is a ValueError
here, in words that name the header's fault. Pure: bytes in.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

PCM_TAGS = (1, 0xFFFE)  # WAVE_FORMAT_PCM, WAVE_FORMAT_EXTENSIBLE
MAX_CHUNKS = 64  # walked before `data`: a real header has a few (fmt, fact, LIST, bext)
# The WAV's forms libsndfile reads through one fmt-chunk reader, and their byte order: RF64 (a WAV past
# 4 GiB, its sizes in a `ds64` chunk), RIFX (big-endian) and Sony Wave64 (chunks named by GUIDs, 64-bit
# sizes) passed every check below unread.
BYTE_ORDERS = {b"RIFF": "<", b"RF64": "<", b"RIFX": ">"}
RF64_SIZE = 0xFFFFFFFF  # an RF64 chunk size meaning "see ds64"
W64_TAIL = bytes.fromhex("f3acd3118cd100c04f8edb8a")  # a Wave64 chunk's GUID after its 4-letter name
W64_RIFF = b"riff" + bytes.fromhex("2e91cf11a5d628db04c10000")


def check_wav_header(data: bytes) -> None:
    """ValueError for a WAV header (RIFF, RF64, RIFX or Wave64) libsndfile would read as other audio
    than it holds; anything else (not a WAV, a header cut short) is left to libsndfile to judge."""
    order = BYTE_ORDERS.get(data[:4])
    if len(data) >= 12 and order is not None and data[8:12] == b"WAVE":
        chunks = _riff_chunks(data, order)
    elif data[:16] == W64_RIFF and data[24:40] == b"wave" + W64_TAIL:
        order, chunks = "<", _w64_chunks(data)
    else:
        return
    fmt, ds64_data = None, None
    for chunk, body, size in chunks:
        if chunk == b"ds64" and size >= 16 and body + 16 <= len(data):
            ds64_data = struct.unpack_from("<Q", data, body + 8)[0]
        if chunk == b"fmt " and size >= 16 and body + 16 <= len(data):
            fmt = struct.unpack_from(order + "HHIIHH", data, body)
            _check_frame_size(*fmt)
        elif chunk == b"data":
            if size == RF64_SIZE and ds64_data is not None:
                size = ds64_data
            following = len(data) - body
            if size == 0 and following >= 2 and fmt is not None and data[:4] != W64_RIFF[:4]:
                raise ValueError(
                    f"its header says the audio data is 0 bytes long, but {following} bytes follow it "
                    "(written to a pipe?); send a WAV whose header gives its length"
                )
            if fmt is not None:
                _check_narrow_samples(fmt, memoryview(data)[body : body + size], order)  # (no copy)
            return


def _riff_chunks(data: bytes, order: str) -> Iterator[tuple[bytes, int, int]]:
    """Each chunk's name, where its body starts and its stated size, in a RIFF, RF64 or RIFX file."""
    offset = 12
    for _ in range(MAX_CHUNKS):
        if offset + 8 > len(data):
            return
        size = struct.unpack_from(order + "I", data, offset + 4)[0]
        yield data[offset : offset + 4], offset + 8, size
        offset += 8 + size + (size & 1)  # chunks are padded to an even length


def _w64_chunks(data: bytes) -> Iterator[tuple[bytes, int, int]]:
    """`_riff_chunks` for Wave64: a 16-byte GUID (a name the checks know: its 4 letters), a 64-bit size
    that counts the chunk's 24-byte head, each chunk 8-byte aligned."""
    offset = 40
    for _ in range(MAX_CHUNKS):
        if offset + 24 > len(data):
            return
        guid, size = data[offset : offset + 16], struct.unpack_from("<Q", data, offset + 16)[0]
        if size < 24:  # (left to libsndfile)
            return
        yield (guid[:4] if guid[4:] == W64_TAIL else b""), offset + 24, size - 24
        offset += (size + 7) & ~7


def _check_frame_size(tag: int, channels: int, rate: int, byte_rate: int, block: int, bits: int) -> None:
    """libsndfile takes a frame's size from the sample width, never from the block align. A block align
    alone off (whole-byte samples, the byte rate saying packed frames) is a writer's slip it reads right:
    accepted. Otherwise the frames may really be that size (16 bits padded to 32, two channels called
    one), read at twice their length: refused, saying what to send."""
    if tag not in PCM_TAGS or not channels or not bits:
        return
    expected = channels * ((bits + 7) // 8)
    if block != expected and not (bits % 8 == 0 and byte_rate == rate * expected):
        raise ValueError(
            f"its header gives {bits}-bit samples in {channels} channel(s), {expected} byte(s) a frame, "
            f"but frames of {block} bytes: it cannot be read as the audio it holds; send a WAV whose "
            f"block align is {expected} (channels × bytes a sample), or FLAC"
        )


def _all_within_right_aligned_range(highest: np.ndarray, bits: int, width: int) -> bool:
    """Whether every sample fits where a right-aligned writer puts it: a one-byte sample below 2**bits, a wider
    one's high bits all copies of its sign (read from each sample's most significant byte). Samples that use
    the low bits but reach past that range are full-width samples under a narrow label (a 16-bit tone marked
    12-bit): libsndfile reads them at their level, as before."""
    if width == 1:
        return not np.any(highest >> bits)
    sign_bits = 8 * width - bits + 1  # always within the most significant byte
    top = highest >> (8 - sign_bits)
    return bool(np.all((top == 0) | (top == (1 << sign_bits) - 1)))


def _check_narrow_samples(fmt: tuple[int, ...], samples: memoryview, order: str) -> None:
    """Samples of a width short of whole bytes (7 bits in one, 12 in two, 20 in three) are read as the
    whole bytes hold them, as libsndfile and players read them: a WAV keeps them in the high bits, so that
    is their level. Samples that use the low bits and stay within the narrow range were written right-aligned:
    7-bit 0-127 read at half level about −0.5 of full scale, 12-bit at 1/16 of theirs (a voice stored 24 dB
    quiet): refused."""
    tag, channels, _rate, _byte_rate, block, bits = fmt
    width = (bits + 7) // 8
    if tag not in PCM_TAGS or not channels or not 0 < bits < 32 or not bits % 8 or block != channels * width:
        return  # (bits 0: libsndfile's)
    unused = (1 << (8 * width - bits)) - 1  # the low bits of each sample's least significant byte
    whole = len(samples) // width * width
    frames = np.frombuffer(samples[:whole], dtype=np.uint8)
    lowest = frames[0 if order == "<" else width - 1 :: width]
    if np.any(lowest & unused) and _all_within_right_aligned_range(
        frames[width - 1 if order == "<" else 0 :: width], bits, width
    ):
        raise ValueError(
            f"its header gives {bits}-bit samples, which a WAV keeps in the high bits of {width} byte(s), but "
            f"its samples use the low {8 * width - bits} bit(s) (written right-aligned?): it would be read at "
            "another level; send 8-bit or 16-bit PCM"
        )
