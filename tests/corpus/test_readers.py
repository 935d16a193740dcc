"""Tests for fastsw.corpus.readers: formats, document modes, streaming, error messages, and the shared corpora."""

from __future__ import annotations

import gzip
import inspect
import itertools
import json
import re
from pathlib import Path

import pytest

from fastsw.corpus import readers
from fastsw.corpus.readers import InputError, iter_documents, open_text

from conftest import shared_path


def shared_file(relative: str) -> Path:
    """A file under the shared directory (FASTSW_SHARED, else ../shared next to the repository); fail if missing."""
    path = shared_path(relative)
    if not path.is_file():
        pytest.fail(f"shared test file {path} is missing; set FASTSW_SHARED to the shared directory", pytrace=False)
    return path


def write_jsonl(path: Path, rows: list[object], *, gz: bool = False) -> Path:
    data = "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def reference_split(text: str, sep: str) -> list[str]:
    """What separator mode promises: str.split, minus a trailing empty piece."""
    pieces = text.split(sep)
    if pieces[-1] == "":
        pieces.pop()
    return pieces


# ---- JSON Lines ---------------------------------------------------------------------------------------------------

DOCS = ["  leading and trailing spaces  ", "line one\nline two\n", "", "naïve café 東京 😀", "\r\n", "tab\there"]


def test_jsonl_document_is_the_field_exactly(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": i, "text": d} for i, d in enumerate(DOCS)])
    assert list(iter_documents(path)) == DOCS
    assert list(iter_documents(str(path))) == DOCS


def test_jsonl_skips_blank_lines_and_accepts_crlf(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'\n{"text": "a"}\r\n   \n\t\r\n{"text": " b "}\n\n')
    assert list(iter_documents(path)) == ["a", " b "]


@pytest.mark.parametrize("name", ["c.jsonl.gz", "c.ndjson", "c.ndjson.gz", "C.JSONL", "c.JsonL.Gz"])
def test_jsonl_names_and_gzip(tmp_path, name):
    path = write_jsonl(tmp_path / name, [{"text": d} for d in DOCS], gz=name.lower().endswith(".gz"))
    assert list(iter_documents(path)) == DOCS


def test_jsonl_custom_text_field_and_doc_mode_ignored(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"body": "x\ny", "text": 1}, {"body": "z"}])
    assert list(iter_documents(path, text_field="body")) == ["x\ny", "z"]
    # doc_mode only cuts plain text; a JSONL record is always one document
    assert list(iter_documents(path, text_field="body", doc_mode="file")) == ["x\ny", "z"]


def test_jsonl_surrogate_pair_escape_is_fine(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "\\ud83d\\ude00 \\\\ud800"}\n', encoding="utf-8")  # a real pair, and an escaped "\"
    assert list(iter_documents(path)) == ["😀 \\ud800"]


# ---- plain text ---------------------------------------------------------------------------------------------------

TEXT = "first line\r\nsecond\n\n x\ry \n東京 😀\nno final newline"


@pytest.mark.parametrize("doc_mode", ["auto", "line"])
def test_line_mode_keeps_newlines_and_cr(tmp_path, doc_mode):
    path = tmp_path / "c.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    docs = list(iter_documents(path, doc_mode=doc_mode))
    # split only at "\n", which stays in the document; "\r" is ordinary text
    assert docs == ["first line\r\n", "second\n", "\n", " x\ry \n", "東京 😀\n", "no final newline"]
    assert "".join(docs) == TEXT


def test_line_mode_gzip_and_empty_file(tmp_path):
    gz = tmp_path / "c.txt.gz"
    gz.write_bytes(gzip.compress(TEXT.encode("utf-8")))
    assert "".join(iter_documents(gz)) == TEXT
    assert len(list(iter_documents(gz))) == 6
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert list(iter_documents(empty)) == []


def test_file_mode(tmp_path):
    path = tmp_path / "doc.md"
    path.write_bytes(TEXT.encode("utf-8"))
    gz = tmp_path / "doc.txt.gz"
    gz.write_bytes(gzip.compress(TEXT.encode("utf-8")))
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert list(iter_documents(path, doc_mode="file")) == [TEXT]
    assert list(iter_documents([path, gz, empty], doc_mode="file")) == [TEXT, TEXT, ""]


