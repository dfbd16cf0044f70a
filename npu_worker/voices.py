"""The voice library: named voices looked up, stored, pruned and deleted.

A voice lives as `<name>.wav` + `<name>.txt` in `<state>/voices` (uploads; persisted across restarts) or
in extra read-only directories; `default` is the worker's `--ref-wav`. What a name and a listed voice are
is voice_names.py's, how an upload's audio is checked voice_upload.py's. Every method touches the
filesystem: call them off the event loop. No aiohttp here.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from .config import Settings
from .errors import counted
from .files import LinkRefused
from .other_writers import shared_with_others
from .paths import resolve_ref_wav
from .protocol import (
    MAX_TRANSCRIPT_CHARS,
    BadRequest,
    StateUnavailable,
    SynthParams,
    TooManyVoices,
    UnknownVoice,
    VoiceExists,
    VoiceInUse,
    VoiceNotFound,
    WorkerError,
)
from .voice_folder import VoiceFolder, changing_folder, holds_own_file
from .voice_names import (
    DEFAULT_VOICE,
    INLINE_PREFIX,
    NamedVoice,
    check_voice_name,
    is_voice_name,
    read_transcript,
)
from .voice_upload import INLINE_REF_AUDIO, UploadLimits, upload_wav
from .voice_upload import decode_upload as decode_upload  # (callers import it from here)

log = logging.getLogger(__name__)
INLINE_IN_USE_SECONDS = 120.0  # an inline voice used this recently is not pruned (its request runs) ...
INLINE_IN_USE_FACTOR = 4  # ... while fewer than this many times `inline_keep` are: a flood of new audio
# (19 MB/s from one stream socket's session.config on a 2-core VM) would otherwise fill the disk in 2 min


class VoiceLibrary:
    """Stored voices (uploads), extra directories (read-only) and `default`, looked up by name."""

    def __init__(
        self,
        store_dir: Path,
        extra_dirs: Sequence[str] = (),
        default_wav: str | None = None,
        default_text: str | None = None,
        inline_keep: int = 32,
        max_voices: int = 1000,
    ) -> None:
        self.store_dir = Path(store_dir)
        self.max_voices = max_voices
        self.inline_keep = inline_keep
        self.inline_dir = self.store_dir / "inline"
        self.extra_dirs = tuple(Path(d).expanduser() for d in extra_dirs)
        for directory in self.extra_dirs:  # looked in at each request: a mount may come later, so no error
            if not directory.is_dir():
                log.warning(
                    "voices directory %s is not a directory (yet): no voice is found there", directory
                )
        self.default = NamedVoice(DEFAULT_VOICE, default_wav, default_text, "default")
        self._refused: set[Path] = set()  # extra directories already warned about
        self._uses = threading.Lock()
        self._admitting: Counter[str] = Counter()  # `ref_wav`s of jobs being checked and queued

    @classmethod
    def from_settings(cls, settings: Settings) -> VoiceLibrary:
        return cls(
            settings.resolved_state_dir() / "voices",
            settings.voices_dir,
            settings.ref_wav,
            settings.ref_text,
            max_voices=settings.max_voices,
        )

    # -- lookup --------------------------------------------------------------------------------

    def _in(self, directory: Path, name: str, source: str) -> NamedVoice | None:
        if source == "directory" and not self._trusted(directory):
            return None
        wav = directory / f"{name}.wav"
        own = {"uploaded": (wav.name,), "inline": (self.inline_dir.name, wav.name)}.get(source)
        if not (wav.is_file() if own is None else holds_own_file(self.store_dir, *own)):
            return None
        return NamedVoice(name, str(wav.resolve()), read_transcript(wav.with_suffix(".txt")), source)

    def _trusted(self, directory: Path) -> bool:
        """An extra voices directory counts only while no one but the worker's user and root can change
        it: a local user who could put files there could list any file the worker can read as a
        transcript, or plant a FIFO that hangs every lookup."""
        if not directory.is_dir():
            return False
        why = shared_with_others(directory)
        if why is not None and directory not in self._refused:
            self._refused.add(directory)
            log.warning("voices directory %s is ignored: %s", directory, why)
        return why is None

    def find(self, name: str) -> NamedVoice | None:
        if name == DEFAULT_VOICE:
            return self.default
        if not is_voice_name(name):
            return None
        if name.startswith(INLINE_PREFIX):
            return self._in(self.inline_dir, name, "inline")
        found = self._in(self.store_dir, name, "uploaded")
        for directory in self.extra_dirs:
            found = found or self._in(directory, name, "directory")
        return found

    def require(self, name: str) -> NamedVoice:
        voice = self.find(name)
        if voice is None:
            raise UnknownVoice(f"no voice named {name[:80]!r}; GET /v1/audio/voices lists them")
        return voice

    def all(self) -> list[NamedVoice]:
        voices = [self.default]
        seen = {DEFAULT_VOICE}
        for directory, source in [(self.store_dir, "uploaded"), *((d, "directory") for d in self.extra_dirs)]:
            for wav in sorted(directory.glob("*.wav")) if directory.is_dir() else []:
                voice = self._in(directory, wav.stem, source) if is_voice_name(wav.stem) else None
                if voice is not None and voice.name not in seen:
                    seen.add(voice.name)
                    voices.append(voice)
        return voices

    def resolve_params(
        self, params: SynthParams, roots: Sequence[str], forbidden: Sequence[str] = ()
    ) -> SynthParams:
        """`ref_wav` as a voice name → that voice's wav and transcript; otherwise a checked path.

        A stored voice is the worker's own file, so it needs no allowed-root check; the caller's
        `ref_text` still wins over the stored transcript."""
        if params.ref_wav is None:
            return params
        name = params.ref_wav
        if is_voice_name(name):  # never a path: a voice name has no `/` and starts with no `~`
            voice = self.find(name)
            if voice is not None:
                if voice.source == "inline":  # a job speaking with it is a use, as storing it again is
                    with contextlib.suppress(FileNotFoundError):
                        os.utime(self.inline_dir / f"{name}.txt")
                return replace(params, ref_wav=voice.wav_path, ref_text=params.ref_text or voice.text)
            raise UnknownVoice(
                f"no stored voice is named {name!r}; ref_wav takes a voice's name or an absolute path"
            )
        return replace(params, ref_wav=resolve_ref_wav(name, roots, forbidden))

    # -- changes -------------------------------------------------------------------------------

    def _refuse_taken(self, name: str) -> None:
        """VoiceExists for a name in use, with what frees it: only an upload can be deleted."""
        voice = self.default if name == DEFAULT_VOICE else self.find(name)
        if voice is None:
            return
        how = {
            "default": "it is the worker's own voice (--ref-wav); choose another name",
            "directory": "it comes from a --voices-dir, read-only over HTTP; choose another name",
        }.get(voice.source, "delete it first")
        raise VoiceExists(f"a voice named {name!r} exists; {how}", param="name")

    def add(self, name: str, data: bytes, ref_text: str, limits: UploadLimits) -> NamedVoice:
        """Decode, check and store an upload as 16-bit mono wav + transcript (atomic writes)."""
        check_voice_name(name)
        if name.startswith(INLINE_PREFIX):
            raise BadRequest(f"voice names starting with {INLINE_PREFIX!r} are reserved", param="name")
        self._refuse_taken(name)
        text = ref_text.strip()
        if not text or len(text) > MAX_TRANSCRIPT_CHARS:
            raise BadRequest(
                f"ref_text (the transcript of the audio) needs 1-{MAX_TRANSCRIPT_CHARS} characters",
                param="ref_text",
            )
        wav = upload_wav(data, limits)
        with self._changing() as store:  # two uploads under one name: one gets 409, never a mix of both
            self._refuse_taken(name)
            if len(store.names(".wav")) >= self.max_voices:  # each up to 5 MiB, forever
                stored = counted(self.max_voices, "voice is stored", "voices are stored")
                raise TooManyVoices(f"{stored}; delete one first")
            _store(store, name, text, wav)
            found = self.find(name)
        if found is None:  # the folder was moved away or replaced by a link while it was written
            raise StateUnavailable(
                "the worker's voice folder changed while the voice was stored; retry later"
            )
        return found

    @contextlib.contextmanager
    def admitting(self, ref_wav: str | None) -> Iterator[None]:
        """While a job whose `ref_wav` names a voice is checked and queued, that voice is not deleted:
        nothing lists the job as its user before it is queued."""
        if ref_wav is None:
            yield
            return
        with self._uses:
            self._admitting[ref_wav] += 1
        try:
            yield
        finally:
            with self._uses:
                self._admitting[ref_wav] -= 1
                if not self._admitting[ref_wav]:
                    del self._admitting[ref_wav]

    @contextlib.contextmanager
    def _changing(self) -> Iterator[VoiceFolder]:
        """The voice folder, for one change of the stored voices at a time, across threads and the worker
        processes that share it (its lock file, `folder_lock.py`). It is opened without following a link and
        every file is made, renamed and removed relative to it (`voice_folder.py`): a voice folder
        that is a symbolic link, planted before or while a change runs, is never written or removed
        through."""
        with contextlib.ExitStack() as stack:
            try:
                store = stack.enter_context(changing_folder(self.store_dir))
            except LinkRefused:
                raise _linked(self.store_dir) from None
            except OSError as exc:  # a file where the folder should be was a 500 on each upload and delete
                log.error("voice folder %s cannot be made or used: %s", self.store_dir, exc)
                raise StateUnavailable(
                    f"the worker's voice folder cannot be used ({exc.strerror or exc}); "
                    "its operator must make it a folder the worker owns"
                ) from None
            yield store

    @contextlib.contextmanager
    def _inline(self, store: VoiceFolder, *, create: bool) -> Iterator[VoiceFolder | None]:
        """`voices/inline`, opened inside the open voice folder without following a link. Anything else
        there (a file, a FIFO) is a named 503: it was a NotADirectoryError for each inline `ref_audio`,
        and at start-up (`remove_crash_leftovers`) it left every kept job unread."""
        with contextlib.ExitStack() as stack:
            try:
                inline = stack.enter_context(store.sub(self.inline_dir.name, create=create))
            except LinkRefused:
                raise _linked(self.inline_dir) from None
            except OSError as exc:
                log.error("voice folder %s cannot be made or used: %s", self.inline_dir, exc)
                raise StateUnavailable(
                    f"the worker's folder for inline reference audio cannot be used ({exc.strerror or exc}); "
                    "its operator must make it a folder the worker owns"
                ) from None
            yield inline

    def remove_crash_leftovers(self) -> int:
        """Temp files of uploads a `kill -9` cut, removed under the change lock: start-up runs this while
        the socket already serves, and an upload in progress here or in a worker sharing the folder
        holds the lock until its temp file is renamed."""
        if not self.store_dir.is_dir():  # none uploaded yet, or no folder: the uploads say so, not start-up
            return 0
        try:
            with self._changing() as store, self._inline(store, create=False) as inline:
                removed = store.remove_parts() + (inline.remove_parts() if inline else 0)
        except (
            StateUnavailable
        ):  # a linked or unusable voice folder (logged): uploads are refused, start-up goes on
            return 0
        if removed:
            log.info("removed %d temp file(s) of a voice upload cut short", removed)
        return removed

    def store_inline(
        self,
        data: bytes,
        ref_text: str,
        limits: UploadLimits,
        user: Callable[[str], str | None] = lambda wav_path: None,
        wav: bytes | None = None,
    ) -> str:
        """A request's inline reference audio as a voice named by its content, so the engine's prompt
        cache (keyed by file and transcript) computes its features once however often it is sent.

        Only the `inline_keep` most recently used are kept (their transcript's mtime marks the use; the
        wav is left untouched, since its mtime is part of the prompt cache's key), so callers sending new
        audio every time cannot fill the disk. `wav`: `data` already decoded (`upload_wav`), as a speech
        batch's default audio is once for all its items, whatever transcript each gives."""
        # (the audio's length first: `data + b"\0" + text` named `(wav + b"\0가", "나")` and `(wav, "가\0나")`
        # alike, so one caller's audio and transcript answered for another's)
        key = hashlib.sha256(len(data).to_bytes(8, "big"))
        key.update(data)  # (hashed where it lies: a key of `length + data + text` copied the audio)
        key.update(ref_text.strip().encode("utf-8", "surrogatepass"))
        digest = key.hexdigest()[:20]
        name = INLINE_PREFIX + digest
        transcript = self.inline_dir / f"{name}.txt"
        if self.find(name) is not None:
            with contextlib.suppress(FileNotFoundError):  # else pruned meanwhile: stored again below
                os.utime(transcript)
                return name
        wav = upload_wav(data, limits, INLINE_REF_AUDIO) if wav is None else wav
        with self._changing() as store, self._inline(store, create=True) as inline:
            assert inline is not None  # made if missing
            if inline.holds(f"{name}.wav"):
                with contextlib.suppress(FileNotFoundError):  # else half pruned: stored again below
                    inline.touch(f"{name}.txt")
                    return name
            _store(inline, name, ref_text.strip(), wav)
            self._prune_inline(inline, user)
        return name

    def _prune_inline(self, inline: VoiceFolder, user: Callable[[str], str | None]) -> None:
        """Keep the `inline_keep` most recently used, and up to INLINE_IN_USE_FACTOR times as many of
        those used in the last INLINE_IN_USE_SECONDS (a request that has just stored or touched one is
        still to read it when its section runs) or that a queued or running job speaks with (`user`)."""
        stamps = []
        recent = time.time() - INLINE_IN_USE_SECONDS
        for transcript in inline.names(".txt"):
            if transcript.startswith(INLINE_PREFIX):
                with contextlib.suppress(FileNotFoundError):
                    stamps.append((inline.mtime(transcript), transcript))
        bound = INLINE_IN_USE_FACTOR * self.inline_keep
        for position, (used, transcript) in enumerate(sorted(stamps, reverse=True)):
            wav = transcript.removesuffix(".txt") + ".wav"
            if position < self.inline_keep or (
                position < bound
                and (used > recent or user(str((self.inline_dir / wav).resolve())) is not None)
            ):
                continue
            inline.remove(wav)
            inline.remove(transcript)

    def delete(self, name: str, user: Callable[[str], str | None] = lambda wav_path: None) -> None:
        """Remove an uploaded voice; `default` and directory voices are not deletable here. `user(path)`:
        who speaks with the voice at `path` (`Scheduler.voice_user`), whose remaining work it would fail."""
        check_voice_name(name)
        wav = self.store_dir / f"{name}.wav"
        with self._changing() as store, self._uses:
            if name == DEFAULT_VOICE or not store.holds(wav.name):
                raise VoiceNotFound(f"no uploaded voice named {name!r}")
            who = "a job being queued" if self._admitting[name] else user(str(wav.resolve()))
            if who is not None:
                raise VoiceInUse(f"voice {name!r} is in use by {who}; delete it once that has ended")
            store.remove(wav.name)
            store.remove(f"{name}.txt")


def _linked(folder: Path) -> WorkerError:
    """A voice folder that is a symbolic link (`voices` or `voices/inline` pointing at another folder):
    each upload wrote its files there, each delete removed `<name>.wav` there, the inline prune emptied
    it. The caller is told the voice store is unusable, not where it points; the log names it."""
    log.error("voice folder %s is a symbolic link: no voice is written or removed through it", folder)
    return StateUnavailable(
        "the worker's voice folder is a symbolic link, which it never writes through; "
        "its operator must replace the link with a folder"
    )


def _store(folder: VoiceFolder, name: str, text: str, wav: bytes) -> None:
    """A new voice's transcript, then its wav (atomic writes). A full disk (any OSError: it is the
    worker's disk, not the caller's upload) leaves neither and is a named 503, not an internal error."""
    try:
        folder.write(f"{name}.txt", (text + "\n").encode("utf-8"))
        folder.write(f"{name}.wav", wav)
    except OSError as exc:
        for file in (f"{name}.wav", f"{name}.txt"):
            with contextlib.suppress(OSError):
                folder.remove(file)
        log.error("could not store voice %s in %s: %s", name, folder.path, exc)
        raise StateUnavailable(
            f"the voice could not be stored in the worker's state directory ({exc.strerror or exc}); retry later"
        ) from None
