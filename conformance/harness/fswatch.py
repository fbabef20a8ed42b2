"""Changes under a folder tree while a run is in flight, from Linux's inotify
(spec/canonical.md#canonical-reader-cli: no side effect outside the run's temporary folder).

A snapshot of ``conformance/`` before and after each run (harness/runner.py) stats some 3,000 entries
twice per case, which is most of the harness's own time.  :class:`TreeWatch` asks the kernel instead: one
watch per folder of the tree, set once; the kernel queues an event at the moment a file is created,
written, removed, renamed or has its attributes changed, so that reading the queue when a run has ended
gives every change made during it (and, as with snapshots, changes made by a run in flight at the same
time).  Where inotify is missing (not Linux, or no watches left) :func:`TreeWatch.open` returns ``None`` and
the harness snapshots as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys
import threading
from pathlib import Path

_IN_MODIFY, _IN_ATTRIB = 0x002, 0x004
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x040, 0x080, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_ISDIR = 0x400, 0x800, 0x4000, 0x40000000
# a file opened for writing and closed unchanged (IN_CLOSE_WRITE: tinygrad opens its input so) is no
# change, as for a snapshot; a write is IN_MODIFY
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
         | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF)
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_EVENT = struct.Struct("iIII")
_WHAT = {_IN_CREATE: "created", _IN_DELETE: "removed", _IN_MOVED_FROM: "moved away",
         _IN_MOVED_TO: "moved in", _IN_MODIFY: "modified",
         _IN_ATTRIB: "attributes changed", _IN_DELETE_SELF: "removed", _IN_MOVE_SELF: "moved away"}


class TreeWatch:
    """Every change under ``root`` (folders named in ``skip`` left out) since :meth:`mark`."""

    def __init__(self, fd: int, libc: ctypes.CDLL, root: Path, skip: frozenset[str]) -> None:
        self.fd, self.libc, self.root, self.skip = fd, libc, root, skip
        self.dirs: dict[int, str] = {}
        self.log: list[str] = []
        self.lock = threading.Lock()

    @classmethod
    def open(cls, root: Path, skip: frozenset[str]) -> TreeWatch | None:
        if not root.is_dir() or not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        watch = cls(fd, libc, root, skip)
        for folder, subdirs, _ in os.walk(root):
            subdirs[:] = [d for d in subdirs if d not in skip]
            wd = libc.inotify_add_watch(fd, os.fsencode(folder), _MASK)
            if wd < 0:  # out of watches: the tree cannot be watched whole
                watch.close()
                return None
            watch.dirs[wd] = folder
        return watch

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            at = 0
            while at < len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size:at + _EVENT.size + size].rstrip(b"\0").decode("utf-8", "replace")
                at += _EVENT.size + size
                if mask & _IN_Q_OVERFLOW:
                    self.log.append(f"changed {self.root} (too many changes to list)")
                    continue
                if name in self.skip:
                    continue
                what = next((w for bit, w in _WHAT.items() if mask & bit), "changed")
                folder = self.dirs.get(wd, str(self.root))
                self.log.append(f"{what} {os.path.join(folder, name) if name else folder}")

    def mark(self) -> int:
        """A point in the log: the changes made from now on are :meth:`since` it."""
        with self.lock:
            self._drain()
            return len(self.log)

    def since(self, mark: int) -> list[str]:
        """The changes queued since ``mark`` (a run's: read once the run has ended)."""
        with self.lock:
            self._drain()
            return list(dict.fromkeys(self.log[mark:]))

    def close(self) -> None:
        os.close(self.fd)
