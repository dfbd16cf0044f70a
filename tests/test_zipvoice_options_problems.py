"""ZipVoiceOptions.problems names every bad value at once, each in its own words and in the order it is
checked: the time shift, the segment lengths, how segments are joined, then the reference voice's bounds."""

from __future__ import annotations

from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from npu_worker.engine.zipvoice.prompt import PromptOptions


def test_every_bad_value_is_named_in_the_order_checked():
    bad_prompt = PromptOptions(
        min_seconds=0.0, max_seconds=float("inf"), max_pause_s=0.0, trailing_silence_s=-1.0, target_rms=0.0
    )
    options = ZipVoiceOptions(
        t_shift=0.0,
        first_segment_seconds=0.0,
        segment_seconds=-1.0,
        first_segment_steps=0,
        crossfade_ms=-1,
        vocoder_piece_frames=0,
        buckets=(),
        prompt=bad_prompt,
    )
    assert options.problems() == [
        "t_shift must be in (0, 1], got 0.0",
        "first_segment_seconds (--first-segment-seconds) must be above 0, got 0.0",
        "segment_seconds (--segment-seconds) must be from 0 (from the cost curve) to 18 (the largest decoder"
        " bucket), got -1.0",
        "first_segment_steps (--first-segment-steps) must be in 1..64, got 0",
        "crossfade_ms must be >= 0, got -1",
        "vocoder_piece_frames must be >= 1, got 0",
        "buckets must be positive and ascending, got ()",
        "prompt bounds must satisfy 0 < min_seconds <= first_max_seconds (--first-prompt-max-seconds)"
        " <= max_seconds (--prompt-max-seconds), got 0.0, 2.0, inf",
        "--prompt-max-seconds must be at most 30, got inf",
        "--prompt-max-pause-seconds must be above 0 and at most 30",
        "prompt pause, trailing silence and target rms must be positive",
    ]


def test_each_segment_length_rule_is_its_own_sentence():
    too_long_first = ZipVoiceOptions(first_segment_seconds=99.0, buckets=(2, 1))
    assert too_long_first.problems() == [
        "first_segment_seconds (--first-segment-seconds) must be at most 18, got 99.0",
        "buckets must be positive and ascending, got (2, 1)",
    ]
    assert ZipVoiceOptions(first_segment_seconds=2.0, segment_seconds=1.0).problems() == [
        "segment lengths must satisfy first_segment_seconds (--first-segment-seconds) <= segment_seconds"
        " (--segment-seconds; 0: from the cost curve), got 2.0, 1.0"
    ]
    unbounded_pause = ZipVoiceOptions(first_segment_min_seconds=0.0, prompt=PromptOptions(max_pause_s=99.0))
    assert unbounded_pause.problems() == [
        "first_segment_min_seconds must be in (0, first_segment_seconds], got 0.0, 1.6",
        "--prompt-max-pause-seconds must be above 0 and at most 30",
    ]


def test_the_defaults_have_no_problem():
    assert ZipVoiceOptions().problems() == []
