"""What `prepare`, `make-test-model` and `serve` trust in a model folder: nothing another local user
could put there (a planted link, a vocoder beside the model in /tmp, a manifest naming paths elsewhere)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from npu_worker.engine import qnn_targets
from npu_worker.engine.zipvoice import model_files, prepare, prepared
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.simple_decoder import write_simple_decoder

SMALL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "zipvoice_small_structure"
TINY = SMALL.with_name("zipvoice_tiny_structure")


def open_to_all(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o1777)  # sticky, as /tmp: others may still add files
    return folder


def test_prepare_refuses_an_out_folder_others_can_write_in_or_holding_other_files(tmp_path):
    with pytest.raises(ModelLoadError, match="others can write in"):
        prepare.check_out_dir(open_to_all(tmp_path / "open"))
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    with pytest.raises(ModelLoadError, match="holds other files"):
        prepare.check_out_dir(home)
    earlier = tmp_path / "earlier"
    (earlier / prepared.CONTEXT_DIR).mkdir(parents=True)  # a half-prepared folder: prepared again
    for fine in (tmp_path / "new", earlier):
        prepare.check_out_dir(fine)


def test_the_prepare_command_touches_nothing_in_a_refused_out_folder(tmp_path):
    out = open_to_all(tmp_path / "out")
    (out / "manifest.json").write_text("{}")
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(SMALL), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "others can write in" in done.stderr, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]


def test_a_prepare_refused_for_its_buckets_keeps_the_earlier_prepared_folder(tmp_path):
    """An even bucket is refused, but only after the earlier prepare's manifest and compiled contexts
    (minutes to hours of compiling) had been deleted: a typo cost the whole folder."""
    out = tmp_path / "out"
    (out / prepared.CONTEXT_DIR).mkdir(parents=True)
    (out / prepared.CONTEXT_DIR / "fm_decoder@383_ctx.onnx").write_bytes(b"compiled")
    (out / "manifest.json").write_text("{}")
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(SMALL), "--out", str(out)]
        + ["--buckets", "383", "768"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "odd positive frame counts" in done.stderr, done.stderr
    assert (out / "manifest.json").read_text() == "{}"
    assert (out / prepared.CONTEXT_DIR / "fm_decoder@383_ctx.onnx").read_bytes() == b"compiled"


@pytest.mark.parametrize("threads", ["-1", "100000"])
def test_a_thread_count_no_machine_can_use_is_refused_before_prepare_starts(tmp_path, threads):
    """`--threads -1` was taken as 0 and `--threads 100000` compiled for minutes at gigabytes."""
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(SMALL), "--out", str(out)]
        + ["--threads", threads],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"argument --threads: must be a whole number from 0 to 256, not '{threads}'" in done.stderr
    assert not out.exists()


def test_a_prepared_folder_is_readable_by_the_service_and_by_no_one_else_writable(tmp_path):
    """Under umask 000 prepare made --out 0777, then refused it as one others can write in (and left it
    so); under any umask the manifest was 0600, unreadable by a service user serving what root prepared.
    The modes are what is checked: the tiny export with a decoder that compiles in a second (the same
    files written: model files, staging, `qnn/`, manifest); specialising its real-structure decoder on
    the simulator was half the test's CPU."""
    source, out = tmp_path / "model", tmp_path / "made" / "out"
    shutil.copytree(TINY, source)
    (source / "fm_decoder.onnx").unlink()  # (read-only in the export)
    write_simple_decoder(source / "fm_decoder.onnx")
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(source), "--out", str(out)]
        + ["--buckets", "383", "--optimization", "fast"],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.umask(0),
    )
    assert done.returncode == 0, done.stderr
    for path in [out.parent, out, *out.rglob("*")]:
        assert not path.stat().st_mode & 0o022, (path, oct(path.stat().st_mode))
    assert (out / "manifest.json").stat().st_mode & 0o777 == 0o644
    from npu_worker.engine import specialize

    assert json.loads((out / "manifest.json").read_text())["specialiser"] == specialize.VERSION


