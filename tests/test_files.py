"""Every writer (models, count tables, paper / tiktoken / HF exports, CLI -o) goes through model_io.atomic_open:
a symlink is followed, anything at the path that is not a regular file is refused, and failures of the file
system name the user's path (never the temporary file) and say what to do."""

import errno
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import fastsw
from fastsw.corpus.counting import count_corpus
from fastsw.io.model_file import OutputError
from conftest import assert_error, run

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]
DOCS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 3


@pytest.fixture(scope="module")
def tok():
    return fastsw.train(DOCS, algo="bpe", vocab_size=260, pretokenizer="simple")


@pytest.fixture(scope="module")
def counts(tok):
    return count_corpus(DOCS, tok.pretokenizer, collect_runs=True)


WRITERS = {
    "model": lambda tok, counts, path: tok.save(path),
    "counts": lambda tok, counts, path: counts.save(path),
    "paper": lambda tok, counts, path: tok.save_paper(path),
    "tiktoken": lambda tok, counts, path: tok.save_tiktoken(path),
    "hf": lambda tok, counts, path: tok.save_hf(path),
}


@pytest.fixture(params=sorted(WRITERS))
def write(request, tok, counts):
    return lambda path: WRITERS[request.param](tok, counts, path)


def test_file_helpers_have_their_own_module():
    """atomic_open and OutputError live in fastsw.files, still importable from the old places."""
    from fastsw import files
    from fastsw.io import model_file as model_io

    assert fastsw.OutputError is model_io.OutputError is files.OutputError is OutputError
    assert model_io.atomic_open is files.atomic_open and model_io.resolve_output_path is files.resolve_output_path


def temp_files(directory) -> list:
    return [name for name in os.listdir(directory) if name.endswith(".tmp")]


def test_symlink_is_followed_and_kept(write, tmp_path):
    real = tmp_path / "real"
    real.write_bytes(b"old")
    link = tmp_path / "link"
    link.symlink_to(real)
    write(link)
    assert link.is_symlink() and os.readlink(link) == str(real)  # the link is kept ...
    assert real.read_bytes() != b"old"  # ... and the file it points to was replaced
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "new")  # like open(): a dangling link's target is created
    write(dangling)
    assert dangling.is_symlink() and (tmp_path / "new").is_file()
    assert temp_files(tmp_path) == []


def make_fifo(path):
    os.mkfifo(path)


def make_dir(path):
    path.mkdir()


