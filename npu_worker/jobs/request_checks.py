"""What a request names, checked and resolved before its job is queued (blocking: off the loop, but
for a preview that names nothing to check): the engine's language check, once per language; a voice
name made its stored files, and the engine's voice check; each section's output file resolved under
the allowed roots, or its default in the state dir, two sections writing one file refused.

Apart from the scheduler, which only wires the parts: the local and the Redis scheduler check alike."""

from __future__ import annotations

from ..engine.base import Engine, check_language, check_voice
from ..paths import PathPolicy
from ..protocol import BadRequest, BatchRequest, SynthParams
from ..voices import VoiceLibrary
from .journal import Journal
from .model import Job, Section

# Language spellings remembered as accepted: `lang` is any string up to 32 characters and an engine
# may take many spellings of one language ("ko-x1", "ko-x2", ...), so the set is emptied when full.
LANGS_KEPT = 64


class RequestChecks:
    """One scheduler's checks; `langs`, the languages its engine accepted, lets a preview in a known
    language be admitted on the loop."""

    def __init__(self, voices: VoiceLibrary, paths: PathPolicy) -> None:
        self.voices = voices
        self.paths = paths
        self.langs: set[str] = set()  # languages the engine accepted (checked off the loop)

    def params(self, engine: Engine | None, params: SynthParams) -> SynthParams:
        """Blocking: the engine's language check (once per language), then a voice name made its
        stored wav and a path checked (it is synthesised as checked)."""
        if engine is not None and params.lang not in self.langs:
            check_language(engine, params.lang)
            if len(self.langs) >= LANGS_KEPT:
                self.langs.clear()
            self.langs.add(params.lang)
        resolved = self.voices.resolve_params(params, self.paths.roots, (self.paths.state_dir,))
        if engine is not None:
            check_voice(engine, resolved.ref_wav)
        return resolved

    def sections(self, job: Job, request: BatchRequest, journal: Journal | None) -> list[Section]:
        """The job's sections with their files resolved; two that would write one file are refused
        (the second would replace the first's audio, both reported `ok`)."""
        sections = [self._section(job, s.idx, s.text, s.output_path, journal) for s in request.sections]
        writers: dict[str, int] = {}
        for section in sections:
            if section.output_path is None:
                continue
            first = writers.setdefault(section.output_path, section.idx)
            if first != section.idx:
                message = f"sections {first} and {section.idx} both write {section.output_path}"
                raise BadRequest(message, param="output_path")
        return sections

    def _section(
        self, job: Job, idx: int, text: str, output_path: str | None, journal: Journal | None
    ) -> Section:
        if output_path is not None:
            output_path = self.paths.resolve_output_path(output_path)
        elif job.persisted:
            assert journal is not None
            output_path = journal.default_output(job.id, idx)
        return Section(idx, text, output_path)
