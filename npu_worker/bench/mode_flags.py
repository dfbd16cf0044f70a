"""The `bench` flags that one `--mode` reads and the other does not, and the refusal of such a flag given
to the mode that would ignore it: `--mode fragments --engine-baseline B` ran without subtracting the
engine's times, `--transports http` still measured the WebSocket route and `--wav-dir` was never looked
at, and `--fragment-chars 0` was taken by the load mode, all without a word."""

from __future__ import annotations

import argparse
import math
from typing import Any

from npu_worker.bench.load import TRANSPORTS

# attribute -> flag; a value other than the parser's default was given on the command line. The load's
# pace (`--rps`, `--duration`, `--seed`) passes in fragments mode, which sends one text at a time: scripts
# give both modes those to keep a run short, and the report says how the texts were sent.
LOAD_ONLY = {"transports": "--transports", "engine_baseline": "--engine-baseline", "wav_dir": "--wav-dir"}
FRAGMENTS_ONLY = {"fragment_chars": "--fragment-chars", "fragment_interval_ms": "--fragment-interval-ms"}


def transport_names(text: str) -> tuple[str, ...]:
    """`--transports`: `ws`, `http`, comma-separated, or `both`, as its help and its refusal said (the
    refusal of `both` read "takes ws, http or both, not 'both'"); each once, in the order given."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    return tuple(dict.fromkeys(t for name in names for t in (TRANSPORTS if name == "both" else (name,))))


def mode_defaults(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The parser's defaults of the flags of one mode only, kept in the parsed arguments."""
    return {name: parser.get_default(name) for name in (*LOAD_ONLY, *FRAGMENTS_ONLY)}


def _the_fragments_route(name: str, value: Any) -> bool:
    """`--transports ws` names the one route fragments mode measures (the WebSocket): it was refused as
    a flag of the load mode, though it asks for what the mode does; `http` or `both` still is."""
    if name != "transports" or not isinstance(value, str):
        return False
    return set(transport_names(value)) == {"ws"}


def _given(value: Any, default: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return True  # nan equals nothing, the default neither
    return bool(value != default)


def flag_of_the_other_mode(args: argparse.Namespace) -> str | None:
    """The refusal of the first flag given that `args.mode` does not read, or None."""
    ignored, other = (LOAD_ONLY, "load") if args.mode == "fragments" else (FRAGMENTS_ONLY, "fragments")
    for name, flag in ignored.items():
        value = getattr(args, name)
        if args.mode == "fragments" and _the_fragments_route(name, value):
            continue
        if _given(value, args.mode_defaults[name]):
            return f"{flag} applies to --mode {other} only; --mode {args.mode} does not read it"
    return None