def make_socket(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()


def make_link_to_fifo(path):
    os.mkfifo(path.parent / "fifo")
    path.symlink_to(path.parent / "fifo")


NON_REGULAR = {  # kind: (make it, check it, what the message says after "PATH: ")
    "fifo": (make_fifo, stat.S_ISFIFO, "is a FIFO, not a regular file; give the path of a regular file"),
    "directory": (make_dir, stat.S_ISDIR, "is a directory; give the path of a file inside it"),
    "socket": (make_socket, stat.S_ISSOCK, "is a socket, not a regular file; give the path of a regular file"),
    "symlink-to-fifo": (
        make_link_to_fifo,
        stat.S_ISFIFO,
        "is a symlink to {fifo}, which is a FIFO, not a regular file",
    ),
}


@pytest.mark.parametrize("kind", sorted(NON_REGULAR))
def test_non_regular_target_is_refused(write, tmp_path, kind):
    make, is_kind, word = NON_REGULAR[kind]
    path = tmp_path / "out"
    make(path)
    with pytest.raises(OutputError) as info:
        write(path)
    assert str(info.value).startswith(f"{path}: " + word.format(fifo=tmp_path / "fifo")), str(info.value)
    assert info.value.filename == str(path)
    assert is_kind(os.stat(path).st_mode)  # untouched
    assert temp_files(tmp_path) == []


def test_dev_null_is_refused_and_stays_a_device(write):
    # CI runs as root, where a rename over /dev/null would replace the device for the whole machine.
    with pytest.raises(OutputError, match="^/dev/null: is a character device, not a regular file"):
        write("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert temp_files("/dev") == []


def test_empty_path_is_refused(write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError, match="output path is empty; give a file name"):
        write("")
    assert os.listdir(tmp_path) == []


def test_missing_directory_names_the_path(write, tmp_path):
    path = tmp_path / "nodir" / "out"
    with pytest.raises(OutputError) as info:
        write(path)
    assert str(info.value) == (
        f"{path}: the directory {path.parent} does not exist; create it first or choose another output path"
    )
    assert info.value.errno == errno.ENOENT and not path.parent.exists()


def test_trailing_separator_is_refused(write, tmp_path):
    path = f"{tmp_path}/new/"  # open() would refuse it too; the old code wrote a file named "new"
    with pytest.raises(OutputError, match=f"^{path}: ends with a path separator"):
        write(path)
    assert os.listdir(tmp_path) == []


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _FullDiskFile:
    """A real temporary file whose writes fail like a full disk's."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        _enospc()

    def __getattr__(self, name):
        return getattr(self._f, name)


def _full_disk_at(stage, monkeypatch):
    if stage == "write":
        real_fdopen = os.fdopen
        monkeypatch.setattr(os, "fdopen", lambda *a, **k: _FullDiskFile(real_fdopen(*a, **k)))
    else:  # creating the temporary file, syncing it (NFS reports a full disk there), renaming it
        target = {"mkstemp": "tempfile.mkstemp", "fsync": "os.fsync", "replace": "os.replace"}[stage]
        monkeypatch.setattr(target, _enospc)


@pytest.mark.parametrize("stage", ["mkstemp", "write", "fsync", "replace"])
@pytest.mark.parametrize("writer", ["model", "counts", "hf"])
def test_full_disk_names_the_target(tok, counts, tmp_path, monkeypatch, stage, writer):
    path = tmp_path / "out"
    path.write_bytes(b"old")
    _full_disk_at(stage, monkeypatch)
    with pytest.raises(OutputError) as info:
        WRITERS[writer](tok, counts, path)
    monkeypatch.undo()
    assert str(info.value) == (
        f"{path}: no space left on device while writing it; free some space or choose another output path"
    )
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    assert path.read_bytes() == b"old"  # the old file is intact
    assert temp_files(tmp_path) == []


@pytest.mark.parametrize(
    "code, message",
    [
        (errno.EACCES, "permission denied in {dir} while writing it; choose a writable directory"),
        (errno.EROFS, "the file system is read-only while writing it; choose another output path"),
        (errno.EIO, "Input/output error while writing it; check the path or choose another output path"),
    ],
)
def test_other_write_errors_name_the_target(tok, tmp_path, monkeypatch, code, message):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(tmp_path / ".m.json.abc.tmp"))

    monkeypatch.setattr("tempfile.mkstemp", fail)
    with pytest.raises(OutputError) as info:
        tok.save(tmp_path / "m.json")
    assert str(info.value) == f"{tmp_path / 'm.json'}: " + message.format(dir=tmp_path)
    assert info.value.errno == code


def test_replacing_keeps_the_permissions(tok, tmp_path):
    path = tmp_path / "secret.json"
    path.write_bytes(b"old")
    path.chmod(0o600)
    tok.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # as a plain open() would leave them
    umask = os.umask(0o022)
    try:
        tok.save(tmp_path / "new.json")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644


# ---- the CLI: one `fastsw: error:` line, exit 2 ----------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("\n".join(DOCS) + "\n", encoding="utf-8")
    return path


TRAIN = ["train", "--algo", "bpe", "--vocab-size", "260", "--no-progress"]


@pytest.mark.parametrize("command", ["train", "count"])
def test_cli_refuses_fifo_and_dev_null_before_reading_the_corpus(corpus, tmp_path, capsys, command):
    argv = TRAIN if command == "train" else ["count", "--no-progress"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, out, err = run(capsys, *argv, corpus, "-o", fifo)
    assert_error(code, err, str(fifo), "FIFO", "regular file")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    code, out, err = run(capsys, *argv, corpus, "-o", "/dev/null")
    assert_error(code, err, "/dev/null", "character device")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_cli_follows_a_symlink(corpus, tmp_path, capsys):
    (tmp_path / "models").mkdir()
    link = tmp_path / "latest.json"
    link.symlink_to(tmp_path / "models" / "m1.json")
    code, out, err = run(capsys, *TRAIN, corpus, "-o", link)
    assert code == 0, err
    assert link.is_symlink() and fastsw.load(tmp_path / "models" / "m1.json").vocab_size == 260


def test_cli_full_disk_is_one_line(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(os, "fsync", _enospc)
    code, out, err = run(capsys, *TRAIN, corpus, "-o", tmp_path / "m.json")
    assert_error(code, err, f"{tmp_path / 'm.json'}: no space left on device", "free some space")
    assert os.listdir(tmp_path) == ["c.txt"]


def test_cli_file_size_limit_is_a_real_write_error(corpus, tmp_path):
    """A real failing write(2), no root needed: a 1 kB file size limit (ulimit -f) with SIGXFSZ ignored makes the
    kernel answer EFBIG once the model file reaches 1 kB (a model with a pre-tokenizer config is larger)."""
    import resource
    import signal

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    # No JIT: a cold Numba cache would otherwise be written (and hit the limit) in this process too.
    env = dict(
        os.environ,
        NUMBA_DISABLE_JIT="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    )
    r = subprocess.run(
        [sys.executable, "-m", "fastsw", *TRAIN, corpus.name, "-o", "m.json"],
        cwd=tmp_path,
        env=env,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [
        "fastsw: error: m.json: the file is too large for the file system or the file "
        "size limit (ulimit -f) while writing it; raise the limit or choose another "
        "output path"
    ]
    assert sorted(os.listdir(tmp_path)) == ["c.txt"]


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink"])
@pytest.mark.parametrize("command", ["train", "count", "train --lang", "train --from-counts", "encode --format bin"])
def test_cli_refuses_an_output_that_is_an_input(corpus, tmp_path, capsys, monkeypatch, command, how):
    """-o naming one of the inputs (the same path, another spelling, a symlink to it, a hard link) is refused
    before anything is read or written: the input is left as it was."""
    if command == "train --from-counts":
        source = tmp_path / "c.counts.gz"
        assert run(capsys, "count", "--no-progress", corpus, "-o", source)[0] == 0
        argv = [*TRAIN, "--from-counts", source]
    elif command == "train --lang":
        source = corpus
        argv = [*TRAIN, "--lang", f"en={tmp_path / 'other.txt'}", "--lang", f"de={corpus}"]
        (tmp_path / "other.txt").write_text("ein Hund\n", encoding="utf-8")
    elif command == "encode --format bin":
        source = corpus
        model = tmp_path / "m.json"
        assert run(capsys, *TRAIN, corpus, "-o", model)[0] == 0
        argv = ["encode", "-m", model, "--format", "bin", corpus]
    else:
        source = corpus
        argv = [*(TRAIN if command == "train" else ["count", "--no-progress"]), corpus]
    before = source.read_bytes()
    monkeypatch.chdir(tmp_path)
    if how == "same":
        output = source
    elif how == "relative":
        output = Path(".") / "sub" / ".." / source.name
        (tmp_path / "sub").mkdir()
    elif how == "symlink":
        output = tmp_path / "link"
        output.symlink_to(source)
    else:
        output = tmp_path / "hard"
        os.link(source, output)
    listing = sorted(os.listdir(tmp_path))
    code, out, err = run(capsys, *argv, "-o", output)
    assert_error(code, err, str(output), "is one of the inputs", str(source))
    assert source.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == listing


def test_read_head_reads_the_start_or_names_the_file(tmp_path):
    """The format sniffing of model and count files: the first bytes, or one error naming the file and its role."""
    from fastsw.files import read_head

    (tmp_path / "table.counts").write_bytes(b"\x1f\x8b and the rest")
    assert read_head(tmp_path / "table.counts", 2, "count file") == b"\x1f\x8b"
    with pytest.raises(ValueError, match=r"missing\.counts: count file not found$"):
        read_head(tmp_path / "missing.counts", 2, "count file")
    with pytest.raises(ValueError, match=r": cannot read model file \(Is a directory\)$"):
        read_head(tmp_path, 4096, "model file")
