"""The docs a new engineer follows name what the code has: a static check per map, cheap enough to run always.

When written, they caught: README's API table leaving out fields the bodies carry (`seed`, `ref_text`,
`cached`, the Redis `/health` fields), two modules no row named, `GET /openapi.json` and the `/ws` messages'
fields missing from docs/protocol.md, `PROTOCOL §` citations, and a token in a unit's `Environment=` line. The
error-table and flag checks found their maps true and keep them so."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import msgspec
import pytest

from npu_worker import errors, openapi
from npu_worker.http_compat.bodies import Health, SynthResult
from npu_worker.openai_compat.request import SpeechBody
from npu_worker.protocol import BatchBody, SynthBody
from npu_worker.ws_messages import WsSynth, WsSynthBatch

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "npu_worker"


def _text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_every_module_is_named_in_the_architecture_map():
    """A module of a subpackage is named on a line of docs/architecture.md that names its folder (the
    ZipVoice pipeline's parts: or in docs/zipvoice.md); a top-level module anywhere in the map."""
    architecture, zipvoice = (
        _text("docs/architecture.md").splitlines(),
        _text("docs/zipvoice.md").splitlines(),
    )
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        folder = path.parent.relative_to(PACKAGE).as_posix()
        lines = architecture if folder == "." else [line for line in architecture if f"{folder}/" in line]
        if path.parent.name == "zipvoice":
            lines = lines + zipvoice
        if not any(re.search(rf"(?<![\w.]){re.escape(path.stem)}(\.py)?\b", line) for line in lines):
            missing.append(str(path.relative_to(PACKAGE)))
    assert not missing, f"modules no docs map names: {missing}"


def _error_table() -> dict[str, str]:
    protocol = _text("docs/protocol.md")
    table = protocol[protocol.index("| name | code | when |") : protocol.index("A request-level problem")]
    rows: dict[str, str] = {}
    for line in table.strip().splitlines()[2:]:
        names, code = line.split("|")[1:3]
        codes = re.findall(r"\d{3}|—", code)
        for i, name in enumerate(re.findall(r"`(\w+)`", names)):
            rows[name] = codes[min(i, len(codes) - 1)]
    return rows


def _named_errors() -> dict[str, int]:
    return {
        cls.name: cls.http_status
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.WorkerError) and cls is not errors.WorkerError
    }


def test_the_protocols_error_table_names_each_error_with_its_status():
    code, table = _named_errors(), _error_table()
    assert set(table) <= set(code), f"errors the table names that the code lacks: {set(table) - set(code)}"
    wrong = {
        name: (said, code[name]) for name, said in table.items() if said != "—" and int(said) != code[name]
    }
    assert not wrong, f"(table, code) status: {wrong}"
    protocol = _text("docs/protocol.md")
    unnamed = [name for name in code if f"`{name}`" not in protocol]
    assert not unnamed, f"errors docs/protocol.md never names: {unnamed}"


def _glance_row(route: str) -> str:
    readme = _text("README.md")
    section = readme[readme.index("## API at a glance") : readme.index("## Configure")]
    (row,) = [line for line in section.splitlines() if line.startswith(f"| `{route}` |")]
    return row


@pytest.mark.parametrize(
    ("route", "structs", "not_http"),
    [
        ("GET /health", (Health,), ()),
        ("POST /synth", (SynthBody, SynthResult), ()),
        ("POST /synth_batch", (BatchBody,), ("audio",)),  # `audio` is the WebSocket message's field
        ("POST /v1/audio/speech", (SpeechBody,), ()),
    ],
)
def test_readmes_api_table_names_every_field_of_the_body(
    route: str, structs: tuple[type[msgspec.Struct], ...], not_http: tuple[str, ...]
):
    named = set(re.findall(r"\w+", _glance_row(route)))
    fields = {field for struct in structs for field in struct.__struct_fields__} - set(not_http)
    assert fields <= named, f"README's {route} row leaves out {sorted(fields - named)}"


def test_the_protocol_names_every_route_of_the_api():
    """The routes of the served OpenAPI document (which tests/test_openapi.py ties to the app's router)."""
    protocol = _text("docs/protocol.md")
    player = {"/", "/{name}"}  # the page's static files: docs/player.md
    missing = [
        f"{method.upper()} {path}"
        for path, item in openapi.document()["paths"].items()
        for method in item
        if path not in player and path not in protocol and path.replace("{job_id}", "{id}") not in protocol
    ]
    assert not missing, f"routes docs/protocol.md never names: {missing}"