def test_a_second_prepare_into_a_folder_another_prepare_is_writing_is_refused(tmp_path):
    """Two prepares into one --out wiped each other's qnn/ (each removes it before compiling)."""
    import fcntl

    out = tmp_path / "out"
    (out / prepared.CONTEXT_DIR).mkdir(parents=True)
    (out / prepared.CONTEXT_DIR / "fm_decoder@383_ctx.onnx").write_bytes(b"being compiled")
    command = [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(SMALL)]
    command += ["--out", str(out), "--buckets", "383"]
    with open(out / prepare.LOCK, "a") as held:  # the first prepare, still compiling
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"npu-worker prepare: ModelLoadError: --out {out}: another prepare is writing this folder (it holds "
        f"{prepare.LOCK}); wait for it to end or give another --out"
    ]
    assert (out / prepared.CONTEXT_DIR / "fm_decoder@383_ctx.onnx").read_bytes() == b"being compiled"
    with open(out / prepare.LOCK, "a") as held:  # a16w8: refused before minutes of calibration
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run([*command, "--precision", "a16w8"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "another prepare is writing this folder" in done.stderr, done.stderr
    # a folder left with only the lock file (a prepare killed at once) is an empty one
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / prepare.LOCK).touch()
    prepare.check_out_dir(empty)
    with prepare.out_dir_lock(empty):  # released when the prepare ends
        pass
    with prepare.out_dir_lock(empty):
        pass
    # preparing from a prepared folder: its lock file is not linked over the new folder's
    copied = tmp_path / "copied"
    copied.mkdir()
    assert prepare.LOCK not in prepare._copy_model_files(empty, copied)
    assert not (copied / prepare.LOCK).exists()


def test_a_model_re_exported_in_place_leaves_the_prepared_copy_as_it_was(tmp_path):
    """Prepared files were hard links of the source's own: an exporter rewriting `fm_decoder.onnx` in
    place (O_TRUNC, the same inode) changed the prepared folder too, which `serve` then refused ("run
    prepare again")."""
    source, out = tmp_path / "model", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    decoder = source / "fm_decoder.onnx"
    decoder.write_bytes(b"exported once" * 1000)
    decoder.chmod(0o644)  # this user's, no one else's to change: it was linked
    assert prepare._copy_model_files(source, out) == {"fm_decoder.onnx": 13_000}
    with open(decoder, "r+b") as again:  # the exporter's rewrite, in place
        again.write(b"EXPORTED AGAIN")
    assert (out / "fm_decoder.onnx").read_bytes() == b"exported once" * 1000
    assert stat.S_IMODE((out / "fm_decoder.onnx").stat().st_mode) == 0o644


def test_model_files_copied_into_the_out_folder_replace_a_link_instead_of_writing_through_it(tmp_path):
    source, out, victim = tmp_path / "model", tmp_path / "out", tmp_path / "victim"
    source.mkdir()
    out.mkdir()
    (source / "tokens.txt").write_text("a 1\n")
    vocoder = tmp_path / "vocos_24khz.onnx"  # beside the model dir: copied in too
    vocoder.write_bytes(b"vocoder")
    victim.write_text("precious")
    (out / "tokens.txt").symlink_to(victim)
    sizes = prepare._copy_model_files(source, out, extra={"vocos_24khz.onnx": vocoder})
    assert victim.read_text() == "precious"
    assert not (out / "tokens.txt").is_symlink() and (out / "tokens.txt").read_text() == "a 1\n"
    assert (out / "vocos_24khz.onnx").read_bytes() == b"vocoder" and set(sizes) == {
        "tokens.txt",
        "vocos_24khz.onnx",
    }


def test_a_copied_model_file_is_no_more_readable_than_its_source(tmp_path):
    """Root preparing a folder a local user owns copied a link there to a root-only file (`key ->
    /root/.ssh/id_rsa`, on another filesystem than --out, so copied rather than linked) as 0644: its
    text for anyone to read in the prepared folder. A copy keeps the source's permission bits."""
    source, out = tmp_path / "model", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    secret = tmp_path / "secret"
    secret.write_bytes(b"only mine")
    secret.chmod(0o620)  # group-writable: copied, not hard-linked (as another user's or another disk's)
    (source / "key").symlink_to(secret)
    (source / "tokens.txt").write_text("a 1\n")
    (source / "tokens.txt").chmod(0o664)  # copied too: a model file anyone may read stays so
    prepare._copy_model_files(source, out)
    assert (out / "key").read_bytes() == b"only mine" and not (out / "key").is_symlink()
    assert stat.S_IMODE((out / "key").stat().st_mode) & 0o044 == 0  # was 0644: anyone could read it
    assert stat.S_IMODE((out / "tokens.txt").stat().st_mode) & 0o044 == 0o044


def test_a_vocoder_beside_the_model_is_used_only_in_a_folder_no_one_else_can_write_in(tmp_path):
    private = tmp_path / "private"
    (private / "model").mkdir(parents=True)
    (private / "vocos_24khz.onnx").write_bytes(b"v")
    assert model_files._vocoder(private / "model", None) == private / "vocos_24khz.onnx"
    shared = open_to_all(tmp_path / "shared")
    (shared / "model").mkdir()
    (shared / "vocos_24khz.onnx").write_bytes(b"planted")
    with pytest.raises(ModelLoadError, match=f"not in {shared}: others can write in"):
        model_files._vocoder(shared / "model", None)


def valid_manifest() -> dict:
    """What loading reads of a manifest prepare writes (one bucket)."""
    return {
        "format": prepared.FORMAT,
        "decoder": "fm_decoder.onnx",
        "buckets": [127],
        "contexts": {"127": {"file": "qnn/x", "placement": {"device": "qnn", "nodes": 9, "on_device": 9}}},
        "target": {"qnn_soc": "auto", "provider_options": {"soc_model": "57"}},
        "runtime": {"onnxruntime": "1", "onnxruntime-qnn": "1"},
        "source": {"fm_decoder.onnx": "0" * 64},
    }


def changed(path: str, value: object) -> dict | list:
    """`valid_manifest()` with the value at the dotted `path` replaced (`value` None: removed)."""
    manifest = valid_manifest()
    *parents, key = path.split(".")
    node = manifest
    for parent in parents:
        node = node[parent]
    if value is None:
        del node[key]
    else:
        node[key] = value
    return manifest


def test_the_valid_manifest_of_these_tests_is_accepted(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps(valid_manifest()))
    found = prepared.find(tmp_path)
    assert found is not None and found.buckets == (127,)


@pytest.mark.parametrize(
    "manifest",
    [
        changed("contexts.127.file", "../../etc/passwd"),
        changed("contexts.127.file", "/etc/passwd"),
        changed("contexts.127.file", "qnn/../../x.onnx"),
        changed("contexts.127.file", "qnn/.."),
        changed("contexts", {}),
        changed("buckets", "127"),
        changed("contexts.127", "qnn/x"),
        [1, 2],
        # a damaged or hand-edited manifest: a refusal that says so, not an OverflowError or a KeyError
        # from deep in the loading ("ModelLoadError: cannot load fm_decoder.onnx: 'target'")
        changed("buckets", [127, 1e400]),
        changed("buckets", [True]),
        changed("buckets", []),
        changed("format", 1),
        changed("target", None),
        changed("target", []),
        changed("target.provider_options", "57"),
        changed("runtime", None),
        changed("source", []),
        changed("contexts.127.placement", "x"),
        changed("contexts.127.placement", {"device": "qnn", "nodes": 1e400, "on_device": 1}),
        changed("contexts.127.placement", {"device": "qnn", "nodes": -1, "on_device": 5}),
    ],
)
def test_a_manifest_naming_a_file_outside_its_folder_or_of_the_wrong_shape_is_refused(tmp_path, manifest):
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelLoadError, match="is not a valid manifest"):
        prepared.find(tmp_path)


