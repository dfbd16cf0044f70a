"""ctypes binding to espeak-ng (GPL-3.0), loaded as a shared library from the `espeakng-loader` wheel.

espeak-ng keeps all of its state in process globals (current voice, parameters, the one synth callback),
so one thread at a time may call it: every call holds the library's lock. That is why `get_espeak()`
returns a process-wide singleton: the C library itself is one.

Synthesis runs in AUDIO_OUTPUT_SYNCHRONOUS mode: `espeak_Synth` blocks the calling thread and calls the
synth callback on that same thread with int16 buffers of `BUFFER_MS` of audio each. `synthesize_into`
runs the caller's sink right there, so the engine thread that synthesises is also the one that trims and
hands out each chunk: no thread hop per chunk (the two Condition hand-offs per buffer of the owner
thread this replaced cost 1.8 ms of CPU per preview sentence, the synthesis itself 6.1 ms: see
benchmarks/SERVER_OVERHEAD.md).
`synthesize` keeps an iterator for readers that want one (espeak_stream.py: a streaming thread and a
bounded channel per stream; a reader that stops listening stops espeak within a chunk or two).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from npu_worker.engine.base import language_code
from npu_worker.engine.espeak_state import CarriedState
from npu_worker.engine.espeak_stream import ChunkChannel, StreamJob, StreamRunner, SynthesisStream
from npu_worker.engine.text_form import readable
from npu_worker.protocol import EngineError, ModelLoadError

# Audio per synth callback. espeak's own default is 60 ms: about 75 callbacks for a 4.5 s sentence, each
# taking the GIL from the event loop and the other lane. 200 ms makes a third as many and took the
# server's CPU per preview from 11.4 to 9.2 ms and 12.8 to 10.2 ms (two series of three interleaved
# runs, benchmarks/SERVER_OVERHEAD.md, 2026-12-04). The engine's first trimmed frame comes 0.2 ms later
# at the median in-process (0.75 → 0.94 ms), which the server's first /ws frame did not show; 400 ms
# took that frame to 1.5 ms.
BUFFER_MS = 200

# Constants of speak_lib.h (ESPEAK_API_REVISION 12).
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_PARAMETER_RATE = 1
_PHONEMES_IPA = 0x02
_EE_OK = 0

# Clause punctuation kept in phoneme strings, with full-width forms mapped to ASCII (piper-phonemize
# style: ".", "!" and "?" end a sentence; ",", ";" and ":" are followed by a space).
_PUNCTUATION = {
    ".": ".", ",": ",", "!": "!", "?": "?", ";": ";", ":": ":",
    "。": ".", "，": ",", "、": ",", "！": "!", "？": "?", "；": ";", "：": ":", "…": ".",
}  # fmt: skip
_CLAUSE_PAUSES = {",", ";", ":"}
_LANGUAGE_FLAG = re.compile(r"\([^()]*\)")  # "(en)hˈɛloʊ(ko)": espeak's language switch markers

T = TypeVar("T")


class _VoiceStruct(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_void_p),  # (priority byte, NUL-terminated name) pairs, ended by a 0 byte
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


# int SynthCallback(short *wav, int numsamples, espeak_EVENT *events); the events are not used.
_SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


_INT, _UINT, _VOID_P, _CHAR_P = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.c_char_p
_SIGNATURES: dict[str, tuple[list[Any], Any]] = {
    "espeak_Initialize": ([_INT, _INT, _CHAR_P, _INT], _INT),
    "espeak_SetSynthCallback": ([_SynthCallback], None),
    "espeak_Info": ([_VOID_P], _CHAR_P),
    "espeak_GetParameter": ([_INT, _INT], _INT),
    "espeak_SetParameter": ([_INT, _INT, _INT], _INT),
    "espeak_SetVoiceByName": ([_CHAR_P], _INT),
    "espeak_ListVoices": ([_VOID_P], ctypes.POINTER(ctypes.POINTER(_VoiceStruct))),
    "espeak_Synth": ([_VOID_P, ctypes.c_size_t, _UINT, _INT, _UINT, _UINT, _VOID_P, _VOID_P], _INT),
    "espeak_TextToPhonemes": ([ctypes.POINTER(_VOID_P), _INT, _INT], _CHAR_P),
}


def _bind(lib: ctypes.CDLL) -> None:
    """Declare the signatures of speak_lib.h so ctypes converts arguments exactly."""
    for name, (argtypes, restype) in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes, function.restype = argtypes, restype


@dataclass(frozen=True)
class EspeakVoice:
    """One entry of espeak_ListVoices: `identifier` (e.g. "sit/cmn") is accepted by SetVoiceByName."""

    name: str
    identifier: str
    languages: tuple[str, ...]


def find_voice(voices: tuple[EspeakVoice, ...], name: str) -> EspeakVoice | None:
    """The voice whose identifier, file name, name or language is `name` (case-insensitive)."""
    wanted = language_code(name)
    for matches in (
        lambda v: v.identifier.lower() == wanted or v.identifier.lower().rsplit("/", 1)[-1] == wanted,
        lambda v: v.name.lower() == wanted,
        lambda v: wanted in v.languages,
    ):
        found = next((voice for voice in voices if matches(voice)), None)
        if found is not None:
            return found
    return None


class _Synthesis:
    """One `espeak_Synth` call: where its chunks go, how much espeak made, why it stopped."""

    def __init__(self, sink: Callable[[np.ndarray], bool]) -> None:
        self.sink = sink
        self.produced_samples = 0  # every sample espeak handed to the callback, taken or refused
        self.stopped = False  # the sink refused a chunk (or failed): espeak was told to abort
        self.error: BaseException | None = None  # what the sink raised, re-raised after espeak returns


class EspeakLibrary:
    """The espeak-ng library of this process.

    espeak keeps its state in process globals, so one thread at a time may call it: every call holds
    `_lock`, on whichever thread makes it. The engine thread synthesises on itself
    (`synthesize_into`: the synth callback runs the caller's code for each chunk, so a chunk crosses no
    thread); `synthesize` serves readers that want an iterator, from one streaming thread.
    """

    def __init__(self, library_path: str, data_path: str, buffer_ms: int = BUFFER_MS) -> None:
        try:
            self._lib = ctypes.CDLL(library_path)
            _bind(self._lib)
        except (OSError, AttributeError) as error:
            raise ModelLoadError(f"cannot load espeak-ng from {library_path}: {error}") from error
        self._carried = CarriedState(self._lib, library_path)  # (read before espeak's first call)
        self.data_path = data_path
        self.buffer_ms = buffer_ms
        self._lock = threading.Lock()
        self._active: _Synthesis | None = None  # set while espeak_Synth runs (under `_lock`)
        self._active_thread: int | None = None  # the thread running it: a nested call there is refused
        self._loaded_voice: str | None = None  # under `_lock`
        self._callback = _SynthCallback(self._on_audio)  # referenced for as long as espeak may call it
        self._streams = StreamRunner(self._run_stream_job)
        self.sample_rate, self.version, self.default_rate = self._call(self._initialize)
        self._voices: tuple[EspeakVoice, ...] | None = None
        self._identifiers: set[str] = set()  # voice identifiers asked for by name already (`require_voice`)

    def _initialize(self) -> tuple[int, str, int]:
        rate = self._lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, self.buffer_ms, os.fsencode(self.data_path), _INITIALIZE_DONT_EXIT
        )
        if rate <= 0:
            raise ModelLoadError(f"espeak_Initialize failed with data at {self.data_path}")
        self._lib.espeak_SetSynthCallback(self._callback)
        version = (self._lib.espeak_Info(None) or b"unknown").decode()
        return rate, version, self._lib.espeak_GetParameter(_PARAMETER_RATE, 0)

    def _call(self, function: Callable[[], T]) -> T:
        """Run `function` (which calls espeak) with the library to itself."""
        if self._active_thread == threading.get_ident():
            raise RuntimeError("espeak cannot be called from its own synth callback")
        with self._lock:
            return function()

    @property
    def streaming_thread(self) -> threading.Thread | None:
        """The thread that runs `synthesize` streams (started by the first one)."""
        return self._streams.thread

    # ---------------------------------------------------------------------------------------------
    # Voices

    def voices(self) -> tuple[EspeakVoice, ...]:
        if self._voices is None:
            self._voices = self._call(self._list_voices)
        return self._voices

    def _list_voices(self) -> tuple[EspeakVoice, ...]:
        table = self._lib.espeak_ListVoices(None)
        voices = []
        for index in range(100_000):
            if not table[index]:
                break
            entry = table[index].contents
            languages, address = [], entry.languages
            while address and ctypes.c_ubyte.from_address(address).value != 0:
                language = ctypes.string_at(address + 1)
                languages.append(language.decode())
                address += 2 + len(language)
            voices.append(EspeakVoice(entry.name.decode(), entry.identifier.decode(), tuple(languages)))
        return tuple(voices)

    def find_voice(self, name: str) -> EspeakVoice | None:
        return find_voice(self.voices(), name)

    def require_voice(self, name: str) -> str:
        """The identifier to load for `name`; EngineError naming it when espeak-ng has no such voice.
        Every synthesis asks with the identifier its engine resolved: one that names itself is
        remembered (at most one entry per voice), since a look-up compares ≈ 70 of the 141 voices,
        16–41 µs a request (benchmarks/SERVER_OVERHEAD.md, 2026-12-06)."""
        if name in self._identifiers:
            return name
        voice = self.find_voice(name)
        if voice is None:
            raise EngineError(f"espeak-ng has no voice or language {name!r}")
        if voice.identifier == name:
            self._identifiers.add(name)
        return voice.identifier

    def _load_voice(self, name: str) -> None:
        """Under `_lock`: make `name` espeak's current voice (a no-op when it already is)."""
        if self._loaded_voice == name:
            return
        if self._lib.espeak_SetVoiceByName(name.encode()) != _EE_OK:
            self._loaded_voice = None
            raise EngineError(f"espeak-ng could not load voice {name!r}")
        self._loaded_voice = name

    # ---------------------------------------------------------------------------------------------
    # Synthesis

    def synthesize_into(
        self,
        text: str,
        sink: Callable[[np.ndarray], bool],
        voice: str = "ko",
        rate_wpm: int | None = None,
    ) -> int:
        """Synthesise on the calling thread: each int16 chunk (read-only) goes to `sink` from inside
        espeak's callback as espeak makes it; `sink` returning False stops espeak at once. What `sink`
        raises is raised here once espeak has returned. Returns the samples espeak made in all."""
        identifier = self.require_voice(voice)
        synthesis = _Synthesis(sink)
        self._call(lambda: self._run_synthesis(text, identifier, rate_wpm, synthesis))
        if synthesis.error is not None:
            raise synthesis.error
        return synthesis.produced_samples

    def _run_synthesis(self, text: str, voice: str, rate_wpm: int | None, synthesis: _Synthesis) -> None:
        """Under `_lock`: one espeak_Synth with `synthesis` receiving its audio."""
        self._load_voice(voice)
        rate = self.default_rate if rate_wpm is None else int(rate_wpm)
        self._lib.espeak_SetParameter(_PARAMETER_RATE, rate, 0)
        data = readable(text).replace("\0", " ").encode("utf-8") + b"\0"
        self._carried.reset()  # the same text, the same audio (`espeak_state`)
        self._active, self._active_thread = synthesis, threading.get_ident()
        try:
            status = self._lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        finally:
            self._active, self._active_thread = None, None
        if status != _EE_OK and not synthesis.stopped:
            raise EngineError(f"espeak_Synth failed with status {status}")

    def _on_audio(self, wav: Any, count: int, events: Any) -> int:
        """The synth callback, on the synthesising thread: 0 = continue, 1 = abort (an int, always)."""
        synthesis = self._active
        if synthesis is None:
            return 1
        if not wav or count <= 0:
            return 1 if synthesis.stopped else 0
        try:
            synthesis.produced_samples += count
            chunk = np.frombuffer(ctypes.string_at(wav, 2 * count), dtype=np.int16)  # one copy
            if synthesis.sink(chunk):
                return 0
        except BaseException as error:  # an exception must not cross the C frame
            synthesis.error = error
        synthesis.stopped = True
        return 1

    def synthesize(self, text: str, voice: str = "ko", rate_wpm: int | None = None) -> SynthesisStream:
        """Stream int16 chunks at `sample_rate` for `text`; `rate_wpm` None is espeak's default rate."""
        identifier = self.require_voice(voice)
        job = StreamJob(text, identifier, rate_wpm, ChunkChannel(), threading.Event(), threading.Event())
        return SynthesisStream(self._streams, job)

    def _run_stream_job(self, job: StreamJob) -> BaseException | None:
        """On the streaming thread: one stream's synthesis into its channel; what its sink raised."""
        synthesis = job.synthesis = _Synthesis(job.channel.put)
        with self._lock:
            self._run_synthesis(job.text, job.voice, job.rate_wpm, synthesis)
        return synthesis.error

    # ---------------------------------------------------------------------------------------------
    # Phonemes

    def phonemize(self, text: str, voice: str) -> str:
        """IPA phonemes for `text` in piper-phonemize style, for phoneme-based tokenizers.

        Clauses keep their punctuation: "." "!" "?" end a sentence (no space follows), "," ";" ":"
        are followed by a space; full-width forms become ASCII. Language switch markers such as "(en)"
        are dropped. Words are separated by spaces, as espeak returns them. The text is read in its
        `text_form.readable` form (composed, full-width digits and letters as ASCII), as in synthesis.
        """
        identifier = self.require_voice(voice)
        return self._call(lambda: self._phonemize(readable(text).replace("\0", " "), identifier))

    def _phonemize(self, text: str, voice: str) -> str:
        """Under `_lock`."""
        self._load_voice(voice)
        data = text.encode("utf-8")
        buffer = ctypes.create_string_buffer(data)
        base = ctypes.addressof(buffer)
        pointer = ctypes.c_void_p(base)
        pieces: list[str] = []
        while pointer.value is not None:
            before = pointer.value - base
            phonemes = self._lib.espeak_TextToPhonemes(ctypes.byref(pointer), _CHARS_UTF8, _PHONEMES_IPA)
            after = len(data) if pointer.value is None else pointer.value - base
            consumed = data[before:after].decode("utf-8", errors="ignore")
            clause = _LANGUAGE_FLAG.sub("", (phonemes or b"").decode("utf-8", errors="replace")).strip()
            mark = clause_punctuation(consumed, final=pointer.value is None)
            if clause or mark:
                pieces.append(clause + mark + (" " if mark in _CLAUSE_PAUSES else ""))
            if after <= before:
                break  # espeak made no progress; never loop forever
        return "".join(pieces).strip()


