"""`npu-worker make-test-model DIR`: a synthetic ZipVoice model directory for tests and benchmarks.

The command's options and its checks before writing (a folder that holds other files than a killed
build's own `.part` leftovers, one others can write in, a file where the folder goes), apart from
`zipvoice_model.py`, which builds the graphs and writes the files and which tests and benchmarks call
directly (`build_model_dir`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from npu_worker.other_writers import shared_with_others
from npu_worker.testing.zipvoice_model import (
    FILE_NAMES,
    SIZES,
    SYNTHETIC_STAMP,
    build_model_dir,
    is_leftover_part,
)


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


def run(args: argparse.Namespace) -> int:
    os.umask(os.umask(0) | 0o022)  # else, under umask 000, the folder it made was refused as others'
    out = Path(args.dir)
    unsafe = out.is_dir() and shared_with_others(out) is not None  # build_model_dir says why, below
    others = out.is_dir() and any(not is_leftover_part(entry.name) for entry in out.iterdir())
    if others and not unsafe and not (out / SYNTHETIC_STAMP).exists():
        # `make-test-model ~/models/zipvoice_distill` wrote random weights over the downloaded model
        print(
            f"npu-worker make-test-model: {out} holds other files (it is no earlier make-test-model's "
            "folder) that random weights would replace: give an empty or new folder",
            file=sys.stderr,
        )
        return 2
    try:
        out = build_model_dir(
            args.dir, args.size, args.precision, distill=not args.no_distill, layout=args.layout
        )
    except OSError as exc:  # a file where the folder goes, too: one line, not a traceback
        print(f"npu-worker make-test-model: {exc}", file=sys.stderr)
        return 2
    for file in sorted(out.iterdir()):
        print(f"{file.lstat().st_size:>12,d}  {file}")  # a dangling link there was a traceback
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
