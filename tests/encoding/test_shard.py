"""fastsw shard / fastsw.shard: real corpus text to token shards and back, resuming, faults."""

import gzip
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import fastsw
from fastsw.encoding.shard import (
    ShardError,
    dtype_for,
    encode_arrays,
    frame,
    header_bytes,
    load_index,
    load_shard,
    read_manifest,
    model_hash,
    resolve_inputs,
    verify,
)

from conftest import assert_error, run, shared_path

ROOT = Path(__file__).resolve().parents[2]
LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]


def heldout(lang, limit=None):
    docs = []
    with open(shared_path(f"corpus/{lang}/heldout.jsonl"), encoding="utf-8") as f:
        for line in f:
            docs.append(json.loads(line)["text"])
            if limit is not None and len(docs) >= limit:
                break
    return docs


def write_jsonl(path, docs):
    path.write_text("".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tok(sample_docs):
    return fastsw.train(sample_docs, vocab_size=1500, special_tokens=["<|endoftext|>", "<|bos|>"])


@pytest.fixture(scope="module")
def model_file(tok, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.json"
    tok.save(path)
    return path


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A few real documents of each of 12 languages, as three JSONL files, one gzip-compressed, and a .txt."""
    d = tmp_path_factory.mktemp("mixed")
    docs = {lang: heldout(lang, 6) for lang in LANGS}
    write_jsonl(d / "a.jsonl", docs["en"] + docs["de"] + docs["fr"] + docs["ru"])
    with gzip.open(d / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        for lang in ("fi", "ar", "ko", "zh"):
            for t in docs[lang]:
                f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    lines = [t.replace("\n", " ") + "\n" for lang in ("ja", "th", "hi", "my") for t in docs[lang]]
    (d / "c.txt").write_text("".join(lines), encoding="utf-8")
    expected = [t for lang in LANGS[:8] for t in docs[lang]] + lines
    return d, expected


def all_ids(out, manifest):
    return np.concatenate([np.asarray(load_shard(out / s["path"])) for s in manifest["shards"]]).astype(np.int64)


def documents_of(out, manifest):
    """The documents' ids, found through the shards' indexes (each ends with its end-of-text token)."""
    ids = all_ids(out, manifest)
    starts, base = [], 0
    for s in manifest["shards"]:
        starts += (load_index(out / s["path"]).astype(np.int64) + base).tolist()
        base += s["tokens"]
    return [ids[a:b] for a, b in zip(starts, starts[1:] + [len(ids)])]


def folder_bytes(out):
    return {p.name: p.read_bytes() for p in sorted(Path(out).iterdir())}


# ---- round trips --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["bin", "llmc", "npy"])
def test_round_trip_real_text(tok, mixed, tmp_path, fmt):
    src, expected = mixed
    m = fastsw.shard(src, tok, tmp_path / "out", format=fmt, shard_tokens=3000, workers=2)
    out = tmp_path / "out"
    assert m["complete"] and m["documents"] == len(expected) == sum(s["documents"] for s in m["shards"])
    assert all(s["tokens"] == 3000 for s in m["shards"][:-1]) and 0 < m["shards"][-1]["tokens"] <= 3000
    docs = documents_of(out, m)
    assert len(docs) == len(expected)
    eot = tok.special_tokens["<|endoftext|>"]
    for ids, text in zip(docs, expected):
        assert ids[-1] == eot
        assert ids[:-1].tolist() == tok.encode_ordinary(text)
        assert tok.decode_bytes(ids[:-1].tolist()) == text.encode("utf-8")
    assert m["options"]["dtype"] == "uint16"
    verify(out)


def test_llmc_header_read_back(tok, mixed, tmp_path):
    m = fastsw.shard(mixed[0], tok, tmp_path, format="llmc", shard_tokens=5000)
    for s in m["shards"]:
        raw = (tmp_path / s["path"]).read_bytes()
        header = np.frombuffer(raw[:1024], "<i4")
        assert header[0] == 20240520 and header[1] == 1 and header[2] == s["tokens"]
        assert not header[3:].any()
        assert len(raw) == 1024 + 2 * s["tokens"]  # uint16 ids, as llm.c's GPT-2 shards
    # the same ids as the flat format
    flat = fastsw.shard(mixed[0], tok, tmp_path / "flat", format="bin", shard_tokens=5000)
    assert all_ids(tmp_path, m).tolist() == all_ids(tmp_path / "flat", flat).tolist()


def test_npy_loads_with_numpy(tok, mixed, tmp_path):
    m = fastsw.shard(mixed[0], tok, tmp_path, format="npy", shard_tokens=4000)
    for s in m["shards"]:
        a = np.load(tmp_path / s["path"])
        assert a.dtype == np.uint16 and a.shape == (s["tokens"],)
        idx = np.load(tmp_path / s["index"])
        assert idx.dtype == np.uint64 and len(idx) == s["documents"]


def test_bos_and_explicit_eot(tok, tmp_path):
    docs = heldout("de", 5)
    src = write_jsonl(tmp_path / "de.jsonl", docs)
    m = fastsw.shard(src, tok, tmp_path / "o", bos="<|bos|>", eot="<|endoftext|>", shard_tokens=10**6)
    ids = documents_of(tmp_path / "o", m)
    bos, eot = tok.special_tokens["<|bos|>"], tok.special_tokens["<|endoftext|>"]
    for got, text in zip(ids, docs):
        assert got[0] == bos and got[-1] == eot and got[1:-1].tolist() == tok.encode_ordinary(text)


def test_no_end_of_text_token_is_said(sample_docs, tmp_path):
    plain = fastsw.train(sample_docs[:50], vocab_size=400)
    src = write_jsonl(tmp_path / "en.jsonl", heldout("en", 3))
    with pytest.warns(fastsw.OptionWarning, match="no '<\\|endoftext\\|>'"):
        m = fastsw.shard(src, plain, tmp_path / "o")
    assert m["options"]["eot"] is None
    assert sum(len(d) for d in documents_of(tmp_path / "o", m)) == m["tokens"]
    assert [d.tolist() for d in documents_of(tmp_path / "o", m)] == [plain.encode_ordinary(t) for t in heldout("en", 3)]
    with pytest.raises(ValueError, match="not one token"):
        fastsw.shard(src, plain, tmp_path / "p", eot="<|nope|>")


def test_frame_places_bos_and_eot():
    ids, off = np.array([7, 8, 9, 4], np.int32), np.array([0, 3, 3, 4])
    stream, starts = frame(ids, off, eot=1, bos=2)
    assert stream.tolist() == [2, 7, 8, 9, 1, 2, 1, 2, 4, 1] and starts.tolist() == [0, 5, 7]


def frame_reference(ids, offsets, eot, bos):
    """frame() written document by document."""
    stream, starts = [], []
    for a, b in zip(offsets[:-1], offsets[1:]):
        starts.append(len(stream))
        stream += ([bos] if bos is not None else []) + list(ids[a:b]) + ([eot] if eot is not None else [])
    return stream, starts


@pytest.mark.parametrize("eot,bos", [(None, None), (1, None), (None, 2), (1, 2)])
def test_frame_equals_its_reference_on_real_encodings(tok, eot, bos):
    docs = heldout("en", 5) + ["", ""] + heldout("zh", 3) + [""]
    ids, off = encode_arrays(tok, docs, 1)
    stream, starts = frame(ids, off, eot=eot, bos=bos)
    want, want_starts = frame_reference(ids.tolist(), off.tolist(), eot, bos)
    assert stream.tolist() == want and starts.tolist() == want_starts


def test_dtype_from_the_vocabulary_and_refused_when_too_small():
    assert dtype_for(65536) == "uint16" and dtype_for(65537) == "uint32"
    assert dtype_for(100, "uint32") == "uint32"
    with pytest.raises(ValueError, match="cannot hold"):
        dtype_for(70000, "uint16")


def test_wide_vocabulary_is_uint32(tmp_path):
    docs = heldout("zh", 3)
    big = fastsw.train(docs + heldout("ja", 20), vocab_size=300, special_tokens=["<|endoftext|>"])
    # a model whose ids reach past 65535 needs uint32; emulate with --dtype uint32 on a small one
    src = write_jsonl(tmp_path / "zh.jsonl", docs)
    m = fastsw.shard(src, big, tmp_path / "o", dtype="uint32", format="llmc")
    raw = (tmp_path / "o" / m["shards"][0]["path"]).read_bytes()
    assert np.frombuffer(raw[:12], "<i4").tolist() == [20240801, 7, m["shards"][0]["tokens"]]
    assert len(raw) == 1024 + 4 * m["tokens"]
    assert [d[:-1].tolist() for d in documents_of(tmp_path / "o", m)] == [big.encode_ordinary(t) for t in docs]


def test_npy_header_is_what_numpy_writes_for_the_shape(tmp_path):
    for n in (0, 1, 10**8):
        head = header_bytes("npy", "uint32", n)
        assert len(head) == 128 and head.endswith(b"\n")
        (tmp_path / "a.npy").write_bytes(head + b"\0" * (4 * min(n, 3)))
        if n <= 3:
            assert np.load(tmp_path / "a.npy").shape == (n,)


def test_inputs_globs_and_directories(mixed, tmp_path):
    src, _ = mixed
    assert resolve_inputs(src) == [str(src / "a.jsonl"), str(src / "b.jsonl.gz"), str(src / "c.txt")]
    assert resolve_inputs(str(src / "*.jsonl*")) == [str(src / "a.jsonl"), str(src / "b.jsonl.gz")]
    with pytest.raises(fastsw.InputError, match="matches no file"):
        resolve_inputs(str(src / "*.parquet"))
    with pytest.raises(fastsw.InputError, match="file not found"):
        resolve_inputs(str(src / "nope.jsonl"))


# ---- determinism and resuming -------------------------------------------------------------------------------------


def test_one_and_two_workers_write_the_same_bytes(tok, mixed, tmp_path):
    fastsw.shard(mixed[0], tok, tmp_path / "w1", workers=1, shard_tokens=2500, batch_chars=10_000)
    fastsw.shard(mixed[0], tok, tmp_path / "w2", workers=2, shard_tokens=2500, batch_chars=300_000)
    assert folder_bytes(tmp_path / "w1") == folder_bytes(tmp_path / "w2")


def test_rerun_of_a_complete_folder_changes_nothing(tok, mixed, tmp_path):
    fastsw.shard(mixed[0], tok, tmp_path, shard_tokens=2500)
    before = folder_bytes(tmp_path)
    fastsw.shard(mixed[0], tok, tmp_path, shard_tokens=2500)
    assert folder_bytes(tmp_path) == before


def test_other_settings_on_a_folder_are_refused(tok, mixed, tmp_path):
    fastsw.shard(mixed[0], tok, tmp_path, shard_tokens=2500)
    with pytest.raises(ShardError, match="shard_tokens"):
        fastsw.shard(mixed[0], tok, tmp_path, shard_tokens=2000)
    (tmp_path.parent / "stray").mkdir(exist_ok=True)
    (tmp_path.parent / "stray" / "x.bin").write_bytes(b"x")
    with pytest.raises(ShardError, match="not empty"):
        fastsw.shard(mixed[0], tok, tmp_path.parent / "stray")


def big_corpus(tmp_path, megabytes):
    """English training text (real), ``megabytes`` of it, as two JSONL files."""
    docs, size = [], 0
    with gzip.open(shared_path("corpus/en/train.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            docs.append(json.loads(line)["text"])
            size += len(docs[-1])
            if size > megabytes * 1e6:
                break
    half = len(docs) // 2
    write_jsonl(tmp_path / "part1.jsonl", docs[:half])
    write_jsonl(tmp_path / "part2.jsonl", docs[half:])
    return [tmp_path / "part1.jsonl", tmp_path / "part2.jsonl"]


#: shard size of the interrupted runs: ~170 shards of the 4 MB corpus, so a signal after the second or third lands
#: mid-run
INTERRUPT_SHARD_TOKENS = 12_000


def shard_cli(model_file, inputs, out, *extra):
    return [
        sys.executable,
        "-m",
        "fastsw",
        "shard",
        *map(str, inputs),
        "-m",
        str(model_file),
        "-o",
        str(out),
        "--shard-tokens",
        str(INTERRUPT_SHARD_TOKENS),
        "--batch-mb",
        "1",
        "--workers",
        "2",
        "--no-progress",
        *extra,
    ]


def child_env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def wait_for_shards(out, proc, n=2, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if len(read_manifest(out)["shards"]) >= n:
                return
        except (OSError, ValueError, KeyError):
            pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("no shard was written")


@pytest.fixture(scope="module")
def interrupt_case(tok, model_file, tmp_path_factory):
    d = tmp_path_factory.mktemp("big")
    inputs = big_corpus(d, 4)
    fastsw.shard(inputs, tok, d / "reference", shard_tokens=INTERRUPT_SHARD_TOKENS, workers=1)
    return inputs, folder_bytes(d / "reference")


def check_consistent(out):
    """Only complete shards: every listed one verifies, nothing half-written lies about."""
    m = verify(out)
    assert not m["complete"]
    names = {p.name for p in out.iterdir()}
    assert not [n for n in names if n.endswith(".tmp")], names
    listed = {s["path"] for s in m["shards"]} | {s["index"] for s in m["shards"]} | {"manifest.json"}
    assert listed <= names
    return m


def test_sigint_then_resume_is_byte_identical(model_file, interrupt_case, tmp_path):
    inputs, reference = interrupt_case
    out = tmp_path / "out"
    proc = subprocess.Popen(
        shard_cli(model_file, inputs, out),
        env=child_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_shards(out, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    m = check_consistent(out)
    assert 2 <= len(m["shards"]) < len([k for k in reference if k.endswith(".idx.npy")])
    done = subprocess.run(shard_cli(model_file, inputs, out), env=child_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert folder_bytes(out) == reference


def test_sigkill_then_resume_is_byte_identical(model_file, interrupt_case, tmp_path):
    inputs, reference = interrupt_case
    out = tmp_path / "out"
    proc = subprocess.Popen(shard_cli(model_file, inputs, out), env=child_env(), stderr=subprocess.PIPE, text=True)
    wait_for_shards(out, proc, n=3)
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    m = json.loads((out / "manifest.json").read_text())
    assert not m["complete"]
    done = subprocess.run(shard_cli(model_file, inputs, out), env=child_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert folder_bytes(out) == reference


def test_write_error_leaves_complete_shards_and_resumes(model_file, interrupt_case, tmp_path):
    """A file-size limit makes a write fail (EFBIG) as a full disk does (ENOSPC): one error line naming the shard,
    the listed shards complete, and the rerun finishes the same bytes."""
    inputs, reference = interrupt_case

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))

    out = tmp_path / "out"
    # shards of 30000 uint16 ids (60 kB) cannot be written under a 40 kB limit; the manifest can
    bad = subprocess.run(
        shard_cli(model_file, inputs, out)[:-1] + ["--shard-tokens", "30000", "--no-progress"],
        env=child_env(),
        capture_output=True,
        text=True,
        preexec_fn=limit,
    )
    assert_error(bad.returncode, bad.stderr, "shard_000000.bin", "too large")
    m = verify(out)
    assert m["shards"] == [] and not m["complete"]
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]
    done = subprocess.run(
        shard_cli(model_file, inputs, out)[:-1] + ["--shard-tokens", "30000", "--no-progress"],
        env=child_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert verify(out)["complete"]


def test_disk_full_on_a_small_tmpfs(tok, mixed, tmp_path):
    if os.geteuid() != 0:
        pytest.skip(
            "mounting a small tmpfs needs root; test_write_error_leaves_complete_shards_and_resumes "
            "covers a failing write without it"
        )
    out = tmp_path / "full"
    out.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(out)], capture_output=True).returncode
        != 0
    ):
        pytest.fail("mounting a 64 kB tmpfs failed although this test runs as root")
    try:
        with pytest.raises(fastsw.OutputError, match="no space left"):
            fastsw.shard(mixed[0], tok, out, shard_tokens=5000)
        m = verify(out)
        assert not m["complete"] and m["shards"]
        assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
        listed = {s["path"] for s in m["shards"]}
        assert listed == {p.name for p in out.iterdir() if p.name.endswith(".bin")}
    finally:
        subprocess.run(["umount", str(out)], check=True)


# ---- bad input ----------------------------------------------------------------------------------------------------


def test_invalid_utf8_names_file_and_line_and_resumes(tok, tmp_path):
    docs = heldout("fr", 40)
    good = write_jsonl(tmp_path / "a.jsonl", docs[:30])
    bad = tmp_path / "b.txt"
    bad.write_bytes(b"fine line\n" * 3 + b"caf\xe9 latin-1\n")
    out = tmp_path / "out"
    with pytest.raises(fastsw.InputError, match=r"b\.txt line 4: invalid UTF-8"):
        fastsw.shard([good, bad], tok, out, shard_tokens=2000)
    m = verify(out)
    assert m["shards"] and not m["complete"]
    bad.write_bytes(b"fine line\n" * 3 + "café utf-8\n".encode())
    m = fastsw.shard([good, bad], tok, out, shard_tokens=2000)
    fastsw.shard([good, bad], tok, tmp_path / "ref", shard_tokens=2000)
    assert folder_bytes(out) == folder_bytes(tmp_path / "ref")


def test_cli_bad_jsonl_is_one_error_line(capsys, model_file, tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text('{"text": "ok"}\n{"text": "broken"\n', encoding="utf-8")
    code, _, err = run(capsys, "shard", src, "-m", model_file, "-o", tmp_path / "out", "--no-progress")
    assert_error(code, err, "a.jsonl line 2", "invalid JSON")


def test_cli_unwritable_folder(capsys, model_file, tmp_path):
    src = write_jsonl(tmp_path / "a.jsonl", ["x"])
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "shard", src, "-m", model_file, "-o", tmp_path / "file" / "out", "--no-progress")
    assert_error(code, err, "file/out", "cannot create the folder")


# ---- CLI ----------------------------------------------------------------------------------------------------------


def test_cli_shard_and_verify(capsys, model_file, mixed, tmp_path):
    src, expected = mixed
    code, _, err = run(
        capsys,
        "shard",
        src / "a.jsonl",
        src / "c.txt",
        "-m",
        model_file,
        "-o",
        tmp_path / "o",
        "--format",
        "npy",
        "--shard-tokens",
        "4000",
        "--no-progress",
    )
    assert code == 0, err
    assert "tokens" in err and "npy, uint16" in err
    code, _, err = run(capsys, "shard", "-m", model_file, "-o", tmp_path / "o", "--verify")
    assert code == 0 and "match the manifest" in err
    first = tmp_path / "o" / "shard_000000.npy"
    data = bytearray(first.read_bytes())
    data[-1] ^= 1
    first.write_bytes(bytes(data))
    code, _, err = run(capsys, "shard", "-m", model_file, "-o", tmp_path / "o", "--verify")
    assert_error(code, err, "shard_000000.npy", "checksum")


def test_manifest_records_model_inputs_and_positions(tok, model_file, mixed, tmp_path):
    src, expected = mixed
    m = fastsw.shard(src, str(model_file), tmp_path, shard_tokens=2500)
    assert m["model"]["sha256"] == model_hash(tok)
    assert [i["path"] for i in m["inputs"]] == resolve_inputs(src)
    assert m["shards"][0]["start"] == {"file": 0, "document": 0, "token": 0}
    for a, b in zip(m["shards"], m["shards"][1:]):
        assert a["end"] == b["start"]
    last = m["shards"][-1]["end"]
    assert last["file"] == 2 and last["token"] == 0


# ---- Dask ---------------------------------------------------------------------------------------------------------


def shard_bytes(out):
    """The shards and indexes of a folder (the manifest names the input paths, which differ between runs)."""
    return {k: v for k, v in folder_bytes(out).items() if k != "manifest.json"}


@pytest.fixture(scope="module")
def client():
    from fastsw.corpus import distributed

    with distributed.connect(local_workers=2) as c:
        yield c


def many_files(folder, per_file=8):
    folder.mkdir()
    files = []
    for k, lang in enumerate(LANGS):
        files.append(write_jsonl(folder / f"{k:02d}-{lang}.jsonl", heldout(lang, per_file)))
    return files


def test_dask_shards_equal_the_local_run(tok, client, tmp_path):
    files = many_files(tmp_path / "in")
    local = fastsw.shard(files, tok, tmp_path / "local", shard_tokens=4000, format="llmc")
    on_dask = fastsw.shard(files, tok, tmp_path / "dask", shard_tokens=4000, format="llmc", client=client)
    assert shard_bytes(tmp_path / "local") == shard_bytes(tmp_path / "dask")
    assert local["shards"] == on_dask["shards"]


def test_dask_worker_killed_mid_file_loses_and_repeats_nothing(tok, client, tmp_path):
    """A worker SIGKILLed while it reads a file: its task runs again, and so does the model's task when the model's
    only copy was on that worker; nothing is lost or repeated."""
    from test_distributed import _open_fifo_for_writing, _unread_bytes, _worker_killed, _worker_processing

    files = many_files(tmp_path / "in")
    whole = files[5].read_bytes()
    files[5].unlink()
    os.mkfifo(files[5])  # a FIFO while the first worker reads it, then the whole file in its place
    result = {}

    def job():
        try:
            result["manifest"] = fastsw.shard(files, tok, tmp_path / "dask", shard_tokens=4000, client=client)
        except BaseException as e:  # noqa: B902 -- reported by the test thread
            result["error"] = e

    import threading

    thread = threading.Thread(target=job)
    thread.start()
    deadline = time.monotonic() + 120
    fd = _open_fifo_for_writing(files[5], deadline)
    first = whole[: whole.index(b"\n", len(whole) // 3) + 1]
    assert os.write(fd, first) == len(first)
    while _unread_bytes(fd):
        assert time.monotonic() < deadline, "the worker does not read the file"
        time.sleep(0.02)
    address = _worker_processing(client, "file5", deadline)
    pid = client.run(os.getpid, workers=[address])[address]
    (tmp_path / "whole").write_bytes(whole)
    os.replace(tmp_path / "whole", files[5])
    with _worker_killed(pid, deadline):
        os.close(fd)
        thread.join(120)
        assert not thread.is_alive()
        assert "error" not in result, result.get("error")
        fastsw.shard(files, tok, tmp_path / "local", shard_tokens=4000)
        assert shard_bytes(tmp_path / "dask") == shard_bytes(tmp_path / "local")
        client.wait_for_workers(2, timeout=240)  # the next tests' cluster: both workers


def test_cli_dask_local(capsys, model_file, tmp_path):
    files = many_files(tmp_path / "in", per_file=3)
    code, _, err = run(
        capsys,
        "shard",
        tmp_path / "in",
        "-m",
        model_file,
        "-o",
        tmp_path / "dask",
        "--dask-local",
        "2",
        "--shard-tokens",
        "3000",
        "--no-progress",
    )
    assert code == 0, err
    fastsw.shard(files, fastsw.Tokenizer.load(model_file), tmp_path / "local", shard_tokens=3000)
    assert shard_bytes(tmp_path / "dask") == shard_bytes(tmp_path / "local")


def test_a_tokenizer_that_has_encoded_pickles(tok):
    import pickle

    text = heldout("ru", 1)[0]
    want = tok.encode_ordinary(text)  # builds the fast encoder, which does not pickle
    assert pickle.loads(pickle.dumps(tok)).encode_ordinary(text) == want


def test_hf_datasets_map_recipe_with_num_proc(tok, tmp_path):
    """The documented recipe: Dataset.map(batched=True, num_proc=2) with fastsw, then one flat uint16 file; the
    same bytes as fastsw.shard's single shard."""
    import datasets

    docs = heldout("en", 20) + heldout("zh", 20)
    tok.encode_ordinary("warm")  # a tokenizer that has encoded goes to the worker processes
    ds = datasets.Dataset.from_dict({"text": docs})
    eot = tok.eot_token

    def tokenize(batch):
        ids = tok.encode_ordinary_batch(batch["text"], num_threads=1)
        return {"ids": [x + [eot] for x in ids], "len": [len(x) + 1 for x in ids]}

    tokenized = ds.map(tokenize, batched=True, num_proc=2, remove_columns=["text"])
    arr = np.memmap(tmp_path / "train.bin", dtype=np.uint16, mode="w+", shape=(sum(tokenized["len"]),))
    at = 0
    for row in tokenized.with_format("numpy").iter(batch_size=8):
        flat = np.concatenate(row["ids"])
        arr[at : at + len(flat)] = flat
        at += len(flat)
    arr.flush()
    del arr
    m = fastsw.shard(write_jsonl(tmp_path / "docs.jsonl", docs), tok, tmp_path / "shards")
    assert len(m["shards"]) == 1
    assert (tmp_path / "train.bin").read_bytes() == (tmp_path / "shards" / "shard_000000.bin").read_bytes()


# ---- parquet ------------------------------------------------------------------------------------------------------


def write_parquet(path, docs, field="text", row_group_size=7):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({field: docs, "id": list(range(len(docs)))}), path, row_group_size=row_group_size)
    return path


def test_parquet_inputs_read_in_record_batches(tok, tmp_path):
    docs = heldout("ko", 15) + heldout("hi", 15)
    src = write_parquet(tmp_path / "a.parquet", docs, field="body")
    assert list(fastsw.iter_documents(src, text_field="body")) == docs
    m = fastsw.shard(src, tok, tmp_path / "o", text_field="body", shard_tokens=5000)
    assert [d[:-1].tolist() for d in documents_of(tmp_path / "o", m)] == [tok.encode_ordinary(t) for t in docs]
    assert resolve_inputs(tmp_path) == [str(src)]


def test_parquet_errors_name_the_file(capsys, model_file, tmp_path):
    src = write_parquet(tmp_path / "a.parquet", ["x", None, "y"])
    with pytest.raises(fastsw.InputError, match=r"a\.parquet row 2: column \"text\" is null"):
        list(fastsw.iter_documents(src))
    code, _, err = run(
        capsys, "shard", src, "-m", model_file, "-o", tmp_path / "o", "--text-field", "body", "--no-progress"
    )
    assert_error(code, err, "a.parquet", 'no column "body"', "--text-field")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(fastsw.InputError, match=r"bad\.parquet: cannot read it as parquet"):
        list(fastsw.iter_documents(tmp_path / "bad.parquet"))


# ---- fastsw encode --format ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["bin", "npy"])
def test_encode_stdin_to_stdout_binary(tok, model_file, tmp_path, fmt):
    lines = [t.replace("\n", " ") + "\n" for t in heldout("th", 5) + heldout("en", 5)]
    done = subprocess.run(
        [sys.executable, "-m", "fastsw", "encode", "-m", str(model_file), "--format", fmt],
        input="".join(lines).encode(),
        capture_output=True,
        env=child_env(),
    )
    assert done.returncode == 0, done.stderr
    eot = tok.eot_token
    want = [i for line in lines for i in tok.encode_ordinary(line) + [eot]]
    if fmt == "bin":
        got = np.frombuffer(done.stdout, "<u2")
    else:
        (tmp_path / "a.npy").write_bytes(done.stdout)
        got = np.load(tmp_path / "a.npy")
    assert got.tolist() == want


def test_encode_files_to_a_file_equals_one_shard(capsys, tok, model_file, mixed, tmp_path):
    src, _ = mixed
    files = resolve_inputs(src)
    code, _, err = run(capsys, "encode", "-m", model_file, *files, "--format", "bin", "-o", tmp_path / "all.bin")
    assert code == 0, err
    fastsw.shard(files, tok, tmp_path / "s", shard_tokens=10**7)
    assert (tmp_path / "all.bin").read_bytes() == (tmp_path / "s" / "shard_000000.bin").read_bytes()
    code, _, err = run(
        capsys,
        "encode",
        "-m",
        model_file,
        files[0],
        "--format",
        "npy",
        "--dtype",
        "uint32",
        "--eot",
        "none",
        "-o",
        tmp_path / "a.npy",
    )
    assert code == 0, err
    a = np.load(tmp_path / "a.npy")
    assert a.dtype == np.uint32
    assert a.tolist() == [i for d in fastsw.iter_documents(Path(files[0])) for i in tok.encode_ordinary(d)]


def test_progress_reports_speed_and_shards(tok, mixed, tmp_path, capsys):
    fastsw.shard(mixed[0], tok, tmp_path, shard_tokens=3000, progress=True, batch_chars=20_000)
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("shard: ") and "MB/s" in last and "M tokens/s" in last and "shards" in last
    assert "ETA" in last  # the files read so far give the time left


def test_empty_documents_without_separators_are_indexed(sample_docs, tmp_path):
    plain = fastsw.train(sample_docs[:50], vocab_size=400)
    docs = ["abc", "", "de", ""]
    src = write_jsonl(tmp_path / "a.jsonl", docs)
    m = fastsw.shard(src, plain, tmp_path / "o", eot=None, shard_tokens=10**6)
    assert m["documents"] == 4
    got = [d.tolist() for d in documents_of(tmp_path / "o", m)]
    assert got == [plain.encode_ordinary(t) for t in docs]


def test_verify_names_another_model(capsys, tok, model_file, sample_docs, mixed, tmp_path):
    fastsw.shard(mixed[0], tok, tmp_path / "o")
    other = tmp_path / "other.json"
    fastsw.train(sample_docs[:50], vocab_size=400, special_tokens=["<|endoftext|>"]).save(other)
    code, _, err = run(capsys, "shard", "-m", other, "-o", tmp_path / "o", "--verify")
    assert_error(code, err, "another model")


def test_changed_input_is_not_resumed(tok, tmp_path):
    src = write_jsonl(tmp_path / "a.jsonl", heldout("fi", 30))
    m = fastsw.shard(src, tok, tmp_path / "o", shard_tokens=2000)
    manifest = tmp_path / "o" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["shards"], data["complete"] = data["shards"][:2], False  # as after an interruption
    manifest.write_text(json.dumps(data))
    write_jsonl(src, heldout("fi", 31))
    with pytest.raises(ShardError, match=r"a\.jsonl: the file changed"):
        fastsw.shard(src, tok, tmp_path / "o", shard_tokens=2000)
    assert m["complete"]


def test_cli_says_when_the_model_has_no_end_of_text(capsys, sample_docs, tmp_path):
    plain = tmp_path / "plain.json"
    fastsw.train(sample_docs[:50], vocab_size=400).save(plain)
    src = write_jsonl(tmp_path / "a.jsonl", heldout("en", 2))
    code, _, err = run(capsys, "shard", src, "-m", plain, "-o", tmp_path / "o", "--no-progress")
    assert code == 0 and "has no <|endoftext|>" in err and "--eot TOKEN" in err
    code, _, err = run(capsys, "shard", src, "-m", plain, "-o", tmp_path / "p", "--eot", "<|x|>", "--no-progress")
    assert_error(code, err, "not one token")
    code, _, err = run(capsys, "shard", src, "-m", plain, "-o", tmp_path / "q", "--dtype", "uint16", "--no-progress")
    assert code == 0, err


def test_o200k_ids_need_uint32(tmp_path):
    from fastsw.io import tiktoken_vocab as tv

    o200k = fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file("o200k_base"), pattern="o200k")
    src = write_jsonl(tmp_path / "a.jsonl", heldout("en", 2))
    with pytest.raises(ValueError, match="dtype=uint16 cannot hold this model's ids"):
        fastsw.shard(src, o200k, tmp_path / "o", dtype="uint16")
    assert not (tmp_path / "o").exists()  # refused before anything is written
    m = fastsw.shard(src, o200k, tmp_path / "o")
    assert m["options"]["dtype"] == "uint32" and m["options"]["eot"] == 199999
    assert [d[:-1].tolist() for d in documents_of(tmp_path / "o", m)] == [
        o200k.encode_ordinary(t) for t in heldout("en", 2)
    ]