def clause_punctuation(consumed: str, final: bool) -> str:
    """The ASCII punctuation that ended a clause espeak consumed, or "".

    espeak reads one character past a clause's end, so the end mark is the last punctuation in what it
    consumed; the final clause ends with punctuation only if the text itself does.
    """
    if final:
        tail = consumed.rstrip()
        return _PUNCTUATION.get(tail[-1], "") if tail else ""
    for char in reversed(consumed):
        if char in _PUNCTUATION:
            return _PUNCTUATION[char]
    return ""


_instance: EspeakLibrary | None = None
_instance_lock = threading.Lock()


def get_espeak() -> EspeakLibrary:
    """The process's espeak-ng (created on first use; a failure is raised again on the next call)."""
    global _instance
    with _instance_lock:
        if _instance is None:
            import espeakng_loader

            _instance = EspeakLibrary(espeakng_loader.get_library_path(), _data_path())
        return _instance


def another_espeak(buffer_ms: int = BUFFER_MS) -> EspeakLibrary:
    """A second espeak-ng, independent of `get_espeak()`'s: its own globals, its own lock, so two
    threads synthesise at once. The dynamic loader keeps one instance per path, so the library is
    loaded from a private copy (a fresh 0700 directory: nobody else can put a file there), removed
    again once loaded."""
    import espeakng_loader

    source = espeakng_loader.get_library_path()
    folder = tempfile.mkdtemp(prefix="npu-worker-espeak-")
    try:
        copy = os.path.join(folder, os.path.basename(source))
        shutil.copyfile(source, copy)
        return EspeakLibrary(copy, _data_path(), buffer_ms)
    except OSError as error:
        raise ModelLoadError(f"cannot copy espeak-ng for a second instance: {error}") from error
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _data_path() -> str:
    import espeakng_loader

    try:
        return str(espeakng_loader.get_data_path())
    except RuntimeError as error:
        raise ModelLoadError(f"espeak-ng data missing: {error}") from error
