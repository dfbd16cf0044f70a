"""The repository stands alone: no file points at documents or data outside it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Names of the planning documents and the data folder that sit beside the repository, never in it.
OUTSIDE = (
    "ZIPVOICE" + ".md",
    "DESIGN" + ".md",
    "PROTOCOL" + ".md",
    "../" + "shared",
    "shared" + "/data",
    "shared" + "/seeds",
    "DESIGN" + " rule",
)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    suffixes = {".py", ".md", ".js", ".mjs", ".html", ".css", ".toml", ".json", ".service", ""}
    return [REPO / name for name in listed.stdout.splitlines() if Path(name).suffix in suffixes]


def test_no_file_cites_documents_or_data_outside_the_repository():
    found = []
    for path in tracked_text_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(REPO)}: {name}" for name in OUTSIDE if name in text]
    assert found == []
