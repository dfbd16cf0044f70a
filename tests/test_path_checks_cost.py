"""The path checks a `/synth` asks twice (its admission, its wav's write), answered as before at a
lower cost (issue 25, stop 61): `files.lies_in` gives `os.path.commonpath`'s answer, `split_under_root`
pathlib's parts, and a check against no operator's file stats nothing."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_worker.files import lies_in, split_under_root
from npu_worker.paths import PathPolicy

PARTS = st.sampled_from(["a", "b", "ab", ".", "..", ""])
PATHS = st.builds(
    lambda lead, parts, tail: lead + "/".join(parts) + tail,
    st.sampled_from(["", "/", "//", "///"]),
    st.lists(PARTS, max_size=5),
    st.sampled_from(["", "/", "/."]),
)


@pytest.mark.parametrize("odd", [7, None, b"/out/a.wav", ["/out"]])
def test_lies_in_refuses_what_is_no_text_as_commonpath_did(odd: Any) -> None:
    """A TypeError, as commonpath raised (a cluster's job record not of the worker's making names such
    a path: its writer drops that entry on a TypeError, and an AttributeError ended its loop)."""
    for path, root in ((odd, "/out"), ("/out/a.wav", odd)):
        with pytest.raises(TypeError):
            os.path.commonpath([path, root])
        with pytest.raises(TypeError):
            lies_in(path, root)


def test_lies_in_refuses_bytes_where_commonpath_answered() -> None:
    """Both bytes: commonpath answers (`b"/out"`), `lies_in` refuses, as its docstring says: the worker's
    paths and roots are text, and a bytes path is no record of its making."""
    assert os.path.commonpath([b"/out/a.wav", b"/out"]) == b"/out"
    with pytest.raises(TypeError):
        lies_in(b"/out/a.wav", b"/out")  # type: ignore[arg-type]


def commonpath_answer(path: str, root: str) -> bool:
    """What `spelled_under` asked before: commonpath's, its ValueError a no."""
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def pathlib_split(path: str, roots: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """`split_under_root` as it was (commonpath and `Path.relative_to`); None where it raised."""
    if not os.path.isabs(path) or os.path.normpath(path) != path:
        return None
    matching = [root for root in roots if commonpath_answer(path, root)]
    if not matching:
        return None
    root = max(matching, key=len)
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return None
    return (root, parts) if parts else None


@settings(max_examples=400, deadline=None)
@given(PATHS, PATHS)
def test_lies_in_answers_as_commonpath_did(path: str, root: str) -> None:
    assert lies_in(path, root) == commonpath_answer(path, root)


@settings(max_examples=400, deadline=None)
@given(PATHS, st.lists(PATHS, min_size=1, max_size=3))
def test_split_under_root_splits_as_pathlib_did(path: str, roots: list[str]) -> None:
    try:
        split: tuple[str, tuple[str, ...]] | None = split_under_root(path, roots)
    except ValueError:
        split = None
    assert split == pathlib_split(path, tuple(roots))


PATH_CODE = ("npu_worker", "posixpath", "genericpath", "pathlib")  # (not a test runner's hooks)


def counted(work: Any) -> Counter[str]:
    """The Python calls `work()` makes in the worker's and the path modules' code, and its C calls by
    name (`sys.setprofile`, this thread)."""
    calls: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls[f"python {frame.f_code.co_name}"] += 1
            if any(name in frame.f_code.co_filename for name in PATH_CODE):
                calls["python"] += 1
        elif event == "c_call":
            calls[arg.__name__] += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls


def test_a_callers_wav_is_written_with_fewer_calls_and_no_needless_stat(tmp_path: Path) -> None:
    """A `/synth`'s wav beneath a caller's root, as the engine thread writes it: 128 Python calls of the
    worker's and the path modules' and 11 stats a write before (commonpath 7 times, pathlib's parts, a
    stat of the path for no operator's file three times), 86 and 8 with them cut, for a path of five
    folders (`/tmp/x/out/talk/p0.wav`), and no file object (3 syscalls); the file is the same. (One
    stat more each way since a write also checks it is not the worker's own log.)"""
    root, state = tmp_path / "out", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    policy = PathPolicy((str(root),), str(state))
    target = policy.resolve_output_path(str(root / "talk" / "p0.wav"))
    for _ in range(2):  # (its folder made, what a first write imports imported: the later ones a /synth's)
        policy.write_output(target, b"first")
    calls = counted(lambda: policy.write_output(target, b"RIFF"))
    assert Path(target).read_bytes() == b"RIFF"
    assert calls["python"] <= 110, calls
    # The state dir's identity check (`alias_under`: the state dir and each folder of the path, the file
    # itself too), the check that it is not the worker's own log (`own_log.is_own_log`, one stat) and
    # the file's own check: three more before.
    assert calls["stat"] <= 1 + len(target.split("/")) + 1 + 1, calls
    # Written by its descriptor: a file object (`os.fdopen`) cost an fstat, an isatty and an lseek.
    assert calls["python fdopen"] == 0, calls
