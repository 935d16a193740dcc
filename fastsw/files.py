"""Output files: every writer of fastsw (models, count tables, exports, CLI ``-o``) goes through
:func:`atomic_open` (temporary file, sync, rename: a crash never leaves half a file), which applies
:func:`resolve_output_path`'s rule; failures are :class:`OutputError` naming the user's path.
Imports nothing of fastsw, so any module may use it."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from typing import Optional, Tuple


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
        return str(self.strerror) if self.filename is None else f"{self.filename}: {self.strerror}"


# errno -> (what happened, what to do), for the failures a user can act on.
_WRITE_ADVICE = {
    errno.ENOSPC: ("no space left on device", "free some space or choose another output path"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or choose another output path"),
    errno.EROFS: ("the file system is read-only", "choose another output path"),
    errno.EFBIG: (
        "the file is too large for the file system or the file size limit (ulimit -f)",
        "raise the limit or choose another output path",
    ),
}


def _write_error(name: str, directory: str, e: OSError) -> OutputError:
    """``e`` (from creating, writing, syncing or renaming the temporary file) reported against the target."""
    if e.errno in (errno.EACCES, errno.EPERM):
        problem, advice = f"permission denied in {directory}", "choose a writable directory"
    else:
        problem, advice = _WRITE_ADVICE.get(
            e.errno or 0, (e.strerror or str(e) or type(e).__name__, "check the path or choose another output path")
        )
    return OutputError(name, f"{problem} while writing it; {advice}", e.errno or errno.EIO)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


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
        raise OutputError(
            name, f"cannot use it as an output path ({e.strerror}); choose another output path", e.errno or errno.EINVAL
        ) from e
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = next((what for test, what in _KINDS if test(st.st_mode)), "not a regular file")
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(name, f"{link}a directory; give the path of a file inside it", errno.EISDIR)
        raise OutputError(
            name,
            f"{link}{kind}, not a regular file; give the path of a regular file "
            "(fastsw replaces its output file as a whole)",
            errno.EINVAL,
        )
    if name.endswith((os.sep, "/")):
        raise OutputError(
            name,
            "ends with a path separator, so it names a directory; give a file name, "
            f"e.g. {os.path.join(name, 'model.json')}",
            errno.EISDIR,
        )
    if not os.path.isdir(directory):
        shown = directory if link != "is " else (os.path.dirname(name) or ".")
        raise OutputError(
            name, f"the directory {shown} does not exist; create it first or choose another output path", errno.ENOENT
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(
            name, f"permission denied creating a file in {directory}; choose a writable directory", errno.EACCES
        )
    return name, target, st


def check_not_an_input(path, inputs) -> None:
    """Refuse an output path that is one of ``inputs`` (the same file by device and inode, so another
    spelling, a symlink or a hard link to an input is caught): writing it would destroy that input.
    Raises :class:`OutputError` naming both; inputs that do not exist (yet) are passed over.

        >>> check_not_an_input("model.json", ["corpus.jsonl"])
    """
    name = os.fsdecode(os.fspath(path))
    try:
        out = os.stat(name)
    except OSError:
        return  # a new file (or one resolve_output_path refuses) cannot be an existing input
    for source in inputs:
        source = os.fsdecode(os.fspath(source))
        try:
            st = os.stat(source)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
            same = "" if os.path.normpath(source) == os.path.normpath(name) else f" ({source})"
            raise OutputError(
                name,
                f"is one of the inputs{same}; writing it would destroy that input: choose another output path",
                errno.EINVAL,
            )


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


def read_head(path: "os.PathLike[str] | str", size: int, what: str) -> bytes:
    """The first ``size`` bytes of the file ``path`` (to tell its format by content); a missing or unreadable file is
    one ``ValueError`` naming it as ``what`` (``"model file"``, ``"count file"``)."""
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except FileNotFoundError:
        raise ValueError(f"{path}: {what} not found") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read {what} ({e.strerror or e})") from None