def test_a_manifest_nested_too_deep_for_the_parser_is_refused(tmp_path):
    (tmp_path / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ModelLoadError, match="is not a valid manifest"):
        prepared.find(tmp_path)


def test_a_directory_prepared_on_x86_for_a_phone_served_there_with_auto_names_the_flag(tmp_path):
    """Preparing on an x86 host for the phone's SoC is the documented workflow; `serve` on the phone
    with the default `--qnn-soc auto` (no target options) was told only to prepare again."""
    manifest = changed("target.provider_options", qnn_targets.provider_options("8gen3"))
    made = prepared.PreparedModel(tmp_path, manifest)
    with pytest.raises(ModelLoadError, match="serve with --qnn-soc 8gen3 .* or run `npu-worker prepare`"):
        made.check(Path("fm_decoder.onnx"), {"backend_type": "htp"})  # auto on a device: QNN reads the chip


def test_every_target_is_named_back_from_its_provider_options():
    for value in [*qnn_targets.TARGETS, "none", "61"]:
        assert qnn_targets.value_for(qnn_targets.provider_options(value)) == value
    assert qnn_targets.value_for({"htp_arch": "75"}) is None


def test_make_test_model_refuses_a_folder_others_can_write_in(tmp_path):
    shared = open_to_all(tmp_path / "shared")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (shared / "model.json").symlink_to(victim)
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "make-test-model", str(shared), "--size", "tiny"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "others can write in" in done.stderr, done.stderr
    assert victim.read_text() == "precious"


