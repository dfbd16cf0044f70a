"""The onset search a preview's first chunk makes on the engine lane, counted (benchmarks/SERVER_OVERHEAD.md,
stop 56): `np.flatnonzero`, `np.ones` and `ndarray.sum` went through numpy's Python wrappers (≈ 16 calls),
and the watch and the trimmer each took `asarray` and `reshape` of a chunk that was 1-D float32 already.
The onset itself is the rule's (`test_audio.py` holds it against the sliding windows' reference)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np

from npu_worker import audio

RATE = 24000


def calls_of(work: Any) -> list[str]:
    """Every call `work()` makes by name (not `work` itself): a Python function's as it is, a builtin's
    after `c:` (numpy's `nonzero` wrapper is Python, the array's method a builtin)."""
    called: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)
        elif event == "c_call":
            called.append("c:" + getattr(arg, "__name__", repr(arg)))

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return called[1:-1]  # (less `work` and `setprofile`)


def silence_then_tone(seconds_silent: float, seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    signal = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    signal[: int(seconds_silent * RATE)] = 0.0
    return signal


def test_the_onset_search_calls_no_wrapper_of_numpy_it_can_do_without() -> None:
    signal = silence_then_tone(0.1, 0.4)
    expected = audio.audible_onset(signal, RATE)  # (the rate's hop worked out once, here)
    called = calls_of(lambda: audio.audible_onset(signal, RATE))
    wrappers = ("flatnonzero", "_flatnonzero_dispatcher", "ones", "_sum", "nonzero", "ravel", "c:round")
    for wrapper in wrappers + ("einsum", "_einsum_dispatcher", "convolve", "_convolve_dispatcher", "c:len"):
        assert wrapper not in called, (wrapper, called)
    assert called.count("_loud_windows_and_hops") == 1 and expected is not None
    assert abs(expected - int(0.1 * RATE)) <= 240


def test_an_engine_chunk_is_fed_to_the_watch_and_trimmer_as_it_is() -> None:
    chunk = silence_then_tone(0.05, 0.2)
    trimmer = audio.LeadingSilenceTrimmer(RATE)
    called = calls_of(lambda: trimmer.feed(chunk))
    assert called[: called.index("audible_onset")] == ["feed", "feed"], called  # (no `asarray`, `reshape`)
    assert trimmer.onset_in_output is not None


def test_what_is_not_a_1d_float32_array_is_still_converted_first() -> None:
    chunk = silence_then_tone(0.05, 0.2)
    two_d, as_list = audio.OnsetWatch(RATE), audio.OnsetWatch(RATE)
    found = audio.OnsetWatch(RATE).feed(chunk)
    assert found is not None
    assert two_d.feed(chunk.reshape(1, -1)) == found
    assert as_list.feed(chunk.astype(np.float64).tolist()) == found  # type: ignore[arg-type]
    trimmer, reference = audio.LeadingSilenceTrimmer(RATE), audio.LeadingSilenceTrimmer(RATE)
    out = trimmer.feed(chunk.astype(np.float64).reshape(1, -1))
    assert out.dtype == np.float32 and np.array_equal(out, reference.feed(chunk))


def converted_first(chunk: Any) -> np.ndarray:
    """What the watch and trimmer fed on before stop 56, whatever the chunk: a 1-D float32 copy."""
    return np.array(chunk, dtype=np.float32).reshape(-1)


class Subclass(np.ndarray):
    pass


def test_every_kind_of_chunk_gives_the_onset_and_trim_of_its_float32_copy() -> None:
    """The fast path takes only an exact 1-D native float32 ndarray: every other chunk (other dtypes,
    big-endian float32, 2-D, a subclass, a strided view, NaN and inf, empty, one sample), fed in pieces
    at rates with and without the rule's quick case, gives the same onsets, trimmed chunks (float32)
    and counts as its float32 copy (the trimmer's chunks up to the onset's float32; past it, as fed)."""
    rng = np.random.default_rng(56)
    tone = silence_then_tone(0.07, 0.3)
    kinds: dict[str, Any] = {
        "float32": lambda x: x,
        "float64": lambda x: x.astype(np.float64),
        "big-endian": lambda x: x.astype(">f4"),
        "int16": lambda x: (x * 32767).astype(np.int16),
        "2-D": lambda x: x.reshape(1, -1),
        "subclass": lambda x: x.view(Subclass),
        "strided": lambda x: np.repeat(x, 2)[::2],
        "nan": lambda x: np.where(np.arange(x.size) == x.size // 3, np.float32(np.nan), x),
        "inf": lambda x: np.where(np.arange(x.size) == x.size // 2, np.float32(np.inf), x),
    }
    found = 0
    for rate in (RATE, 22050, 16000, 44100):
        for kind, made in kinds.items():
            cuts = np.sort(rng.integers(0, tone.size, size=4))
            pieces = [made(piece) for piece in np.split(tone, cuts)] + [made(tone[:1]), made(tone[:0])]
            watch, watch_reference = audio.OnsetWatch(rate), audio.OnsetWatch(rate)
            trimmer, reference = audio.LeadingSilenceTrimmer(rate), audio.LeadingSilenceTrimmer(rate)
            for piece in pieces:
                assert watch.feed(piece) == watch_reference.feed(converted_first(piece)), (rate, kind)
                out, expected = trimmer.feed(piece), reference.feed(converted_first(piece))
                if not trimmer._found or out.size < piece.size:  # (past the onset a chunk passes as it came)
                    assert out.dtype == np.float32, (rate, kind)
                assert np.array_equal(converted_first(out), expected, equal_nan=True), (rate, kind)
            assert (watch.onset, watch.fed, watch.dropped) == (
                watch_reference.onset,
                watch_reference.fed,
                watch_reference.dropped,
            ), (rate, kind)
            found += watch.onset is not None
            assert np.array_equal(trimmer.flush(), reference.flush(), equal_nan=True)
            assert (trimmer.trimmed_samples, trimmer.onset_in_output) == (
                reference.trimmed_samples,
                reference.onset_in_output,
            ), (rate, kind)
    assert found == 4 * len(kinds)  # (each found its onset: the rule ran past the silence)


def test_the_onset_searchs_c_calls_give_what_numpys_wrappers_gave() -> None:
    """`c_einsum` and `correlate` (stop 57) are the calls `np.einsum` and `np.convolve` make: the same
    sums of squares bit for bit (noise and silence around the threshold), the same runs."""
    rng = np.random.default_rng(57)
    for level in (0.0, 1e-4, 5.6e-3, 0.3):
        blocks = (level * rng.standard_normal((40, 240))).astype(np.float64)
        assert (
            audio._c_einsum("ij,ij->i", blocks, blocks).tobytes()
            == np.einsum("ij,ij->i", blocks, blocks).tobytes()
        )
    for size in (2, 3, 17, 400):
        windows = rng.random(size) > 0.4
        run = audio._correlate(windows.astype(np.int32), audio._RUN_OF_ONSET, 0)
        assert np.array_equal(
            run, np.convolve(windows.astype(np.int32), np.ones(2, dtype=np.int32), mode="valid")
        )


def test_a_numpy_without_the_private_c_functions_still_imports_and_finds_the_same_onset() -> None:
    """`c_einsum` and `correlate` are numpy's private names (`numpy._core.multiarray`, `numpy.core` in
    1.26) and the project allows any numpy from 1.26 up: one that moved them failed `npu_worker.audio`'s
    import, so the worker could not start at all. A fresh interpreter whose numpy has neither name (both
    modules stand-ins while the module imports) finds the same onsets through the public wrappers."""
    script = (
        "import sys, types, numpy as np\n"
        "real = {k: sys.modules.get(k) for k in ('numpy._core.multiarray', 'numpy.core.multiarray')}\n"
        "for k in real: sys.modules[k] = types.ModuleType(k)\n"
        "from npu_worker import audio\n"
        "for k, m in real.items():\n"
        "    sys.modules.pop(k) if m is None else sys.modules.__setitem__(k, m)\n"
        "assert audio._c_einsum is np.einsum, audio._c_einsum\n"
        "s = np.concatenate([np.zeros(2400, np.float32), 0.3 * np.ones(9600, np.float32)])\n"
        "s[2400:] *= np.sin(np.arange(9600) / 7.0).astype(np.float32)\n"
        "print(audio.audible_onset(s, 24000), audio.audible_onset(s[:3000], 24000))\n"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    signal = np.concatenate([np.zeros(2400, np.float32), 0.3 * np.ones(9600, np.float32)])
    signal[2400:] *= np.sin(np.arange(9600) / 7.0).astype(np.float32)
    expected = (audio.audible_onset(signal, RATE), audio.audible_onset(signal[:3000], RATE))
    assert found.stdout.split() == [str(expected[0]), str(expected[1])] and expected[0] is not None
