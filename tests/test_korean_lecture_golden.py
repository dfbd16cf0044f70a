"""The 39 sections of the shipped Korean lecture read byte for byte as `tests/golden/korean_lecture_spoken.json`
holds: a rule of the Korean reading that changes a real slide's words changes its audio, which the synthesis cache
would keep serving unless `AUDIO_REVISION` is raised (`espeak_revision.py`, `zipvoice/audio_identity.py`). When a change is
meant, raise both and write the file anew:

    PYTHONPATH=. python -c "import tests.test_korean_lecture_golden as g; g.write_golden()"
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from npu_worker.engine.korean_reading import spoken_form

GOLDEN = Path(__file__).resolve().parent / "golden" / "korean_lecture_spoken.json"


def lecture_sections() -> list[str]:
    raw = resources.files("npu_worker.bench").joinpath("lecture_ko_39.json").read_text(encoding="utf-8")
    return [section["text"] for section in json.loads(raw)["sections"]]


def write_golden() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    golden["spoken"] = [spoken_form(text, "ko") for text in lecture_sections()]
    GOLDEN.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


@pytest.mark.parametrize("index", range(39))
def test_each_lecture_section_reads_as_the_golden_says(index):
    sections = lecture_sections()
    assert len(sections) == 39
    said = json.loads(GOLDEN.read_text(encoding="utf-8"))["spoken"]
    assert spoken_form(sections[index], "ko") == said[index]
