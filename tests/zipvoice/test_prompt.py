"""Reference prompts: cleaning, a bounded length cut at a pause that matches a word boundary."""

import numpy as np

from npu_worker.engine.zipvoice.prompt import PromptOptions, clean_reference, cut_at_word_pause

SR = 24000


def word(seconds, freq=200.0):
    t = np.arange(int(SR * seconds)) / SR
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def gap(seconds):
    return np.zeros(int(SR * seconds), dtype=np.float32)


def test_prompt_longer_than_the_bound_is_cut_at_the_pause_of_a_word_boundary():
    # four words of equal length with pauses between: the letters say where each word ends
    audio = np.concatenate([word(0.8), gap(0.2), word(0.8), gap(0.2), word(0.8), gap(0.2), word(0.8)])
    cut, text = cut_at_word_pause(audio, SR, "가나다 라마바 사아자 차카타.", 2.0, PromptOptions())
    assert text == "가나다 라마바,"
    assert 1.7 < cut.size / SR < 1.95


def test_prompt_within_the_bound_is_kept_whole():
    audio = np.concatenate([word(0.8), gap(0.2), word(0.8)])
    cut, text = cut_at_word_pause(audio, SR, "가나다 라마바.", 4.0, PromptOptions())
    assert cut.size == audio.size and text == "가나다 라마바."


def test_without_an_aligned_pause_the_prompt_is_cut_hard_at_the_quietest_spot_near_a_word_end():
    """Kept whole, a 60 s reference with no pause was paid at every decoder call (93 s for a sentence).
    Twelve words of 1 s, each ending in a dip too short and too loud to be a pause: the cut lands in
    the dip that ends the third word, and the transcript keeps three words."""
    dip = (0.004 * np.ones(int(SR * 0.05))).astype(np.float32)
    audio = np.concatenate([np.concatenate([word(0.95), dip]) for _ in range(12)])
    words = [f"{a}{b}다" for a, b in zip("가나다라마바사아자차카타", "파하가나다라마바사아자차", strict=True)]
    cut, text = cut_at_word_pause(audio, SR, " ".join(words) + ".", 3.0, PromptOptions())
    assert text == " ".join(words[:3]) + ","
    assert 2.95 <= cut.size / SR <= 3.0


def test_a_transcript_without_spaces_is_cut_between_characters():
    audio = word(12.0)
    cut, text = cut_at_word_pause(audio, SR, "你好世界，你好世界，你好世界。", 3.0, PromptOptions())
    assert text == "你好世,"
    assert 2.0 <= cut.size / SR <= 3.0  # "世" ends at 3 of 15 letters (the commas count): 2.4 s


def test_without_a_pause_and_told_not_to_cut_hard_the_whole_prompt_is_kept():
    """The first segment's shorter prompt: without an aligned pause it takes the other prompt."""
    audio = np.concatenate([word(3.0), gap(0.3), word(0.5)])  # pause at 86 %, words at 50 %
    cut, text = cut_at_word_pause(audio, SR, "가나다 라마바.", 2.0, PromptOptions(), hard=False)
    assert cut.size == audio.size and text == "가나다 라마바."


def test_cleaning_trims_edges_and_shortens_long_pauses():
    audio = np.concatenate([gap(0.5), word(0.5), gap(2.0), word(0.5), gap(0.7)])
    cleaned = clean_reference(audio, SR, PromptOptions(max_pause_s=0.4))
    assert abs(cleaned.size / SR - 1.4) < 0.02