def test_make_test_model_under_umask_000_or_into_a_file_says_so_in_one_line(tmp_path):
    """Under umask 000 it refused the folder it had just made (0777); a file at DIR was a traceback."""
    command = [sys.executable, "-m", "npu_worker.cli", "make-test-model", "--size", "tiny"]
    made = subprocess.run(  # the fp32 files only: the int8 ones took 4 of its 6 s, in the same folder
        [*command, str(tmp_path / "new" / "model"), "--precision", "fp32"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0),
    )
    assert made.returncode == 0, made.stderr
    assert not (tmp_path / "new").stat().st_mode & 0o022
    (tmp_path / "file").write_text("not a folder")
    done = subprocess.run([*command, str(tmp_path / "file")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("npu-worker make-test-model: ") and "File exists" in done.stderr


def test_prepare_shares_no_file_with_the_source_not_even_its_own(tmp_path):
    """Root may hard-link another user's file: the prepared "copy" was then still theirs to change; and
    a file of its own linked changed with each re-export of the source in place."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    source, out = tmp_path / "model", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    for name in ("mine.onnx", "theirs.onnx", "open.onnx"):
        (source / name).write_bytes(name.encode())
    (source / "mine.onnx").chmod(0o644)
    os.chown(source / "theirs.onnx", 65534, 65534)
    (source / "open.onnx").chmod(0o666)
    prepare._copy_model_files(source, out)
    for name in ("mine.onnx", "theirs.onnx", "open.onnx"):
        copied = (out / name).stat()
        assert copied.st_ino != (source / name).stat().st_ino and copied.st_uid == 0, name
        assert (out / name).read_bytes() == name.encode()


def test_a_directory_prepared_by_another_specialiser_is_refused_like_one_of_another_runtime(tmp_path):
    """The graph QNN compiled is the specialiser's (folded shapes, relative shift as slices, zero
    biases): the QNN cache drops a context when its VERSION changes, but a prepared directory's
    contexts were loaded whatever version wrote them."""
    from npu_worker.engine import specialize

    decoder = tmp_path / "fm_decoder.onnx"
    decoder.write_bytes(b"decoder")
    manifest = changed("source", {"fm_decoder.onnx": prepared.file_hash(decoder)})
    manifest |= {"runtime": prepared.runtime_versions(), "target": {"provider_options": {}}}
    made = prepared.PreparedModel(tmp_path, manifest | {"specialiser": specialize.VERSION - 1})
    with pytest.raises(ModelLoadError, match=f"specialiser version {specialize.VERSION - 1}, this worker"):
        made.check(decoder, {"backend_type": "htp"})
    for current in ({"specialiser": specialize.VERSION}, {}):  # recorded, or made before it was
        with pytest.raises(ModelLoadError, match="qnn/x missing"):  # the check after it
            prepared.PreparedModel(tmp_path, manifest | current).check(decoder, {"backend_type": "htp"})


def test_a_prepared_folder_other_users_can_write_in_is_not_loaded_on_the_npu(tmp_path):
    """A prepared directory copied to the device with loose modes (unpacked by root from a tarball made
    under umask 000, pushed with 0777/0666): any local user could put a context and a manifest there,
    and `serve --device qnn` loaded them; `prepare` refuses to write into such a folder."""
    made = prepared.PreparedModel(tmp_path, valid_manifest())
    (tmp_path / prepared.CONTEXT_DIR).mkdir()
    context = tmp_path / "qnn" / "x"
    context.write_bytes(b"compiled")
    for path, mode in ((tmp_path, 0o777), (tmp_path / "qnn", 0o777), (context, 0o666)):
        path.chmod(mode)
        with pytest.raises(ModelLoadError, match=f"{path} can be changed by other users \\(mode {mode:o}\\)"):
            made.check(Path("fm_decoder.onnx"), {"backend_type": "htp"})
        path.chmod(mode & ~0o022)
    with pytest.raises(ModelLoadError, match="was prepared for QNN target"):  # the next check: passed
        made.check(Path("fm_decoder.onnx"), {"backend_type": "htp"})


def test_a_model_file_that_is_a_relative_link_is_copied_in_as_the_file_it_names(tmp_path):
    """A Hugging Face cache snapshot holds each model file as a link, `../../blobs/<hash>`: the link
    itself was hard-linked into the prepared folder, where it named nothing (`prepare` said it had
    prepared it; `serve` then found no model there), or, named absolutely, a file the prepared folder
    does not take along when it is moved onto the device."""
    blobs, snapshot, out = (
        tmp_path / "hub" / "blobs",
        tmp_path / "hub" / "snapshots" / "abc",
        tmp_path / "out",
    )
    for folder in (blobs, snapshot, out):
        folder.mkdir(parents=True)
    (blobs / "1f2e").write_text("a 1\n")
    (snapshot / "tokens.txt").symlink_to(Path("..") / ".." / "blobs" / "1f2e")
    (blobs / "9a0b").write_bytes(b"vocoder")
    (snapshot / "vocos.onnx").symlink_to(blobs / "9a0b")  # an absolute link, given by --vocoder
    sizes = prepare._copy_model_files(snapshot, out, extra={"vocos_24khz.onnx": snapshot / "vocos.onnx"})
    shutil.rmtree(tmp_path / "hub")  # the prepared folder moved onto the device: the cache stays behind
    for name, content in (
        ("tokens.txt", b"a 1\n"),
        ("vocos.onnx", b"vocoder"),
        ("vocos_24khz.onnx", b"vocoder"),
    ):
        assert not (out / name).is_symlink() and (out / name).read_bytes() == content, name
    assert sizes == {"tokens.txt": 4, "vocos.onnx": 7, "vocos_24khz.onnx": 7}
