"""`npu-worker make-test-model DIR`: a synthetic ZipVoice model directory for tests and benchmarks.

The command's options and its checks before writing (a folder that holds other files than a killed
build's own `.part` leftovers, one others can write in, a file where the folder goes, one another
make-test-model is writing: an exclusive `flock` on its `.make-test-model.lock`, held for the build),
apart from `zipvoice_model.py`, which builds the graphs and writes the files (in the folder `model_folder.py`
claims) and which tests and benchmarks call directly (`build_model_dir`).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from npu_worker.folder_lock import locked_directory
from npu_worker.other_writers import shared_with_others
from npu_worker.testing.model_folder import FILE_NAMES, SYNTHETIC_STAMP, is_leftover_part
from npu_worker.testing.zipvoice_model import SIZES, build_model_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options (`python -m npu_worker.testing.make_test_model` and `npu-worker make-test-model`)."""
    parser.add_argument("dir", help="output model directory")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny", help="tiny: tests; full: real cost")
    parser.add_argument(
        "--precision", nargs="+", type=_precision, choices=PRECISIONS, default=list(PRECISIONS)
    )
    parser.add_argument("--layout", choices=sorted(FILE_NAMES), default="official", help="file names")
    parser.add_argument(
        "--no-distill", action="store_true", help="ZipVoice (two passes per step) instead of Distill"
    )


PRECISIONS = ("fp32", "int8")


def _precision(text: str) -> str:
    """A precision, or the usage error that says why: `--precision fp32 int8 DIR` reads DIR as a third
    precision (the flag takes one or more), and argparse said only "invalid choice: 'DIR'"."""
    if text not in PRECISIONS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a precision ({', '.join(PRECISIONS)}): --precision takes one or more, so give "
            "the folder before it (make-test-model DIR --precision fp32 int8) or end the list with --"
        )
    return text


LOCK = ".make-test-model.lock"  # held (flock) by the build writing the folder; removed at its end


def say(line: str) -> None:
    print(f"npu-worker make-test-model: {line}", file=sys.stderr)


def build_lock(out: Path) -> contextlib.AbstractContextManager[None]:
    """Hold `out`'s lock file for the build (BlockingIOError at once when another build holds it):
    `folder_lock`'s, under its own name. A file only this user can open, made in a folder only this
    user can write (`run` checks first): the lock was a `flock` on the folder itself, which any local
    user could open read-only and hold, so refusing every build. A filesystem that takes no `flock`
    builds as it did, with a warning."""

    def no_flock(exc: OSError) -> None:
        say(
            f"warning: {out}'s filesystem takes no lock ({exc.strerror}): two builds at once are not kept apart"
        )

    return locked_directory(out, wait=False, name=LOCK, no_flock=no_flock)


def run(args: argparse.Namespace) -> int:
    os.umask(os.umask(0) | 0o022)  # else, under umask 000, the folder it made was refused as others'
    out = Path(args.dir)
    try:
        out.mkdir(parents=True, exist_ok=True)  # (as `build_model_dir`: a folder to hold the lock in)
        if (shared := shared_with_others(out)) is not None:  # before the lock file: none made there
            say(f"{out}: {shared}; use a folder only this user can change")
            return 2
        with build_lock(out):
            return _build(args, out)
    except BlockingIOError:  # two at once: the second removed the first's `.part` and wrote over it
        print(
            f"npu-worker make-test-model: another make-test-model is writing {out}: wait for it to end"
            " or give another folder",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:  # a file where the folder goes, too: one line, not a traceback
        if exc.errno == errno.ELOOP and exc.filename == LOCK:  # (opened in the folder, by its name)
            say(
                f"{out / LOCK} is a symbolic link, not the lock file a build makes (never followed): remove it"
            )
        elif exc.errno == errno.EACCES and exc.filename == LOCK and os.path.lexists(out / LOCK):
            say(
                f"{out / LOCK} is a file this user cannot open ({exc.strerror}; another user's build left it): remove it"
            )
        elif exc.errno in (errno.EACCES, errno.EROFS) and exc.filename == LOCK:  # its first file made there
            say(f"{out} is not writable by this user ({exc.strerror}): give a folder this user can write in")
        else:
            say(str(exc))
        return 2


def _build(args: argparse.Namespace, out: Path) -> int:
    """The build, under the folder's lock (`run`): refused into a folder of other files."""
    others = any(entry.name != LOCK and not is_leftover_part(entry.name) for entry in out.iterdir())
    if others and not (out / SYNTHETIC_STAMP).exists():
        # `make-test-model ~/models/zipvoice_distill` wrote random weights over the downloaded model
        print(
            f"npu-worker make-test-model: {out} holds other files (it is no earlier make-test-model's "
            "folder) that random weights would replace: give an empty or new folder",
            file=sys.stderr,
        )
        return 2
    out = build_model_dir(out, args.size, args.precision, distill=not args.no_distill, layout=args.layout)
    for file in sorted(entry for entry in out.iterdir() if entry.name != LOCK):
        print(f"{file.lstat().st_size:>12,d}  {file}")  # a dangling link there was a traceback
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
