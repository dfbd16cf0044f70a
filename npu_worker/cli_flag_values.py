"""Values of the `synth`, `batch` and `bench` flags (and `prepare`'s paths) read into what they mean, or refused in the flag's
words before anything is sent: a blank `--lang` silently became the default, which the worker itself
refuses as a request's `lang`, `-o ~nosuchuser/x.wav` was pathlib's RuntimeError traceback, and
`bench --wav-dir=~/w` a folder named `~`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from npu_worker.cli_progress import say


def language(text: str) -> str:
    """`--lang`: a code or voice name as given; argparse's refusal (exit 2) for a blank one."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is blank: give a language code such as ko, or leave --lang out for the default"
        )
    return text


def home_path(text: str) -> Path:
    """argparse type of `bench`'s paths: `~` and `~user` expanded as `synth` and `batch` do (a shell
    leaves `--wav-dir=~/w` as written: bench made a folder named `~` in the caller's folder); argparse's
    refusal for a home no account has (`as_written_home`)."""
    return Path(as_written_home(text))


def home_folder(text: str) -> str:
    """`home_path` as the string `--wav-dir` is kept as."""
    return as_written_home(text)


def prepare_folder(text: str) -> str:
    """`prepare`'s --model-dir and --out: `as_written_home`, blank refused: `--out "$OUT"` with OUT
    unset prepared into the current folder ("prepared ."), and a blank --model-dir was said to be
    "required for --backend zipvoice-onnx", a flag prepare does not have."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is blank: give a folder")
    return as_written_home(text)


def prepare_file(text: str) -> str | None:
    """`prepare`'s --ref-wav and --calibration-texts: `as_written_home`; blank is none (the default), as
    serve's --ref-wav: it was the folder `.`, "cannot read calibration texts .: Is a directory"."""
    return as_written_home(text) if text.strip() else None


def as_written_home(text: str) -> str:
    """`text` with `~` expanded and nothing else changed; argparse's refusal for a home no account has.
    Made a `Path`, `./~old` (how a folder named `~old` here is named) lost its `./` and was refused as
    a home no account has, and `./~` was the home itself: prepared into it, and so the serve line."""
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        raise argparse.ArgumentTypeError(no_home(text))
    return expanded


def local_path(text: str, flag: str, command: str = "synth") -> Path | None:
    """`text` with `~` expanded (`as_written_home`: `-o ./~x.wav` was refused, "no home directory for
    ."), made absolute; None (the refusal said) for a `~user` no account has, or a `~` with no home:
    pathlib's RuntimeError was a traceback."""
    try:
        return Path(as_written_home(text)).absolute()
    except argparse.ArgumentTypeError:
        say(f"npu-worker {command}: {flag} {no_home(text)}")
        return None


def no_home(text: str) -> str:
    """The refusal of a `~user` path no account has (or a `~` with no home), for either flag kind."""
    return f"{text}: no home directory for {text.split('/')[0]} on this machine"