def test_docstring_examples():
    import doctest
    import warnings
    import fastsw.corpus.readers

    for module in (
        sys.modules["fastsw.encoding.shard"],
        fastsw.corpus.readers,
    ):  # readers: its spans of files and of stdin
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the examples' models reach their vocabulary size
            assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


# ---- input positions, stdin, progress -------------------------------------------------------------------------------


def test_manifest_gives_the_byte_range_each_shard_covers(tok, mixed, tmp_path):
    src, _ = mixed
    files = resolve_inputs(src)
    m = fastsw.shard(src, tok, tmp_path / "o", shard_tokens=3000, batch_chars=20_000)
    ids = all_ids(tmp_path / "o", m)
    eot = tok.special_tokens["<|endoftext|>"]
    at = 0
    for s in m["shards"]:
        stream = []  # the framed documents the shard's ranges name, from the input bytes alone
        for cover in s["inputs"]:
            path, (d0, d1) = files[cover["file"]], cover["documents"]
            if path.endswith(".gz"):  # no byte range in a compressed file: the document numbers only
                assert cover["bytes"] is None
                docs = [json.loads(line)["text"] for line in gzip.open(path, "rt", encoding="utf-8")][d0:d1]
            else:
                b0, b1 = cover["bytes"]
                piece = Path(path).read_bytes()[b0:b1].decode("utf-8")
                docs = (
                    [json.loads(line)["text"] for line in piece.splitlines()]
                    if path.endswith(".jsonl")
                    else piece.splitlines(keepends=True)
                )
                assert len(docs) == d1 - d0
            for d in docs:
                stream += tok.encode_ordinary(d) + [eot]
        skip = s["start"]["token"]  # the tokens of the first document that the shard before holds
        assert ids[at : at + s["tokens"]].tolist() == stream[skip : skip + s["tokens"]]
        at += s["tokens"]
    ranges = [(c["file"], c["bytes"]) for s in m["shards"] for c in s["inputs"] if c["bytes"]]
    last = {}
    for f, (b0, b1) in ranges:  # each uncompressed file is covered from its first byte to its last
        assert b0 <= last.get(f, 0) <= b1
        last[f] = b1
    assert last == {k: os.path.getsize(f) for k, f in enumerate(files) if not f.endswith(".gz")}


