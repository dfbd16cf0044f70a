"""Values of the `synth`, `batch` and `bench` flags read into what they mean, or refused in the flag's
words before anything is sent: a blank `--lang` silently became the default, which the worker itself
refuses as a request's `lang`, and `-o ~nosuchuser/x.wav` was pathlib's RuntimeError traceback."""

from __future__ import annotations

import argparse
from pathlib import Path

from npu_worker.cli_progress import say


def language(text: str) -> str:
    """`--lang`: a code or voice name as given; argparse's refusal (exit 2) for a blank one."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is blank: give a language code such as ko, or leave --lang out for the default"
        )
    return text


def local_path(text: str, flag: str, command: str = "synth") -> Path | None:
    """`text` with `~` expanded, made absolute; None (the refusal said) for a `~user` no account has,
    or a `~` with no home: pathlib's RuntimeError was a traceback."""
    try:
        return Path(text).expanduser().absolute()
    except RuntimeError:
        say(
            f"npu-worker {command}: {flag} {text}: no home directory for {text.split('/')[0]} on this machine"
        )
        return None
