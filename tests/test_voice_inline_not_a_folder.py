"""Something other than a folder at `voices/inline` (a stray file, a FIFO): a named 503 for inline audio,
and a start-up that goes on reading its kept jobs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npu_worker.protocol import StateUnavailable
from npu_worker.voices import UploadLimits, VoiceLibrary
from tests.openai_support import tone_wav

pytestmark = pytest.mark.allow_blocking  # plain filesystem calls, no event loop


@pytest.mark.parametrize("planted", ["file", "fifo"])
def test_no_folder_at_voices_inline_is_a_named_503_and_start_up_goes_on(tmp_path, planted):
    """Each inline `ref_audio` raised NotADirectoryError (an internal error), and so did start-up's
    removal of upload leftovers, which made every kept job unreadable (`StateUnavailable` on every
    `/jobs` request until a restart). Named uploads do not use the folder: they are still stored."""
    voices = tmp_path / "voices"
    voices.mkdir()
    inline = voices / "inline"
    if planted == "file":
        inline.write_text("not a folder")
    else:
        os.mkfifo(inline)
    library = VoiceLibrary(voices)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    assert library.remove_crash_leftovers() == 0
    with pytest.raises(StateUnavailable, match="inline"):
        library.store_inline(tone_wav(seconds_long=1.0), "text", limits)
    assert library.add("named", tone_wav(seconds_long=1.0), "text", limits).name == "named"
    assert Path(library.require("named").wav_path).parent == voices.resolve()


def test_a_linked_voices_inline_is_not_looked_in(tmp_path):
    """`find` followed a link at `voices/inline`: another folder's `inline-*.wav` was spoken as one of
    the worker's inline voices, though every change refuses that link."""
    voices, elsewhere = tmp_path / "voices", tmp_path / "elsewhere"
    voices.mkdir()
    library = VoiceLibrary(voices)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    name = library.store_inline(tone_wav(seconds_long=1.0), "text", limits)
    assert library.find(name) is not None
    os.rename(voices / "inline", elsewhere)
    os.symlink(elsewhere, voices / "inline")
    assert library.find(name) is None
    os.unlink(voices / "inline")
    os.rename(elsewhere, voices / "inline")
    assert library.find(name) is not None  # the folder itself, as before
