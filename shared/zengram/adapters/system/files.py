"""The `DocumentSource` port on the local file system, confined to the allowed roots.

A folder is resolved (symlinks followed, `..` collapsed) before it is checked against the roots, so neither
`../` nor a symlink leads outside them; files are listed without following symlinked folders, and a symlinked
file whose target lies outside the roots is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from zengram.documents.domain.files import EXCLUDED_DIRS, is_s3, posix_within
from zengram.documents.ports import Listing, SourceFile, UnresolvablePath
from zengram.kernel.errors import Forbidden, InvalidInput

DEFAULT_EXCLUDED_DIRS = EXCLUDED_DIRS


class LocalDocumentSource:
    def __init__(self, allowed_roots: Sequence[Path | str],
                 excluded_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRS) -> None:
        self._roots = [str(Path(root).expanduser().resolve()) for root in allowed_roots]
        self._excluded = excluded_dirs

    @property
    def roots(self) -> list[str]:
        return list(self._roots)

    def handles(self, folder_path: str) -> bool:
        return not is_s3(folder_path)

    def resolve(self, folder_path: str) -> str:
        if not self._roots:
            raise Forbidden("folder_path: no allowed roots are configured (ZENGRAM_DOCUMENTS_ALLOWED_ROOTS)")
        if "\x00" in folder_path:
            raise UnresolvablePath(folder_path, "it holds a NUL byte")
        given = Path(folder_path).expanduser()
        if not given.is_absolute():
            given = Path(self._roots[0]) / given
        try:
            resolved = str(given.resolve())
            readable = Path(resolved).is_dir()
        except (RuntimeError, OSError) as error:  # a symlink loop (RuntimeError before Python 3.13), ELOOP…
            raise UnresolvablePath(folder_path, str(error) or type(error).__name__) from None
        if not any(posix_within(resolved, root) for root in self._roots):
            raise Forbidden("folder_path: outside the allowed roots")
        if not readable:
            raise InvalidInput("folder_path", f"{folder_path} is not a readable folder")
        return resolved

    def list_files(self, folder: str, *, recursive: bool, after: str | None, limit: int | None) -> Listing:
        files: list[SourceFile] = []
        skipped = 0
        for path in self._walk(folder, recursive):
            if after is not None and path <= after:
                continue
            if limit is not None and len(files) >= limit:
                return Listing(files, skipped, more=True)
            entry = self._file(folder, path)
            if entry is None:
                skipped += 1
                continue
            files.append(entry)
        return Listing(files, skipped, more=False)

    def count_files(self, folder: str, *, recursive: bool) -> int:
        return sum(1 for _ in self._walk(folder, recursive))

    def read(self, path: str) -> bytes:
        real = os.path.realpath(path)
        if not any(posix_within(real, root) for root in self._roots):
            raise PermissionError(f"{path} resolves outside the allowed roots")
        with open(real, "rb") as handle:
            return handle.read()

    def _walk(self, folder: str, recursive: bool) -> Iterator[str]:
        """Every file path under `folder`, sorted as strings (a batch resumes after the last path it did)."""
        paths: list[str] = []
        for directory, subdirectories, names in os.walk(folder, followlinks=False):
            subdirectories[:] = [] if not recursive else sorted(
                name for name in subdirectories if name not in self._excluded)
            paths += [os.path.join(directory, name) for name in names]
        yield from sorted(paths)

    def _file(self, folder: str, path: str) -> SourceFile | None:
        """None for what is not a regular file inside the roots (a symlink out of them, a socket...)."""
        real = os.path.realpath(path)
        if not any(posix_within(real, root) for root in self._roots) or not os.path.isfile(real):
            return None
        return SourceFile(path=path, relative=os.path.relpath(path, folder).replace(os.sep, "/"),
                          size=os.path.getsize(real))
