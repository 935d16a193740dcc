"""fastsw's own model file format (version 1).

One UTF-8 JSON object::

    {
      "format": "fastsw",            # magic
      "format_version": 1,
      "algo": "bpe" | "boundless" | "superbpe",
      "profile": "paper" | "hf",
      "alphabet": {"kind": "bytes243"}                # profile paper
                  | {"kind": "bytes256"}              # profile hf
                  | {"kind": "chars", "chars": "...", "byte_fallback": false},   # profile hf
      "pretokenizer": {"mode", "main_pattern", "script_specific_pattern",
                       "script_specific_scripts", "letter_pattern"},
      "merges": [[left_id, right_id, count, is_super], ...],   # rank/id order
      "special_tokens": {"<|endoftext|>": 2000, ...},
      "training": {...}                 # informational: options, timings
    }

:func:`check_model_data` checks every field when a file is loaded.
Merge k creates token id ``len(alphabet) + k``; a token's bytes are its parents'
bytes concatenated, so the file is lossless without storing token strings.
Files are written to a temporary file in the same directory and renamed, so a
crash never leaves half a model; :func:`atomic_open` does this for every writer of
fastsw (models, count tables, exports) and owns the output path rule (symlinks
followed, anything but a regular file refused, errors naming the user's path).
Pickle is never used.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Optional, Tuple

from .alphabet import alphabet_from_config
from .pretokenize import Pretokenizer

FORMAT = "fastsw"
FORMAT_VERSION = 1


class OutputError(OSError):
    """An output file that could not be written, or a path fastsw will not replace.

    ``str(e)`` is one line: the path the caller gave, what went wrong and what to
    do. ``e.filename`` is that path (``None`` for an empty one) and ``e.errno`` the
    underlying error number (``EINVAL`` for a refused path), as for any ``OSError``.

        >>> import fastsw
        >>> tok = fastsw.train(["a b"], vocab_size=244)
        >>> try:
        ...     tok.save("/dev/null")
        ... except OSError as e:
        ...     print(str(e).split(";")[0])
        /dev/null: is a character device, not a regular file
    """

    def __init__(self, path: Optional[str], problem: str, errno_: int):
        super().__init__(errno_, problem)
        self.filename = path

    def __str__(self) -> str:
        return self.strerror if self.filename is None else f"{self.filename}: {self.strerror}"


# errno -> (what happened, what to do), for the failures a user can act on.
_WRITE_ADVICE = {
    errno.ENOSPC: ("no space left on device", "free some space or choose another output path"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or choose another output path"),
    errno.EROFS: ("the file system is read-only", "choose another output path"),
    errno.EFBIG: ("the file is too large for the file system or the file size limit (ulimit -f)",
                  "raise the limit or choose another output path"),
}


def _write_error(name: str, directory: str, e: OSError) -> OutputError:
    """``e`` (from creating, writing, syncing or renaming the temporary file) reported against the target."""
    if e.errno in (errno.EACCES, errno.EPERM):
        problem, advice = f"permission denied in {directory}", "choose a writable directory"
    else:
        problem, advice = _WRITE_ADVICE.get(e.errno, (e.strerror or str(e) or type(e).__name__,
                                                      "check the path or choose another output path"))
    return OutputError(name, f"{problem} while writing it; {advice}", e.errno or errno.EIO)


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def resolve_output_path(path) -> Tuple[str, str, Optional[os.stat_result]]:
    """Check an output path before anything is written to it; the one place that owns the rule.

    Returns ``(name, target, stat)``: the path as the caller gave it (for messages),
    the file to replace (symlinks followed, so a symlink's target is replaced and the
    link kept) and that file's ``os.stat`` result, or ``None`` when it does not exist
    yet. Raises :class:`OutputError` for an empty path, an existing target that is not
    a regular file (directory, FIFO, device, socket), a missing or unwritable directory.

        >>> resolve_output_path("model.json")[0]
        'model.json'
    """
    try:
        name = os.fspath(path)
    except TypeError:
        raise TypeError(f"an output path must be a str or os.PathLike, not {type(path).__name__}") from None
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not name:
        raise OutputError(None, "the output path is empty; give a file name, e.g. model.json", errno.EINVAL)
    target = os.path.realpath(name)
    link = f"is a symlink to {target}, which is " if os.path.islink(name) else "is "
    directory = os.path.dirname(target)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:  # ENOTDIR (a parent is a file), ELOOP (a symlink loop), EACCES (a parent)
        raise OutputError(name, f"cannot use it as an output path ({e.strerror}); choose another output path",
                          e.errno or errno.EINVAL) from e
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = next((what for test, what in _KINDS if test(st.st_mode)), "not a regular file")
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(name, f"{link}a directory; give the path of a file inside it", errno.EISDIR)
        raise OutputError(name, f"{link}{kind}, not a regular file; give the path of a regular file "
                                "(fastsw replaces its output file as a whole)", errno.EINVAL)
    if name.endswith((os.sep, "/")):
        raise OutputError(name, "ends with a path separator, so it names a directory; give a file name, "
                                f"e.g. {os.path.join(name, 'model.json')}", errno.EISDIR)
    if not os.path.isdir(directory):
        shown = directory if link != "is " else (os.path.dirname(name) or ".")
        raise OutputError(name, f"the directory {shown} does not exist; create it first or choose another "
                                "output path", errno.ENOENT)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(name, f"permission denied creating a file in {directory}; choose a writable directory",
                          errno.EACCES)
    return name, target, st


class _OutputFile:
    """The temporary file as handed to a writer: its write errors name the target path."""

    def __init__(self, f, name: str, directory: str):
        self._f = f
        self._name = name
        self._directory = directory

    def write(self, data):
        try:
            return self._f.write(data)
        except OSError as e:
            raise _write_error(self._name, self._directory, e) from e

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._f.flush()
        except OSError as e:
            raise _write_error(self._name, self._directory, e) from e

    def __getattr__(self, attr):
        return getattr(self._f, attr)


def _discard(f, tmp: str) -> None:
    try:
        f.close()  # closes the descriptor even when the final flush fails
    except OSError:
        pass
    try:
        os.unlink(tmp)
    except OSError:
        pass


@contextlib.contextmanager
def atomic_open(path, mode: str = "w"):
    """Open a temporary file next to ``path``'s target for writing (``"w"`` UTF-8 text or
    ``"wb"``); on a clean exit it is synced, given the permissions a plain ``open`` would
    (those of the file it replaces, else 0666 minus the umask; mkstemp makes 0600) and
    renamed over the target. On any error it is removed, so the target is either the old
    file or the complete new one. Every writer of fastsw goes through here.

    The target is :func:`resolve_output_path`'s: a symlink is followed (its target is
    replaced, the link kept); an existing directory, FIFO, device or socket, an empty
    path and a missing directory are refused. Failures of the file system (full disk,
    permissions, ...) raise :class:`OutputError` naming ``path``, never the temporary file.
    """
    name, target, st = resolve_output_path(path)
    directory = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise _write_error(name, directory, e) from e
    f = os.fdopen(fd, mode, encoding="utf-8") if "b" not in mode else os.fdopen(fd, mode)
    try:
        yield _OutputFile(f, name, directory)
    except BaseException:
        _discard(f, tmp)
        raise
    try:
        f.flush()
        os.fsync(f.fileno())
        f.close()
        if st is not None:
            permissions = stat.S_IMODE(st.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            permissions = 0o666 & ~umask
        os.chmod(tmp, permissions)
        os.replace(tmp, target)
    except BaseException as e:
        _discard(f, tmp)
        if isinstance(e, OSError):
            raise _write_error(name, directory, e) from e
        raise


def atomic_write_text(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "w") as f:
        f.write(text)


def model_to_dict(tok) -> dict:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "algo": tok.algo,
        "profile": tok.profile,
        "alphabet": tok.alphabet.to_config(),
        "pretokenizer": tok.pretokenizer.to_config(),
        "merges": [[m.left, m.right, m.count, int(m.super)] for m in tok.merges],
        "special_tokens": dict(tok.special_tokens),
        "training": tok.training_info,
    }


def save_model(tok, path) -> None:
    text = json.dumps(model_to_dict(tok), ensure_ascii=False, separators=(",", ":"))
    atomic_write_text(path, text + "\n")


def read_model_text(path: Path) -> str:
    """A model file's text; a missing or unreadable file is a ``ValueError`` naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: model file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read model file ({e})") from e


