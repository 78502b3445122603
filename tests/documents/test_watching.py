"""Which watched folder a change belongs to, and when its re-index is due (no watcher, no store: a fake indexing)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from zengram.documents.domain.models import IndexedFolder, IndexOptions
from zengram.documents.services.watching import FolderWatching, relative_inside
from zengram.kernel.errors import InvalidInput


def folder(path: str, *, watch: str = "auto", debounce: int | None = None, recursive: bool = True) -> IndexedFolder:
    return IndexedFolder(folder_path=path, chunk_count=1, file_count=1, last_indexed=datetime.now(UTC),
                         recursive=recursive, watch_mode=watch, watch_debounce_seconds=debounce,  # type: ignore[arg-type]
                         options=IndexOptions(include_code=False))


class FakeIndexing:
    def __init__(self, *folders: IndexedFolder) -> None:
        self.listed = list(folders)
        self.reindexed: list[IndexedFolder] = []

    def folders(self) -> list[IndexedFolder]:
        return self.listed

    def reindex(self, watched: IndexedFolder) -> Any:
        if watched.folder_path == "/gone":
            raise InvalidInput("folder_path", "does not exist")
        self.reindexed.append(watched)
        return watched.folder_path


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_only_indexable_files_outside_skipped_folders_count() -> None:
    docs = folder("/p/docs")
    assert relative_inside(docs, "/p/docs/guide/setup.txt") == "guide/setup.txt"
    assert relative_inside(docs, "/p/docs/src/app.py") == "src/app.py"
    for path in ("/p/docs/.git/index", "/p/docs/node_modules/x/readme.txt", "/p/docs/data.sqlite3",
                 "/p/docsx/a.txt", "/p/other/a.txt", "/p/docs"):
        assert relative_inside(docs, path) is None, path
    flat = folder("/p/docs", recursive=False)
    assert relative_inside(flat, "/p/docs/a.txt") == "a.txt" and relative_inside(flat, "/p/docs/sub/a.txt") is None
    assert relative_inside(folder("s3://b/handbook"), "s3://b/handbook/docs/a.txt") == "docs/a.txt"


def test_a_folder_is_reindexed_once_quiet_for_its_debounce() -> None:
    clock = Clock()
    indexing = FakeIndexing(folder("/p/docs", debounce=5), folder("/p/code"), folder("/p/off", watch="off"))
    watching = FolderWatching(indexing, default_debounce=30, monotonic=clock)  # type: ignore[arg-type]
    assert watching.refresh() == ["/p/code", "/p/docs"]
    assert watching.changed(["/p/docs/a.txt", "/p/docs/b.txt", "/p/off/a.txt", "/p/code/x.png"]) == ["/p/docs"]
    clock.now += 4
    watching.changed(["/p/docs/c.txt"])  # another change restarts the quiet period
    clock.now += 4
    assert watching.run_due() == []
    clock.now += 1
    assert watching.run_due() == ["/p/docs"] and watching.run_due() == []  # once
    watching.changed(["/p/code/app.py"])
    clock.now += 29
    assert watching.run_due() == []
    clock.now += 1
    assert watching.run_due() == ["/p/code"]  # the host's default debounce
    assert [watched.folder_path for watched in indexing.reindexed] == ["/p/docs", "/p/code"]


def test_a_folder_that_cannot_be_reindexed_is_skipped_and_closing_stops_everything() -> None:
    clock = Clock()
    watching = FolderWatching(FakeIndexing(folder("/gone"), folder("/p/docs")), monotonic=clock)  # type: ignore[arg-type]
    watching.refresh()
    watching.changed(["/gone/a.txt", "/p/docs/a.txt"])
    assert watching.run_due(immediately=True) == ["/p/docs"]
    watching.changed(["/p/docs/b.txt"])
    watching.close()
    assert watching.run_due(immediately=True) == []
    watching.refresh()  # a folder no longer watched drops its pending change
    assert watching.watched == ["/gone", "/p/docs"]