@pytest.mark.parametrize(
    "text",
    [
        "a\n\n\nb\n\n\nc",
        "a\n\n\nb\n\n\n",  # trailing separator: no empty last document
        "\n\n\na\n\n\n\n\n\nb",  # leading and repeated separators give empty documents, as str.split
        "a\n\n\n\nb",  # four newlines: the leftmost three are the separator
        "",
        "only one document\n\n",
    ],
)
def test_separator_mode_matches_split(tmp_path, text):
    path = tmp_path / "c.txt"
    path.write_bytes(text.encode("utf-8"))
    assert list(iter_documents(path, doc_mode="separator", separator="\n\n\n")) == reference_split(text, "\n\n\n")
    # "auto" with a separator means separator mode
    assert list(iter_documents(path, separator="\n\n\n")) == reference_split(text, "\n\n\n")


SEPARATOR_CASES = [
    ("\n\n\n", "Hé 😀 one\n\n\nsecond 東京\n\n\n\nthird\n\n\n"),
    ("¶", "x¶¶yé¶z😀¶"),
    ("aa", "aaa baaaab aaaaa"),  # overlapping candidates: leftmost non-overlapping, as str.split
    ("<doc>", "<doc>a<do<doc>b<doc"),
]


@pytest.mark.parametrize("separator,text", SEPARATOR_CASES)
@pytest.mark.parametrize("block_size", [1, 2, 3, 4, 5, 7, 64])
def test_separator_mode_across_block_boundaries(tmp_path, monkeypatch, separator, text, block_size):
    monkeypatch.setattr(readers, "READ_BLOCK_SIZE", block_size)
    expected = reference_split(text, separator)
    for name, data in [("c.txt", text.encode()), ("c.txt.gz", gzip.compress(text.encode()))]:
        path = tmp_path / name
        path.write_bytes(data)
        assert list(iter_documents(path, doc_mode="separator", separator=separator)) == expected


# ---- iterables and laziness ---------------------------------------------------------------------------------------


def test_iterables_of_str_are_documents_as_is(tmp_path):
    assert list(iter_documents(["a\n", " b ", ""])) == ["a\n", " b ", ""]
    assert list(iter_documents(("x",))) == ["x"]
    assert list(iter_documents(d for d in ["p", "q"])) == ["p", "q"]
    # a str that happens to name a file is still a document inside an iterable; Path items are files
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": "from file"}])
    with pytest.warns(UserWarning, match="pathlib.Path"):  # ... and the user is warned about it
        assert list(iter_documents([str(path), path, "end"])) == [str(path), "from file", "end"]


def test_result_is_a_lazy_generator():
    def endless():
        for i in itertools.count():
            yield f"doc {i}"

    docs = iter_documents(endless())
    assert inspect.isgenerator(docs)
    assert list(itertools.islice(docs, 3)) == ["doc 0", "doc 1", "doc 2"]


