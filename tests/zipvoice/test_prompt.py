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


def test_without_an_aligned_pause_the_whole_prompt_is_kept():
    audio = np.concatenate([word(3.0), gap(0.3), word(0.5)])  # pause at 86 %, words at 50 %
    cut, text = cut_at_word_pause(audio, SR, "가나다 라마바.", 2.0, PromptOptions())
    assert cut.size == audio.size and text == "가나다 라마바."


def test_cleaning_trims_edges_and_shortens_long_pauses():
    audio = np.concatenate([gap(0.5), word(0.5), gap(2.0), word(0.5), gap(0.7)])
    cleaned = clean_reference(audio, SR, PromptOptions(max_pause_s=0.4))
    assert abs(cleaned.size / SR - 1.4) < 0.02