def test_no_unit_shown_passes_the_token_in_an_environment_line():
    """systemd shows a unit's `Environment=` values to every local user (`systemctl show`): the token goes in
    the `EnvironmentFile=` (mode 640), as deploy/npu-worker.service reads it."""
    texts = {name: _text(name) for name in ("README.md", "deploy/npu-worker.service")}
    texts.update(
        {f"docs/{path.name}": path.read_text(encoding="utf-8") for path in (ROOT / "docs").glob("*.md")}
    )
    leaks = [
        f"{name}: {line.strip()}"
        for name, text in texts.items()
        for line in text.splitlines()
        if re.match(r"\s*Environment=.*NPU_WORKER_TOKEN", line)
    ]
    assert not leaks, f"a token in a unit's Environment= line: {leaks}"


def _subcommand_flags() -> dict[str, set[str]]:
    from npu_worker.cli import build_parser

    def parser_of(name: str) -> argparse.ArgumentParser:
        # the argv decides whether make-test-model's own options load
        return build_parser([name])._subparsers._group_actions[0].choices[name]  # type: ignore[union-attr]

    names = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    return {
        name: {option for action in parser_of(name)._actions for option in action.option_strings}
        for name in names
    }


def test_every_flag_a_doc_gives_a_subcommand_is_one_it_takes():
    """`npu-worker SUB … --flag` in README and docs/*.md, up to the end of its code span or line."""
    flags = _subcommand_flags()
    names = ["README.md", *(f"docs/{path.name}" for path in sorted((ROOT / "docs").glob("*.md")))]
    unknown = []
    for name in names:
        for command in re.finditer(rf"npu-worker ({'|'.join(flags)})\b([^`\n]*)", _text(name)):
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", command.group(2)):
                if flag not in flags[command.group(1)]:
                    unknown.append(f"{name}: npu-worker {command.group(1)} {flag}")
    assert not unknown, f"flags the subcommand does not take: {unknown}"


def test_every_flag_a_subcommand_takes_is_one_a_doc_names():
    """The other way round: `--help` lists it, so README.md or a docs/*.md page names it, by one of its
    spellings (`-o` for `--output`). The `--no-` forms of serve's yes/no settings were in no doc: an
    operator could not tell how to turn one off."""
    from npu_worker.cli import build_parser

    pages = [
        _text("README.md"),
        *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))),
    ]
    named = set(re.findall(r"(?<![\w-])--?[a-z][a-z0-9-]*(?![\w-])", "\n".join(pages)))
    unnamed = []
    for name in build_parser()._subparsers._group_actions[0].choices:  # type: ignore[union-attr]
        command = build_parser([name])._subparsers._group_actions[0].choices[name]  # type: ignore[union-attr]
        for action in command._actions:
            spellings = [option for option in action.option_strings if option not in ("-h", "--help")]
            unnamed += [f"npu-worker {name} {option}" for option in spellings if not set(spellings) & named]
            if isinstance(action, argparse.BooleanOptionalAction):  # its `--no-` form turns it off
                unnamed += [
                    f"npu-worker {name} {o}" for o in spellings if o.startswith("--no-") and o not in named
                ]
    assert not unnamed, f"flags no doc names: {sorted(set(unnamed))}"


def test_every_env_var_the_suite_reads_is_one_a_doc_names():
    """The suite's own knobs (`os.environ.get("NPU_WORKER_…")` in tests/): a new engineer on a slow
    machine could not learn `NPU_WORKER_TEST_TIME_SCALE` but from tests/timing.py."""
    docs = "\n".join(
        [_text("README.md"), *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))]
    )
    read = {
        name
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for name in re.findall(r"os\.environ\.get\(\"(NPU_WORKER_\w+)\"", path.read_text(encoding="utf-8"))
    }
    assert read and not {name for name in read if name not in docs}, sorted(
        read - set(re.findall(r"\w+", docs))
    )


def test_the_protocols_websocket_section_names_every_field_of_its_messages():
    protocol = _text("docs/protocol.md")
    section = protocol[protocol.index("## WebSocket `GET /ws`") : protocol.index("## Named voices")]
    named = set(re.findall(r"\w+", section))
    fields = {field for struct in (WsSynth, WsSynthBatch) for field in struct.__struct_fields__}
    assert fields <= named, f"the /ws section leaves out {sorted(fields - named)}"


def test_no_doc_cites_what_a_clone_does_not_have():
    """Not the user's interface document's sections (`PROTOCOL §6`: not in the repository; docs/protocol.md
    is its reader's copy), nor a path of the machine the docs were written on."""
    names = [
        "README.md",
        "docs/openapi.yaml",
        *(f"docs/{path.name}" for path in sorted((ROOT / "docs").glob("*.md"))),
    ]
    outside = re.compile(r"PROTOCOL §|\.\./shared/|/work/|/home/\w")
    cited = [f"{name}: {found.group(0)}" for name in names for found in outside.finditer(_text(name))]
    assert not cited, f"citations a clone cannot follow: {cited}"
