"""A caller's reference removed while admission checks it is a RefWavNotAllowed (400), never another
error: `resolve_ref_wav` read "is it a file", its link count and its size by name, three stats, and a
file gone between them raised FileNotFoundError, a 500. One stat now (`files.regular_file`)."""

from __future__ import annotations

import subprocess
import sys

from npu_worker.paths import resolve_ref_wav
from npu_worker.protocol import RefWavNotAllowed

# Another process makes and removes the file over and over, as a caller cleaning up its own file does.
FLICKER = """
import os, sys
path = sys.argv[1]
while True:
    with open(path, "wb") as f:
        f.write(b"RIFF")
    os.unlink(path)
"""


def test_a_reference_removed_while_it_is_checked_is_refused_by_name(tmp_path):
    voice = tmp_path / "voice.wav"
    flicker = subprocess.Popen([sys.executable, "-c", FLICKER, str(voice)])
    found = refused = 0
    try:
        for _ in range(20000):
            try:
                resolve_ref_wav(str(voice), (str(tmp_path),))
                found += 1
            except RefWavNotAllowed as error:
                assert "does not exist or is not a file" in str(error)
                refused += 1
    finally:
        flicker.kill()
        flicker.wait()
    assert found + refused == 20000