def test_byte_ranges_are_the_same_after_a_resume(tok, mixed, tmp_path):
    src, _ = mixed
    whole = fastsw.shard(src, tok, tmp_path / "a", shard_tokens=3000, batch_chars=20_000)
    fastsw.shard(src, tok, tmp_path / "b", shard_tokens=3000, batch_chars=20_000)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    keep = manifest["shards"][:3]  # as if the run had stopped after three shards
    for s in manifest["shards"][3:]:
        (tmp_path / "b" / s["path"]).unlink()
        (tmp_path / "b" / s["index"]).unlink()
    manifest.update(shards=keep, complete=False)
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest))
    resumed = fastsw.shard(src, tok, tmp_path / "b", shard_tokens=3000, batch_chars=50_000, workers=1)
    assert [s["inputs"] for s in resumed["shards"]] == [s["inputs"] for s in whole["shards"]]
    assert folder_bytes(tmp_path / "a") == folder_bytes(tmp_path / "b")


def test_a_shard_is_listed_by_one_journal_line_not_a_manifest_rewrite(tok, mixed, tmp_path, monkeypatch):
    """The manifest is written at the start and at the end of a run, not once per shard (that cost grows with the
    shards before it); in between, each finished shard is one appended line of the journal."""
    import fastsw.encoding.shard as shard_module

    src, _ = mixed
    writes, journal_lines = [], []
    write_manifest, append_journal = shard_module._write_manifest, shard_module._append_journal

    def counted_write(out_dir, manifest):
        writes.append(len(manifest["shards"]))
        write_manifest(out_dir, manifest)

    def counted_append(out_dir, entry):
        journal_lines.append(entry["path"])
        append_journal(out_dir, entry)
        assert len((out_dir / "manifest.journal.jsonl").read_text().splitlines()) == len(journal_lines)

    monkeypatch.setattr(shard_module, "_write_manifest", counted_write)
    monkeypatch.setattr(shard_module, "_append_journal", counted_append)
    m = fastsw.shard(src, tok, tmp_path / "o", shard_tokens=1500, batch_chars=20_000)
    assert len(m["shards"]) >= 10
    assert writes == [0, len(m["shards"])]
    assert journal_lines == [s["path"] for s in m["shards"]]
    assert not (tmp_path / "o" / "manifest.journal.jsonl").exists()  # folded into manifest.json
    assert json.loads((tmp_path / "o" / "manifest.json").read_text()) == m


