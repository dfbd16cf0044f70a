"""A folder named otherwise than the worker's own spelling is the same folder: on a case-insensitive
file system (macOS's default, FAT, a casefolded disk) `/data/STATE` is `/data/state`, which realpath
leaves as written; so is a bind mount. The path checks compare such folders by identity.

No case-insensitive file system can be made here without privileges, so the alias is a bind mount in a
mount namespace of the test's own (`unshare`), which realpath leaves as written in the same way; the
checks run in a child process inside it. Skipped where unshare is refused (no user namespaces, not root).

A link is the alias a caller can make: folders compared by identity follow it, so a path the worker
stored at admission is checked by spelling alone afterwards (the last tests, which need no namespace)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]

# Run inside the namespace: argv[1] the allowed root, argv[2] a folder outside it; prints what happened.
CHECKS = r"""
import json, os, subprocess, sys
from npu_worker.paths import PathPolicy
from npu_worker.protocol import OutputPathNotAllowed

root, outside = sys.argv[1], sys.argv[2]
state, voices = os.path.join(root, "state"), os.path.join(root, "voices")
for folder in (state, voices, os.path.join(root, "STATE"), os.path.join(root, "VOICES")):
    os.makedirs(folder, exist_ok=True)
with open(os.path.join(voices, "ref.wav"), "wb") as wav:
    wav.write(b"the operator's voice")
for real, alias in ((state, "STATE"), (voices, "VOICES"), (root, outside)):
    subprocess.run(["mount", "--bind", real, os.path.join(root, alias)], check=True)
policy = PathPolicy((root,), state, voice_dirs=(voices,), voice_files=(os.path.join(voices, "ref.wav"),))

def admitted(path):
    try:
        return policy.resolve_output_path(path)
    except OutputPathNotAllowed as exc:
        return "refused: " + str(exc)

def written(path):
    try:
        policy.write_output(path, b"a caller's wav")
        return "written"
    except OutputPathNotAllowed as exc:
        return "refused: " + str(exc)

print(json.dumps({
    "state": admitted(os.path.join(root, "STATE", "jobs", "x", "job.json")),
    "state_written": written(os.path.join(root, "STATE", "cache.wav")),
    "voice": admitted(os.path.join(root, "VOICES", "ref.wav")),
    "root": admitted(os.path.join(outside, "sub", "a.wav")),
}))
"""


def namespace_command(folder: Path) -> list[str] | None:
    """How to enter a mount namespace of the test's own where a bind mount can be made: as any user in
    a user namespace, or (root where user namespaces are off, as in some CI containers) a mount
    namespace alone; None where neither is allowed."""
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return None
    for command in (["unshare", "--user", "--map-root-user", "--mount"], ["unshare", "--mount"]):
        probe = [*command, "mount", "--bind", str(folder), str(folder)]
        if subprocess.run(probe, capture_output=True, timeout=seconds(10)).returncode == 0:
            return command
    return None


@pytest.fixture(scope="module")
def aliased(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("aliases")
    if (namespace := namespace_command(base)) is None:
        pytest.skip("no mount namespace here (unshare refused)")
    root, outside = (base / "root").resolve(), (base / "elsewhere").resolve()
    root.mkdir()
    outside.mkdir()
    command = [*namespace, sys.executable, "-c", CHECKS]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [*command, str(root), str(outside)], capture_output=True, text=True, env=env, timeout=seconds(60)
    )
    assert done.returncode == 0, done.stderr
    return root, outside, json.loads(done.stdout)


def test_the_state_dir_under_another_name_is_refused(aliased):
    root, _, seen = aliased
    assert seen["state"].startswith("refused: ") and "inside the worker's state directory" in seen["state"]
    assert seen["state_written"].startswith("refused: ")
    assert not (root / "state" / "cache.wav").exists()


def test_an_operators_voice_under_another_name_is_refused(aliased):
    root, _, seen = aliased
    assert seen["voice"].startswith("refused: ") and "one of the worker's voices" in seen["voice"]
    assert (root / "voices" / "ref.wav").read_bytes() == b"the operator's voice"


def test_a_root_under_another_name_is_a_root_spelt_as_the_worker_spells_it(aliased):
    root, _, seen = aliased
    assert seen["root"] == str(root / "sub" / "a.wav")


@pytest.mark.parametrize("voice_folder", ["operator", "uploads"])
def test_a_callers_folder_swapped_for_a_link_to_a_voice_folder_is_not_a_stored_voice(tmp_path, voice_folder):
    """Admitted as a file in a root, the caller's folder then becomes a link to a folder of voices (the
    operator's --voices-dir, the uploads in the state dir): taken for a stored voice by identity, it was
    read with links followed, so a link flipped between that folder and any other read files outside
    every root. Now refused at the recheck and at the read, as any link on the way is."""
    from npu_worker.paths import PathPolicy
    from npu_worker.protocol import RefWavNotAllowed

    root, state, operator = tmp_path / "root", tmp_path / "state", tmp_path / "voices"
    policy = PathPolicy((str(root),), str(state), voice_dirs=(str(operator),))
    voices = operator if voice_folder == "operator" else Path(policy.voices_root)
    for folder in (root / "mine", voices):
        folder.mkdir(parents=True)
        (folder / "x.wav").write_bytes(b"RIFF " + folder.name.encode())
    path = policy.resolve_ref_wav(str(root / "mine" / "x.wav"))
    (root / "mine" / "x.wav").unlink()
    (root / "mine").rmdir()
    (root / "mine").symlink_to(voices, target_is_directory=True)
    with pytest.raises(RefWavNotAllowed):
        policy.check_ref_wav(path)
    with pytest.raises(RefWavNotAllowed, match="symbolic link"):  # (the caller's link: a 400)
        policy.read_reference(path, 1 << 20)


def test_a_folder_found_by_identity_is_spelt_as_the_root_it_is(tmp_path):
    """The identity compare itself, wherever unshare is refused: a link is followed by the stat it makes
    (as a case-insensitive name or a bind mount is), so a path through one lies in the root it reaches,
    in the deepest root it reaches, and is said in that root's spelling; a path through none lies in none."""
    from npu_worker.paths import alias_under, is_under

    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    (tmp_path / "other").symlink_to(outer, target_is_directory=True)
    (tmp_path / "OTHER").symlink_to(inner, target_is_directory=True)
    roots = (str(outer), str(inner))
    assert alias_under(str(tmp_path / "other" / "inner" / "new" / "a.wav"), roots) == str(
        inner / "new" / "a.wav"
    )
    assert alias_under(str(tmp_path / "other" / "x.wav"), roots) == str(outer / "x.wav")
    assert alias_under(str(tmp_path / "OTHER"), roots) == str(inner)
    assert is_under(str(tmp_path / "OTHER" / "a.wav"), (str(inner),))
    assert alias_under(str(tmp_path / "a.wav"), roots) is None
    assert not is_under(str(tmp_path / "missing" / "outer" / "a.wav"), roots)
