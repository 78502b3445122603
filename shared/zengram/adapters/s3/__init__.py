"""The `DocumentSource` port on S3: folders are `s3://bucket/prefix`, confined to the allowed s3:// roots.

Listing follows S3's key order (the cursor of a batch is the last URI it did); boto3 is imported when the first
call needs it, and honours AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL for emulators.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from zengram.documents.domain.files import S3_SCHEME, is_s3, normalise_s3, s3_within
from zengram.documents.ports import Listing, SourceFile
from zengram.kernel.errors import Forbidden, InvalidInput

_PAGE = 1000


def split_uri(uri: str) -> tuple[str, str]:
    """`s3://bucket/a/b` → (`bucket`, `a/b`)."""
    bucket, _, key = uri[len(S3_SCHEME):].partition("/")
    return bucket, key


class S3DocumentSource:
    def __init__(self, roots: tuple[str, ...], *, region: str | None = None, client: Any | None = None) -> None:
        self._roots = tuple(normalise_s3(root) for root in roots)
        self._region = region
        self._client = client
        self._lock = threading.Lock()

    def handles(self, folder_path: str) -> bool:
        return is_s3(folder_path)

    def resolve(self, folder_path: str) -> str:
        uri = normalise_s3(folder_path.strip())
        if not s3_within(uri, self._roots):
            raise Forbidden("folder_path: outside the allowed roots")
        bucket, key = split_uri(uri)
        page = self._s3().list_objects_v2(Bucket=bucket, Prefix=f"{key}/" if key else "", MaxKeys=1)
        if not page.get("Contents"):
            raise InvalidInput("folder_path", f"no objects under {uri}")
        return uri

    def list_files(self, folder: str, *, recursive: bool, after: str | None, limit: int | None) -> Listing:
        files: list[SourceFile] = []
        for entry in self._objects(folder, recursive, after):
            if limit is not None and len(files) >= limit:
                return Listing(files, more=True)
            files.append(entry)
        return Listing(files)

    def count_files(self, folder: str, *, recursive: bool) -> int:
        return sum(1 for _ in self._objects(folder, recursive, None))

    def read(self, path: str) -> bytes:
        bucket, key = split_uri(path)
        body: bytes = self._s3().get_object(Bucket=bucket, Key=key)["Body"].read()
        return body

    def _objects(self, folder: str, recursive: bool, after: str | None) -> Iterator[SourceFile]:
        bucket, key = split_uri(folder)
        prefix = f"{key}/" if key else ""
        request: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": _PAGE}
        if after is not None:
            request["StartAfter"] = split_uri(after)[1]
        if not recursive:
            request["Delimiter"] = "/"
        while True:
            page = self._s3().list_objects_v2(**request)
            for entry in page.get("Contents", []):
                name = str(entry["Key"])
                if not name.endswith("/"):  # "folder" placeholder objects
                    yield SourceFile(path=f"{S3_SCHEME}{bucket}/{name}", relative=name[len(prefix):],
                                     size=int(entry.get("Size", 0)))
            if not page.get("IsTruncated"):
                return
            request["ContinuationToken"] = page["NextContinuationToken"]
            request.pop("StartAfter", None)

    def _s3(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3  # type: ignore[import-untyped]

                    self._client = boto3.session.Session().client("s3", region_name=self._region)
        return self._client