def stopped_after(out, whole, manifest_lists, journal_lists, torn=None):
    """Make ``out`` (a complete run's folder) look like a run stopped with ``manifest_lists`` shards in
    manifest.json, shards ``journal_lists`` (a range) in its journal, then ``torn`` (a shard's entry) written in
    part, its shard file on disk; the shards after it are gone."""
    shards = whole["shards"]
    manifest = {**whole, "shards": shards[:manifest_lists], "complete": False}
    del manifest["tokens"], manifest["documents"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    lines = "".join(json.dumps(shards[k]) + "\n" for k in journal_lists)
    if torn is not None:
        lines += json.dumps(shards[torn])[:40]
    (out / "manifest.journal.jsonl").write_text(lines)
    last = torn if torn is not None else journal_lists[-1]
    for s in shards[last + 1 :]:
        (out / s["path"]).unlink()
        (out / s["index"]).unlink()


def test_resume_after_a_torn_journal_line_loses_and_repeats_nothing(tok, mixed, tmp_path):
    """A crash while a journal line is written: the shards of the whole lines are complete, the shard of the torn
    line is written again (here its file is damaged, as a crash while renaming could leave it), and the journal's
    lines of shards the manifest already lists (a crash after the manifest took them in) are passed over."""
    src, _ = mixed
    whole = fastsw.shard(src, tok, tmp_path / "whole", shard_tokens=1500, batch_chars=20_000)
    reference = folder_bytes(tmp_path / "whole")
    out = tmp_path / "stopped"
    fastsw.shard(src, tok, out, shard_tokens=1500, batch_chars=20_000)
    stopped_after(out, whole, manifest_lists=3, journal_lists=range(1, 6), torn=6)
    (out / whole["shards"][6]["path"]).write_bytes(b"damaged")
    m = verify(out)  # the listed shards: the manifest's and the journal's whole lines
    assert [s["path"] for s in m["shards"]] == [s["path"] for s in whole["shards"][:6]] and not m["complete"]
    assert read_manifest(out) == m
    resumed = fastsw.shard(src, tok, out, shard_tokens=1500, batch_chars=50_000, workers=1)
    assert resumed == json.loads((out / "manifest.json").read_text())
    assert folder_bytes(out) == reference


def test_a_damaged_journal_is_refused(tok, mixed, tmp_path):
    src, _ = mixed
    whole = fastsw.shard(src, tok, tmp_path / "o", shard_tokens=1500, batch_chars=20_000)
    stopped_after(tmp_path / "o", whole, manifest_lists=1, journal_lists=[1, 3])  # shard 2 is missing
    with pytest.raises(ShardError, match=r"line 2 lists shard_000003\.bin, but the next shard is shard_000002"):
        verify(tmp_path / "o")
    with pytest.raises(ShardError, match="damaged"):
        fastsw.shard(src, tok, tmp_path / "o", shard_tokens=1500, batch_chars=20_000)
    (tmp_path / "o" / "manifest.journal.jsonl").write_text("{not json\n" + json.dumps(whole["shards"][1]) + "\n")
    with pytest.raises(ShardError, match="line 1 is not a shard's entry"):
        verify(tmp_path / "o")


@pytest.mark.parametrize("kind", ["jsonl", "txt"])
def test_stdin_gives_the_shards_of_the_file(model_file, tok, mixed, tmp_path, kind):
    src, _ = mixed
    path = src / ("a.jsonl" if kind == "jsonl" else "c.txt")
    fastsw.shard(path, tok, tmp_path / "file", shard_tokens=3000)
    cmd = [
        sys.executable,
        "-m",
        "fastsw",
        "shard",
        "-",
        "-m",
        str(model_file),
        "-o",
        str(tmp_path / "stdin"),
        "--shard-tokens",
        "3000",
        "--no-progress",
    ]
    with open(path, "rb") as f:
        done = subprocess.run(cmd, stdin=f, capture_output=True, text=True, env=child_env())
    assert done.returncode == 0, done.stderr
    mine = {k: v for k, v in folder_bytes(tmp_path / "stdin").items() if k != "manifest.json"}
    assert mine == {k: v for k, v in folder_bytes(tmp_path / "file").items() if k != "manifest.json"}
    a = json.loads((tmp_path / "stdin" / "manifest.json").read_text())
    b = json.loads((tmp_path / "file" / "manifest.json").read_text())
    assert a["inputs"] == [{"path": "-", "bytes": None, "mtime_ns": None}]
    # stdin has no byte ranges, only the document numbers
    assert [[dict(c, bytes=None) for c in s["inputs"]] for s in b["shards"]] == [s["inputs"] for s in a["shards"]]
    with open(path, "rb") as f:  # the same command again: stdin cannot be resumed
        again = subprocess.run(cmd, stdin=f, capture_output=True, text=True, env=child_env())
    assert_error(again.returncode, again.stderr, "stdin", "cannot be resumed")


def test_stdin_is_the_only_input_and_not_on_dask(capsys, model_file, mixed, tmp_path):
    code, _, err = run(capsys, "shard", "-", mixed[0] / "a.jsonl", "-m", model_file, "-o", tmp_path / "o")
    assert_error(code, err, "stdin", "only input")
    assert not (tmp_path / "o").exists()


def test_stdin_jsonl_errors_name_stdin_and_line(model_file, tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "fastsw",
        "shard",
        "-",
        "-m",
        str(model_file),
        "-o",
        str(tmp_path / "o"),
        "--no-progress",
    ]
    data = '{"text": "fine"}\n{"text": 3}\n'
    done = subprocess.run(cmd, input=data, capture_output=True, text=True, env=child_env())
    assert_error(done.returncode, done.stderr, "<stdin> line 2", "not a string")


def test_progress_has_an_eta_within_a_single_file(tok, mixed, tmp_path, monkeypatch):
    from fastsw.progress import Progress

    seen = []
    real = Progress.update

    def record(self, n=1, extra=None):
        seen.append(extra)
        return real(self, n, extra)

    monkeypatch.setattr(Progress, "update", record)
    fastsw.shard(mixed[0] / "a.jsonl", tok, tmp_path, progress=True, batch_chars=5_000)
    assert len(seen) > 3
    assert all("ETA" in extra for extra in seen)  # bytes read over total bytes, known from the first batch on


@pytest.mark.parametrize("reading", [{}, {"doc_mode": "file"}, {"separator": "。"}, {"separator": "\n\n"}])
def test_document_spans_are_the_documents_and_their_bytes(mixed, tmp_path, reading):
    from fastsw.corpus.readers import iter_document_spans

    path = tmp_path / "t.txt"
    path.write_text("\n".join(heldout("zh", 8)) + "\n\n\nend", encoding="utf-8")
    data = path.read_bytes()
    spans = list(iter_document_spans(path, **reading))
    assert [d for d, _, _ in spans] == list(fastsw.iter_documents(path, **reading))
    sep = reading.get("separator", "").encode("utf-8")
    for k, (doc, a, b) in enumerate(spans):
        piece = data[a:b]
        assert piece == doc.encode("utf-8") + (sep if sep and k < len(spans) - 1 else b"")
    assert spans[0][1] == 0 and spans[-1][2] == len(data)
