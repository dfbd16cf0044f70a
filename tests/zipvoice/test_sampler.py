"""The sampler's numbers: the time grid, the frame count and its speed fix (docs/zipvoice.md)."""

import numpy as np
import pytest

from npu_worker.engine.zipvoice import sampler


def test_eight_step_time_grid_matches_the_published_values():
    expected = [0, 0.0667, 0.1429, 0.2308, 0.3333, 0.4545, 0.6, 0.7778, 1]
    assert np.allclose(sampler.time_grid(8), expected, atol=5e-5)


def test_time_grid_without_shift_is_uniform():
    assert np.allclose(sampler.time_grid(4, t_shift=1.0), [0, 0.25, 0.5, 0.75, 1])


@pytest.mark.parametrize(
    ("prompt_frames", "prompt_tokens", "target_tokens", "speed", "generated", "naive_generated"),
    [
        (281, 30, 100, 1.5, 625, 531),  # docs/zipvoice.md example
        (281, 30, 10, 2.0, 47, -93),  # docs/zipvoice.md example: the naive count goes negative
        (281, 30, 100, 1.0, 937, 937),  # speed 1: fix and naive agree
        (281, 30, 100, 0.5, 1874, 2155),
        (100, 20, 40, 1.25, 160, 140),
    ],
)
def test_frame_count_table_with_the_speed_fix(
    prompt_frames, prompt_tokens, target_tokens, speed, generated, naive_generated
):
    fixed = sampler.total_frames(prompt_frames, prompt_tokens, target_tokens, speed)
    naive = sampler.naive_total_frames(prompt_frames, prompt_tokens, target_tokens, speed)
    assert fixed - prompt_frames == generated
    assert naive - prompt_frames == naive_generated


@pytest.mark.parametrize("speed", [0.5, 0.8, 1.0, 1.5, 2.0, 3.0])
def test_encoder_speed_makes_the_exported_formula_give_the_pytorch_length(speed):
    p, np_, nt = 281, 30, 57
    fed = sampler.encoder_speed(p, np_, nt, speed)
    exported = sampler.naive_total_frames(p, np_, nt, fed)
    assert exported == sampler.total_frames(p, np_, nt, speed)


def test_same_seed_gives_the_same_noise_and_another_seed_does_not():
    a = sampler.initial_noise(7, 50, 100)
    assert np.array_equal(a, sampler.initial_noise(7, 50, 100))
    assert not np.array_equal(a, sampler.initial_noise(8, 50, 100))


def test_euler_sampler_integrates_a_constant_velocity_exactly_and_drops_the_prompt():
    prompt = np.full((3, 4), 0.5, dtype=np.float32)
    text = np.zeros((1, 10, 4), dtype=np.float32)
    calls = []

    def decoder(t, x, text_condition, speech_condition):
        calls.append(t)
        assert np.array_equal(speech_condition[0, :3], prompt)
        assert not speech_condition[0, 3:].any()
        return np.ones_like(x)

    out = sampler.euler_sample(decoder, text, prompt, num_steps=8, seed=1)
    start = sampler.initial_noise(1, 10, 4)[0, 3:]
    assert out.shape == (7, 4)
    assert np.allclose(out, start + 1.0, atol=1e-6)  # Σ (t_{i+1} − t_i) = 1
    assert np.allclose(calls, sampler.time_grid(8)[:-1])