def test_jsonl_documents_come_before_a_later_bad_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "one"}\n{"text": "two"}\n{"text": \n')
    docs = iter_documents(path)
    assert inspect.isgenerator(docs)
    assert next(docs) == "one"
    assert next(docs) == "two"
    with pytest.raises(InputError, match=r"c\.jsonl line 3: invalid JSON \(Expecting value"):
        next(docs)


def test_text_documents_come_before_later_invalid_utf8(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(b"good\nalso good\nbad \xff\n")
    docs = iter_documents(path)
    assert next(docs) == "good\n"
    assert next(docs) == "also good\n"
    with pytest.raises(InputError, match="line 3"):
        next(docs)


def test_reading_a_file_does_not_read_it_whole(tmp_path, monkeypatch):
    # separator mode reads block by block: the first document is out after reading about one block
    monkeypatch.setattr(readers, "READ_BLOCK_SIZE", 16)
    path = tmp_path / "c.txt"
    path.write_bytes(b"first||" + b"x" * 100_000 + b"\xff")
    docs = iter_documents(path, separator="||")
    assert next(docs) == "first"
    with pytest.raises(InputError, match=r"line 1: invalid UTF-8 at byte offset 100007"):
        next(docs)


# ---- errors -------------------------------------------------------------------------------------------------------


def test_input_error_is_a_value_error():
    assert issubclass(InputError, ValueError)


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(InputError, match=r"nope\.jsonl: file not found"):
        iter_documents(missing)  # checked when called, before any iteration
    with pytest.raises(InputError, match="wrap it in a list"):
        iter_documents(str(missing))
    good = write_jsonl(tmp_path / "good.jsonl", [{"text": "a"}])
    with pytest.raises(InputError, match=r"nope\.jsonl: file not found"):
        iter_documents([good, missing])
    with pytest.raises(InputError, match=r"nope\.jsonl: file not found"):
        list(iter_documents(p for p in [good, missing]))  # a generator is checked as it is consumed


def test_bare_str_text_tells_to_wrap_it_in_a_list():
    expected = r"'Hello world, this is a document\.': file not found.*iter_documents\(\[text\]\)"
    with pytest.raises(InputError, match=expected):
        iter_documents("Hello world, this is a document.")
    long_text = "word " * 1000 + "\n"
    with pytest.raises(InputError, match=r"\.\.\.': file not found"):
        iter_documents(long_text)


def test_directory_is_an_error(tmp_path):
    with pytest.raises(InputError, match="is a directory; pass the files in it"):
        iter_documents(tmp_path)
    with pytest.raises(InputError, match="is a directory"):
        iter_documents([tmp_path])


def test_invalid_json_names_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"text": "a"}\n\n{"text": "b",}\n')
    with pytest.raises(InputError, match=r"corpus\.jsonl line 3: invalid JSON \(.* at column \d+\)"):
        list(iter_documents(path))


def test_line_not_an_object(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"text": "a"}\n"just a string"\n')
    with pytest.raises(InputError, match=r'line 2: expected a JSON object with a "text" field, got a string'):
        list(iter_documents(path))


def test_missing_field_lists_fields(tmp_path):
    path = write_jsonl(tmp_path / "corpus.jsonl", [{"text": "a"}] * 4 + [{"body": "b", "id": 5}])
    expected = 'corpus.jsonl line 5: no field "text" (fields: "body", "id"); use --text-field'
    with pytest.raises(InputError) as info:
        list(iter_documents(path))
    assert expected in str(info.value)
    assert "text_field=" in str(info.value)


@pytest.mark.parametrize("value,kind", [(3, "a number"), (None, "null"), (["a"], "an array"), ({"a": 1}, "an object")])
def test_field_not_a_string(tmp_path, value, kind):
    path = write_jsonl(tmp_path / "corpus.jsonl", [{"text": "a"}, {"text": value}])
    with pytest.raises(InputError, match=f'corpus.jsonl line 2: field "text" is {kind}, not a string'):
        list(iter_documents(path))


def test_lone_surrogate_escape(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"text": "ok"}\n{"text": "ab\\ud800c"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: field \"text\" has a lone surrogate \\ud800 at character 2"):
        list(iter_documents(path))


def test_invalid_utf8_in_text_names_file_line_and_offset(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("ok\ncafé\n".encode("latin-1"))  # é is the single byte 0xE9 at offset 6
    with pytest.raises(InputError) as info:
        list(iter_documents(path))
    message = str(info.value)
    assert message.startswith(f"{path} line 2: invalid UTF-8 at byte offset 6 (")
    assert "e9" in message and "iconv" in message


@pytest.mark.parametrize("doc_mode", ["line", "file", "separator"])
@pytest.mark.parametrize("block_size", [1, 3, 1 << 20])
def test_invalid_utf8_offset_in_every_mode(tmp_path, monkeypatch, doc_mode, block_size):
    monkeypatch.setattr(readers, "READ_BLOCK_SIZE", block_size)
    # 2 + 4 + 2 + 5 bytes, then a truncated 3-byte sequence: offset 13, line 6
    data = "a\nbé\n\n\nc東\n".encode() + b"\xe6\x9d" + b"\nd"
    separator = "\n\n\n" if doc_mode == "separator" else None
    cases = [("t.txt", data, "byte offset"), ("t.txt.gz", gzip.compress(data), "byte offset (decompressed)")]
    for name, raw, where in cases:
        path = tmp_path / name
        path.write_bytes(raw)
        with pytest.raises(InputError, match=rf"t\.txt(\.gz)? line 6: invalid UTF-8 at {re.escape(where)} 13 "):
            list(iter_documents(path, doc_mode=doc_mode, separator=separator))


def test_invalid_utf8_at_end_of_file(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"ab\n\xe2\x82")  # incomplete euro sign at the very end
    with pytest.raises(InputError, match=r"line 2: invalid UTF-8 at byte offset 3 \(unexpected end of data: e2 82\)"):
        list(iter_documents(path, doc_mode="file"))


def test_invalid_utf8_in_jsonl(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "a"}\n{"text": "\xc3("}\n')
    with pytest.raises(InputError, match=r"c\.jsonl line 2: invalid UTF-8 at byte offset 24"):
        list(iter_documents(path))


def test_gzip_content_without_gz_name_gets_a_hint(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(gzip.compress(b"hello\n"))
    with pytest.raises(InputError, match="looks gzip-compressed"):
        list(iter_documents(path))


def test_bad_and_truncated_gzip(tmp_path):
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b'{"text": "not compressed"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl\.gz: cannot read gzip data"):
        list(iter_documents(bad))
    truncated = tmp_path / "cut.txt.gz"
    truncated.write_bytes(gzip.compress(b"line\n" * 10_000)[:-20])
    with pytest.raises(InputError, match=r"cut\.txt\.gz: cannot read gzip data"):
        list(iter_documents(truncated))


def test_unsupported_names(tmp_path):
    for name, message in [("c.json", "use JSON Lines"), ("c.txt.lz4", "not supported"), ("c.jsonl.zip", "bzip2")]:
        path = tmp_path / name
        path.write_bytes(b"")
        with pytest.raises(InputError, match=message):
            iter_documents(path)


def test_bad_items_in_an_iterable(tmp_path):
    with pytest.raises(InputError, match=r"inputs item 1 is bytes, not str; decode it"):
        list(iter_documents(["ok", b"raw"]))
    with pytest.raises(InputError, match="inputs item 0 is int"):
        list(iter_documents([3]))


def test_bad_arguments(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(b"a\n")
    with pytest.raises(TypeError, match="inputs is bytes"):
        iter_documents(b"text")
    with pytest.raises(TypeError, match="not int"):
        iter_documents(42)
    with pytest.raises(ValueError, match="doc_mode='paragraph' is not one of"):
        iter_documents(path, doc_mode="paragraph")
    with pytest.raises(ValueError, match="needs separator="):
        iter_documents(path, doc_mode="separator")
    with pytest.raises(ValueError, match="used only with doc_mode='separator'"):
        iter_documents(path, doc_mode="line", separator="\n\n")
    with pytest.raises(ValueError, match="non-empty str"):
        iter_documents(path, separator="")
    with pytest.raises(ValueError, match="lone surrogate"):
        iter_documents(path, separator="\ud800")
    with pytest.raises(ValueError, match="text_field"):
        iter_documents(path, text_field="")


# ---- open_text ----------------------------------------------------------------------------------------------------


def test_open_text_matches_line_mode(tmp_path):
    plain = tmp_path / "c.txt"
    plain.write_bytes(TEXT.encode())
    gz = tmp_path / "c.txt.gz"
    gz.write_bytes(gzip.compress(TEXT.encode()))
    for path in (plain, gz):
        with open_text(path) as f:
            assert list(f) == list(iter_documents(path))
        with open_text(path) as f:
            assert f.read() == TEXT
    config = tmp_path / "config.json"  # open_text is a general opener: .json is fine here
    config.write_text("{}", encoding="utf-8")
    with open_text(config) as f:
        assert f.read() == "{}"


def test_open_text_errors(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        open_text(tmp_path / "missing.txt")
    path = tmp_path / "bad.txt"
    path.write_bytes(b"one\ntwo \xff\n")
    with open_text(path) as f:
        with pytest.raises(InputError, match=r"bad\.txt line 2: invalid UTF-8 at byte offset 8"):
            list(f)
    with open_text(path) as f:
        with pytest.raises(InputError, match=r"bad\.txt line 2"):
            f.read()


# ---- the shared corpora -------------------------------------------------------------------------------------------


def test_shared_heldout_one_document_per_line():
    path = shared_file("corpus/en/heldout.jsonl")
    with path.open("rb") as f:
        lines = f.readlines()
    docs = list(iter_documents(path))
    assert len(docs) == len(lines) > 0
    assert docs == [json.loads(line)["text"] for line in lines]


def test_shared_wikitext2_valid():
    path = shared_file("golden/paper_ref/inputs/wikitext2_valid.jsonl")
    docs = list(iter_documents(path))
    assert len(docs) == 3760
    assert sum(len(d.encode("utf-8")) for d in docs) == 1_121_681
    assert all(d.endswith("\n") for d in docs)  # one wikitext line per document, newline included


def test_shared_gzip_training_corpus_streams():
    path = shared_file("corpus/en/train.jsonl.gz")
    with gzip.open(path, "rb") as f:
        line_count = sum(1 for line in f if not line.isspace())
    docs = iter_documents(path)
    first = next(docs)
    assert isinstance(first, str) and first
    assert 1 + sum(1 for _ in docs) == line_count


# ---- compressed inputs: .gz, .bz2, .xz, .zst --------------------------------------------------------------------


def _compress(ext: str, data: bytes) -> bytes:
    import bz2
    import lzma

    import zstandard

    if ext == ".zst":  # two frames: a reader must go on after the first
        half = len(data) // 2
        return zstandard.ZstdCompressor().compress(data[:half]) + zstandard.ZstdCompressor().compress(data[half:])
    return {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[ext](data)


@pytest.mark.parametrize("ext", [".gz", ".bz2", ".xz", ".zst"])
@pytest.mark.parametrize("doc_mode, separator", [("line", None), ("file", None), ("separator", "\n\n\n")])
def test_compressed_text_reads_as_the_plain_file(tmp_path, monkeypatch, ext, doc_mode, separator):
    monkeypatch.setattr(readers, "READ_BLOCK_SIZE", 7)  # blocks end inside characters and separators
    data = b"".join(shared_file("corpus/ja/heldout.jsonl").read_bytes().splitlines(keepends=True)[:30])
    text = "".join(json.loads(line)["text"] + "\n\n\n" for line in data.decode().splitlines()).encode()
    plain = tmp_path / "c.txt"
    plain.write_bytes(text)
    packed = tmp_path / f"c.txt{ext.upper() if ext == '.xz' else ext}"  # suffixes are case-insensitive
    packed.write_bytes(_compress(ext, text))
    kw = {"doc_mode": doc_mode, "separator": separator}
    assert list(iter_documents(packed, **kw)) == list(iter_documents(plain, **kw))
    (tmp_path / "c.jsonl").write_bytes(data)
    jsonl = tmp_path / f"c.jsonl{ext}"
    jsonl.write_bytes(_compress(ext, data))
    assert list(iter_documents(jsonl)) == list(iter_documents(tmp_path / "c.jsonl"))
    with open_text(packed) as f:
        assert f.read() == text.decode()


@pytest.mark.parametrize("ext, kind", [(".bz2", "bzip2"), (".xz", "xz"), (".zst", "Zstandard")])
def test_bad_and_truncated_compressed_files_name_the_file(tmp_path, ext, kind):
    bad = tmp_path / f"bad.txt{ext}"
    bad.write_bytes(b"this is not compressed data at all\n")
    with pytest.raises(InputError, match=rf"bad\.txt\{ext}: cannot read {kind} data"):
        list(iter_documents(bad))
    cut = tmp_path / f"cut.jsonl{ext}"
    cut.write_bytes(_compress(ext, b'{"text": "line"}\n' * 20_000)[:-20])
    with pytest.raises(InputError, match=rf"cut\.jsonl\{ext}: cannot read {kind} data"):
        list(iter_documents(cut))


def test_invalid_utf8_in_a_compressed_file_names_the_decompressed_offset(tmp_path):
    path = tmp_path / "latin.txt.xz"
    path.write_bytes(_compress(".xz", b"ok\ncaf\xe9\n"))
    with pytest.raises(InputError, match=r"latin\.txt\.xz line 2: invalid UTF-8 at byte offset \(decompressed\) 6"):
        list(iter_documents(path))


def test_zst_without_zstandard_names_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "c.jsonl.zst"
    path.write_bytes(_compress(".zst", b'{"text": "a"}\n'))
    monkeypatch.setattr(readers, "_zstd", None)  # as if the package were not installed
    for call in (lambda: iter_documents(path), lambda: open_text(path)):
        with pytest.raises(InputError, match=r"pip install 'fastsw\[zstd\]'"):
            call()
