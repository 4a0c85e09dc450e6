"""Atomic file writes for SpiralTorch's Python writers (the C++ writers do the same in
``io::write_file_atomic``).

The data goes to a fresh temporary file in the target's directory, created by
``tempfile.mkstemp`` (``O_CREAT | O_EXCL`` under an unpredictable name, so a file or symlink
planted there in advance is never followed or overwritten), is flushed and ``fsync``-ed, gets
the permission bits of the file it replaces (or ``0o666 & ~umask`` for a new file, what a plain
``open`` gives), and is renamed over the target; the directory is then ``fsync``-ed so the
rename survives a crash. A reader sees the old file or the new one, never a partial one; on any
error the temporary is removed and the old file is left as it was. A target that is a symlink
keeps the link: the file it points to is replaced (a dangling link names the file to create),
as writing through it with ``open`` would, and as the C++ writers do.

Only the standard library is used here, so any module may import it early.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from typing import BinaryIO, Callable, Optional, Union

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["atomic_write", "atomic_write_bytes", "atomic_write_text", "fsync_directory"]

_umask_lock = threading.Lock()


def _umask() -> int:
    """The process umask, read without changing it where Linux reports it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:  # elsewhere: set and restore (os.umask has no read-only form)
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _mode_for(target: str, mode: Optional[int]) -> int:
    """The permission bits the new file gets: ``mode`` when given, else the replaced regular
    file's, else ``0o666 & ~umask``."""
    if mode is not None:
        return stat.S_IMODE(mode)
    try:
        st = os.stat(target)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode)
    return 0o666 & ~_umask()


def fsync_directory(directory: PathLike) -> None:
    """``fsync``s a directory so that renames into it are durable; best effort (some
    filesystems refuse to open or sync directories, which is not an error here)."""
    try:
        fd = os.open(os.fspath(directory), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: PathLike, write: Callable[[BinaryIO], object], *, mode: Optional[int] = None) -> str:
    """Replaces ``path`` atomically with what ``write(f)`` writes to the binary file object
    ``f`` (a fresh ``mkstemp`` temporary in the same directory, fsync-ed, then renamed over
    ``path``). The new file keeps the permission bits of the file it replaces, or gets ``mode``
    when given, else ``0o666 & ~umask``. When ``path`` is a symlink the file it points to is
    replaced and the link kept. Returns ``path`` as a string; on error the temporary is removed
    and ``path`` is unchanged."""
    given = os.fspath(path)
    if isinstance(given, bytes):
        given = os.fsdecode(given)
    target = os.path.realpath(given) if os.path.islink(given) else given
    directory = os.path.dirname(os.path.abspath(target))
    base = os.path.basename(target)
    if not base:
        raise IsADirectoryError(f"atomic_write: {target!r} names a directory, not a file")
    perms = _mode_for(target, mode)
    # The name only has to be unique (mkstemp guarantees that); a long base is shortened to fit NAME_MAX.
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{base[:120]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fchmod(f.fileno(), perms)
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_directory(directory)
    return given


def atomic_write_bytes(path: PathLike, data: bytes, *, mode: Optional[int] = None) -> str:
    """``atomic_write`` of ``data``: ``path`` holds exactly these bytes afterwards, or is
    unchanged when the write fails. Returns ``path`` as a string."""
    view = memoryview(data)
    return atomic_write(path, lambda f: f.write(view), mode=mode)


def atomic_write_text(path: PathLike, text: str, *, encoding: str = "utf-8", mode: Optional[int] = None) -> str:
    """``atomic_write_bytes`` of ``text`` encoded with ``encoding`` (UTF-8 by default; newlines
    are written as given). Returns ``path`` as a string."""
    return atomic_write_bytes(path, text.encode(encoding), mode=mode)