_FIELDS = ("format", "format_version", "algo", "profile", "alphabet", "pretokenizer", "merges", "special_tokens",
           "training")
_ALPHABET_SETTINGS = {"bytes243": ("kind",), "bytes256": ("kind",), "chars": ("kind", "chars", "byte_fallback")}
_PRETOKENIZER_STRINGS = ("mode", "main_pattern", "script_specific_pattern", "letter_pattern")
_INT64_MAX = 2 ** 63 - 1


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _json_type(x) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number"}[type(x)]


def check_model_data(path, data: dict) -> None:
    """Schema check of a parsed model file (after its format and version): types and
    ranges of every field, merges that only use earlier ids, an alphabet that goes with
    the profile, special token ids right after the vocabulary. Every failure is one
    ``ValueError("PATH: field X: ...")``, so a damaged or hand-edited file never loads
    with silently different ids.

        >>> check_model_data("m.json", {"format": "fastsw", "format_version": 1, "algo": "bpe",  # doctest: +ELLIPSIS
        ...     "profile": "paper", "alphabet": {"kind": "bytes256"}, "pretokenizer": {}, "merges": []})
        Traceback (most recent call last):
        ValueError: m.json: field alphabet.kind: 'bytes256' does not go with profile 'paper' (which uses bytes243); ...
    """
    from .tokenizer import ALGOS
    from .alphabet import PROFILE_ALPHABETS

    def bad(field: str, problem: str) -> ValueError:
        return ValueError(f"{path}: field {field}: {problem}")

    for field in data:
        if field not in _FIELDS:
            raise bad(field, f"unknown field; a fastsw model has {', '.join(_FIELDS)}")
    for field in ("algo", "profile", "alphabet", "pretokenizer", "merges"):
        if field not in data:
            raise bad(field, "missing; the file is incomplete, save the model again")
    algo, profile, alphabet = data["algo"], data["profile"], data["alphabet"]
    if algo not in ALGOS:
        raise bad("algo", f"{algo!r} is not one of {', '.join(ALGOS)}")
    if profile not in PROFILE_ALPHABETS:
        raise bad("profile", f"{profile!r} is not one of {', '.join(PROFILE_ALPHABETS)}")

    if not isinstance(alphabet, dict):
        raise bad("alphabet", f"must be an object such as {{\"kind\": \"bytes243\"}}, not {_json_type(alphabet)}")
    kind = alphabet.get("kind")
    if kind not in _ALPHABET_SETTINGS:
        raise bad("alphabet.kind", f"{kind!r} is not one of {', '.join(_ALPHABET_SETTINGS)}")
    if kind not in PROFILE_ALPHABETS[profile]:
        raise bad("alphabet.kind", f"{kind!r} does not go with profile {profile!r} (which uses "
                                   f"{' or '.join(PROFILE_ALPHABETS[profile])}); every id would mean another "
                                   "token, so the file was damaged or edited")
    for key in alphabet:
        if key not in _ALPHABET_SETTINGS[kind]:
            raise bad(f"alphabet.{key}", f"unknown setting for a {kind} alphabet")
    n_alphabet = 243 if kind == "bytes243" else 256
    if kind == "chars":
        chars, fallback = alphabet.get("chars"), alphabet.get("byte_fallback", False)
        if not isinstance(chars, str):
            raise bad("alphabet.chars", f"must be a string of the alphabet's characters, not {_json_type(chars)}")
        if any(a >= b for a, b in zip(chars, chars[1:])):
            raise bad("alphabet.chars", "must hold each character once, in code point order (ids follow it)")
        if not isinstance(fallback, bool):
            raise bad("alphabet.byte_fallback", f"must be true or false, not {_json_type(fallback)}")
        n_alphabet = len(chars) + (256 if fallback else 0)

    pretokenizer = data["pretokenizer"]
    if not isinstance(pretokenizer, dict):
        raise bad("pretokenizer", f"must be an object of pre-tokenizer settings, not {_json_type(pretokenizer)}")
    for key in _PRETOKENIZER_STRINGS:
        if key in pretokenizer and not isinstance(pretokenizer[key], str):
            raise bad(f"pretokenizer.{key}", f"must be a string, not {_json_type(pretokenizer[key])}")
    scripts = pretokenizer.get("script_specific_scripts", [])
    if not isinstance(scripts, list) or not all(isinstance(x, str) for x in scripts):
        raise bad("pretokenizer.script_specific_scripts", "must be an array of Unicode script names")

    merges = data["merges"]
    if not isinstance(merges, list):
        raise bad("merges", f"must be an array of [left, right, count, is_super], not {_json_type(merges)}")
    # One fast test per merge (measured: 72 ms for 130k merges, a fifth of json.loads), the diagnosis after it.
    for k, m in enumerate(merges):
        own = n_alphabet + k
        if type(m) is list and len(m) == 4:
            left, right, count, is_super = m
            if (type(left) is int and type(right) is int and type(count) is int and type(is_super) is int
                    and 0 <= left < own and 0 <= right < own and 0 <= count <= _INT64_MAX
                    and (is_super == 0 or is_super == 1)):
                continue
        if not (isinstance(m, list) and len(m) == 4 and all(_is_int(x) for x in m)):
            raise bad(f"merges[{k}]", f"must be [left, right, count, is_super] integers, not {json.dumps(m)}")
        if not (0 <= left < own and 0 <= right < own):
            raise bad(f"merges[{k}]", f"token ids ({left}, {right}) do not exist yet; merge {k} creates id {own} "
                                      f"and may only use ids 0..{own - 1}")
        if not 0 <= count <= _INT64_MAX:
            raise bad(f"merges[{k}]", f"count {count} is outside 0..2**63-1")
        if is_super not in (0, 1):
            raise bad(f"merges[{k}]", f"is_super must be 0 or 1, not {is_super}")

    specials = data.get("special_tokens", {})
    if not isinstance(specials, dict):
        raise bad("special_tokens", f"must be an object {{token: id}}, not {_json_type(specials)}")
    for token, tid in specials.items():
        if not token:
            raise bad("special_tokens", "a special token cannot be the empty string")
        if not _is_int(tid):
            raise bad(f"special_tokens[{json.dumps(token, ensure_ascii=False)}]",
                      f"the id must be an integer, not {_json_type(tid)}")
    n_vocab = n_alphabet + len(merges)
    if sorted(specials.values()) != list(range(n_vocab, n_vocab + len(specials))):
        raise bad("special_tokens", f"ids must be {n_vocab}..{n_vocab + len(specials) - 1}, right after the "
                                    f"{n_vocab}-token vocabulary, without gaps or repeats")
    training = data.get("training", {})
    if not isinstance(training, dict):
        raise bad("training", f"must be an object, not {_json_type(training)}")


def load_model(path):
    from .tokenizer import Tokenizer

    path = Path(path)
    raw = read_model_text(path)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a fastsw model (invalid or truncated JSON at line {e.lineno}, "
                         f"column {e.colno}: {e.msg})") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a fastsw model file (missing \"format\": \"fastsw\")")
    version = data.get("format_version")
    if not _is_int(version):
        raise ValueError(f"{path}: model file has no integer format_version")
    if version > FORMAT_VERSION:
        raise ValueError(f"{path}: model format version {version} is newer than this fastsw supports "
                         f"({FORMAT_VERSION}); upgrade fastsw to load it")
    if version < 1:
        raise ValueError(f"{path}: unsupported model format version {version}")
    check_model_data(path, data)
    try:
        pretokenizer = Pretokenizer.from_config(data["pretokenizer"])
    except ValueError as e:
        raise ValueError(f"{path}: field pretokenizer: {e}") from e
    try:
        return Tokenizer(
            alphabet=alphabet_from_config(data["alphabet"]),
            merges=data["merges"],
            pretokenizer=pretokenizer,
            profile=data["profile"],
            algo=data["algo"],
            special_tokens=data.get("special_tokens", {}),
            training_info=data.get("training", {}),
        )
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: invalid model file: {e}") from e
