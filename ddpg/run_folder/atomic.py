"""Writing a file whole or not at all: ``atomic_write`` (a temporary file in the same folder, then a
rename), so a reader never sees half a file, whatever stops the writer. Every file of a run folder,
and the commands' other outputs, are written through it; ``remove_leftovers`` takes away the
temporary files of writers that were killed mid-write.

No PyTorch here: a writer hands in a function that writes into the file (``torch.save`` for the
networks and the training state, in ``ddpg.run_folder.checkpoints`` and ``ddpg.run_folder.run_state``).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ddpg.run_folder import faults
from ddpg.run_folder.file_names import TEMPORARY_MARK, VALUE_MAPS_DIR


class SaveError(OSError):
    """A file of the run could not be written (a full disk, a read-only folder). The file it
    was to replace, and every other file of the folder, are as the last complete save left them.
    Reads "cannot write PATH: REASON"; ``strerror`` is the reason alone, as for any OSError."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.strerror = reason


class _Handed:
    """The file handed to a writer: keeps the OSError of a failed write, which torch.save
    would otherwise turn into "[enforce fail at inline_container.cc] unexpected pos"."""

    def __init__(self, fh: io.BufferedWriter) -> None:
        self.fh, self.error = fh, None

    def write(self, data: bytes) -> int:
        try:
            return self.fh.write(data)
        except OSError as exc:
            self.error = exc
            raise

    def __getattr__(self, name: str) -> Any:  # flush, tell, seek, fileno...: as the file itself
        return getattr(self.fh, name)


def _temporary_name(path: Path) -> Path:
    return path.with_name(f".{path.name}{TEMPORARY_MARK}{os.getpid()}")


def atomic_write(path: str | os.PathLike[str], write: Callable[[Any], None]) -> None:
    """Write ``path`` through ``write(file)`` into a temporary file, then rename it over ``path``.

    The one atomic-write routine of the project: an interrupted write leaves the old file (or
    none), never a truncated one; a process killed mid-write leaves its temporary file, which
    ``remove_leftovers`` takes away at the next start. A failed write (a full disk) is a
    ``SaveError`` naming the file and the reason, with the temporary file removed.
    """
    path = Path(path)
    tmp = _temporary_name(path)
    try:
        with open(tmp, "wb") as fh:
            faults.point(f"open {path.name}")
            handed = _Handed(fh)
            try:
                write(handed)
                faults.point(f"written {path.name}")
                fh.flush()
                os.fsync(fh.fileno())
            except Exception as exc:
                if handed.error is None and not isinstance(exc, OSError):
                    raise
                raise SaveError(path, _reason(handed.error or exc)) from None
        os.replace(tmp, path)
        faults.point(f"renamed {path.name}")
    except SaveError:
        raise
    except OSError as exc:  # the temporary file could not be made, or the rename failed
        raise SaveError(path, _reason(exc)) from None
    finally:
        if tmp.exists():
            tmp.unlink()


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"


def remove_leftovers(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files that writers killed mid-write (kill -9, a power cut) left in
    ``folder`` and its value_maps/; a file of a process still running is left alone. The paths
    removed."""
    removed = []
    for where in (Path(folder), Path(folder) / VALUE_MAPS_DIR):
        if not where.is_dir():
            continue
        for path in where.glob(f".*{TEMPORARY_MARK}*"):
            pid = path.name.rpartition(TEMPORARY_MARK)[2]
            if pid.isdigit() and not _alive(int(pid)):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process has no write under way when it cleans up
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def write_json(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """``record`` as indented JSON, atomically."""
    data = (json.dumps(record, indent=2) + "\n").encode()
    atomic_write(path, lambda fh: fh.write(data))


__all__ = ["SaveError", "atomic_write", "remove_leftovers", "write_json"]
