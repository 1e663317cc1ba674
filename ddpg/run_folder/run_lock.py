"""One writer per run folder: the lock a run holds on its folder while it writes there.

Two ``train.py`` processes writing one folder would each believe its run was saved, while the
folder holds a mix of both (or the one that finished last). So a process that writes a run
takes ``.lock`` in the folder first (``claim``), and one that finds it taken is refused with
the process that holds it; ``watch.py`` and ``evaluate.py`` only look (``holder``) before
writing their files into a folder.

The lock is ``fcntl.flock`` on that file: the kernel releases it when the process ends, however
it ends, so a run killed with kill -9 leaves no stale lock (its ``.lock`` file may stay, naming
a process that is gone; the next run takes it over). The file holds the holder's PID, only for
the message. A process that lets go removes the file, so a folder at rest holds no trace of it;
a process that takes the lock checks that the file it locked is still the one at the path, since
the previous holder may have removed it in between.

``claim`` also makes the folder (and the missing folders above it), and takes away again the
ones it made when they are still empty as it lets go: a run refused before it wrote anything (a
bad setting, an agent that fails at start, too little memory) leaves no empty folder behind.
This module is the only one that takes, reads or removes the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = ".lock"


class FolderInUse(ValueError):
    """The folder's lock is held by another process (or another claim of this one)."""


def _in_use(folder: Path, what: str, pid: int | None) -> FolderInUse:
    who = f"process {pid}" if pid is not None else "another process"
    return FolderInUse(f"{what} {folder} is in use: {who} is writing into it (it holds {folder / LOCK_FILE}); "
                       "wait for it to end, or stop it, then try again")


def _pid_in(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stat(path: Path) -> os.stat_result | None:
    """``os.stat`` that tells a missing path (None) from one the file system refuses (OSError)."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _unusable(folder: Path, what: str, exc: OSError) -> ValueError:
    """A one-line refusal for a path the file system will not take, saying what it expects."""
    if exc.errno == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(part)) for part in folder.parts), default=0)
        return ValueError(f"{what} {str(folder)[:60]}... cannot be used: the file system refuses the path as too long "
                          f"(a name of {longest} bytes, {len(os.fsencode(folder))} in all); expected names of at most "
                          "255 bytes each")
    return ValueError(f"{what} {folder} cannot be created: {exc.strerror or exc}")


def _made(folder: Path, what: str) -> list[Path]:
    """Make ``folder`` and the missing folders above it; the ones made here, outermost first.
    ValueError (one line) for a path that cannot be a folder."""
    missing: list[Path] = []
    path = folder
    try:
        while (found := _stat(path)) is None:
            missing.append(path)
            if path.parent == path:
                break
            path = path.parent
    except OSError as exc:  # ENAMETOOLONG, ELOOP, EACCES on a parent...
        raise _unusable(folder, what, exc) from None
    if found is not None and not stat.S_ISDIR(found.st_mode):  # (a file above it is ENOTDIR, just above)
        raise ValueError(f"{what} {folder} is a file; expected a folder")
    made: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                path.mkdir()
            except FileExistsError:  # made meanwhile by someone else: not this process's to remove
                continue
            made.append(path)
    except OSError as exc:
        _remove_empty(made)
        raise _unusable(folder, what, exc) from None
    return made


def _remove_empty(made: list[Path]) -> None:
    """Remove the folders made here (innermost first) while they are empty; never a folder with anything in it."""
    for path in reversed(made):
        try:
            path.rmdir()
        except OSError:
            return


def _lock(folder: Path, what: str) -> int:
    """The open, locked lock file of ``folder`` (its descriptor), with this process's PID in it."""
    path = folder / LOCK_FILE
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
                raise ValueError(f"{what} {folder} is not writable ({exc.strerror}); expected a folder this "
                                 "user can write") from None
            raise _unusable(folder, what, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _pid_in(fd)
            os.close(fd)
            raise _in_use(folder, what, pid) from None
        except OSError:  # a file system without flock: the lock cannot be had, so it is not kept
            return fd
        locked = os.fstat(fd)
        try:
            now = _stat(path)
        except OSError:
            now = None
        if now is not None and os.path.samestat(locked, now):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)  # the previous holder removed the file as it let go: lock the one at the path now


def _unlock(folder: Path, fd: int) -> None:
    """Remove the lock file (while still holding it, and only if it is still this one) and let go."""
    path = folder / LOCK_FILE
    with contextlib.suppress(OSError):
        now = _stat(path)
        if now is not None and os.path.samestat(os.fstat(fd), now):
            path.unlink()
    os.close(fd)


@contextlib.contextmanager
def claim(folder: str | os.PathLike[str], what: str = "--out", create: bool = True) -> Iterator[Path]:
    """Hold ``folder``'s lock for the ``with`` block: the one writer of the run there.

    With ``create``, the folder and the missing ones above it are made first, and those still
    empty at the end are removed (so a refusal leaves nothing behind); without it, a folder that
    does not exist is not locked (the caller says what is missing). ``what`` names the option in
    messages. ValueError, one line: ``FolderInUse`` naming the process that holds the folder, or
    a path that cannot be a folder (a file, a name too long, a folder that cannot be written)."""
    path = Path(folder)
    made = _made(path, what) if create else []
    if not create and not path.is_dir():
        yield path
        return
    try:
        fd = _lock(path, what)
    except ValueError:
        _remove_empty(made)
        raise
    try:
        yield path
    finally:
        _unlock(path, fd)
        _remove_empty(made)


def holder(folder: str | os.PathLike[str]) -> int | None:
    """The PID of the process writing a run into ``folder`` (0 when it holds the lock but its PID
    is not written yet), or None when none is; the lock is only looked at, never kept or made."""
    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _pid_in(fd) or 0
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


def refuse_if_in_use(folder: str | os.PathLike[str], what: str = "--out") -> None:
    """ValueError (``FolderInUse``) naming the process when a run is being written into ``folder``:
    for a command that writes its own files there (watch.py's video, evaluate.py's scores)."""
    pid = holder(folder)
    if pid is not None:
        raise _in_use(Path(folder), what, pid or None)


__all__ = ["LOCK_FILE", "FolderInUse", "claim", "holder", "refuse_if_in_use"]
