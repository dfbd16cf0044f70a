"""How long a text's segments are, in tokens: a short first one for early audio, then the length the
decoder's measured cost curve makes cheapest for the prompt (`cost.py`), or `--segment-seconds`; never
more than the largest decoder bucket holds beside the prompt. `segmenter.py` then cuts the text.

Apart from the engine because it is arithmetic on what the engine reads at each call (its options, the
vocoder's hop, its bucket bound): nothing here is kept, so an engine that shares another's models with
other options plans with its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from npu_worker.engine.zipvoice import cost
from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from npu_worker.engine.zipvoice.prompt import Prompt
from npu_worker.engine.zipvoice.segmenter import plan_segments


def plan_text(
    text: str,
    count: Callable[[str], int],
    prompt: Prompt,
    speed: float,
    early: bool,
    frames_per_token: float | None,
    *,
    hop_seconds: float,
    options: ZipVoiceOptions,
    precision: str,
    bucket_tokens: Callable[[Prompt, float], int],
) -> list[str]:
    """Segments of a text (`count`: a piece's tokens), sized from the voice's speaking rate (default:
    the prompt's)."""
    if frames_per_token is None:
        frames_per_token = prompt.frames / max(1, len(prompt.tokens))
    seconds_per_token = frames_per_token * hop_seconds / max(speed, 1e-3)

    def tokens(seconds: float) -> int:
        return max(1, int(seconds / seconds_per_token))

    text_tokens, frames_at_speed = count(text), frames_per_token / max(speed, 1e-3)
    bound = bucket_tokens(prompt, frames_at_speed)
    later = segment_tokens(text_tokens, prompt, frames_at_speed, tokens, options, precision, bound)
    if not early:
        return plan_segments(text, count, later, later, later)
    first = min(tokens(options.first_segment_seconds), later)  # (later: within the largest bucket)
    return plan_segments(text, count, first, later, tokens(options.first_segment_min_seconds))


def segment_tokens(
    text_tokens: int,
    prompt: Prompt,
    frames_per_token: float,
    tokens: Callable[[float], int],
    options: ZipVoiceOptions,
    precision: str,
    bucket_tokens: int,
) -> int:
    """Most tokens per segment: `segment_seconds` if set, else the text split into the number of
    equal segments the decoder's measured cost curve makes cheapest for this prompt (cost.py); never
    more than the largest decoder bucket holds beside the prompt (`bucket_tokens`)."""
    longest = min(tokens(cost.MAX_SEGMENT_SECONDS), bucket_tokens)
    if options.segment_seconds:
        return min(tokens(options.segment_seconds), longest)
    frames = text_tokens * frames_per_token
    count = cost.segment_count(precision, prompt.frames, frames, longest * frames_per_token)
    slack = 1.0 if count == 1 else 1.2  # sentences rarely divide evenly: room for the greedy packing
    return min(longest, math.ceil(text_tokens / count * slack) + 4)
