"""Which files an indexing request takes, what kind each one is, and where folders may be."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from zengram.documents.domain.models import IndexOptions, SourceType
from zengram.kernel.errors import Forbidden, InvalidInput

# Extension → language for code (parsed into definitions and the graph) or document format.
CODE_LANGUAGES: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".java": "java", ".rs": "rust",
}
DOCUMENT_FORMATS: dict[str, str] = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".rst": "text", ".pdf": "pdf",
}
# Agent Brain's --include-type presets (agent-brain-cli `types list`), for the formats indexed here.
TYPE_PRESETS: dict[str, tuple[str, ...]] = {
    "python": ("*.py", "*.pyi", "*.pyw"),
    "javascript": ("*.js", "*.jsx", "*.mjs", "*.cjs"),
    "typescript": ("*.ts", "*.tsx"),
    "go": ("*.go",),
    "rust": ("*.rs",),
    "java": ("*.java",),
    "web": ("*.jsx", "*.tsx"),
    "docs": ("*.md", "*.txt", "*.rst", "*.pdf"),
    "text": ("*.md", "*.txt", "*.rst"),
    "pdf": ("*.pdf",),
    "code": tuple(f"*{extension}" for extension in CODE_LANGUAGES),
}
# Folders skipped anywhere below an indexed one.
EXCLUDED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                           ".mypy_cache", ".pytest_cache", ".ruff_cache", "dist", "build", "target",
                           ".agent-brain", ".zengram"})
LANGUAGE_NAMES = frozenset({*CODE_LANGUAGES.values(), "typescript"})
_TEST_NAMES = ("test_", "_test.", ".test.", ".spec.", "Test.java", "Tests.java")


@dataclass(frozen=True)
class FileKind:
    source_type: SourceType
    language: str | None  # python, typescript… for code; markdown, text, pdf for documents
    format: str  # "code", "markdown", "text" or "pdf"


def kind_of(path: str) -> FileKind | None:
    """None for files this service does not index."""
    name = PurePosixPath(path.replace("\\", "/")).name
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in CODE_LANGUAGES:
        is_test = name.startswith("test_") or any(marker in name for marker in _TEST_NAMES[1:]) \
            or "/tests/" in path or "/test/" in path
        return FileKind(SourceType.TEST if is_test else SourceType.CODE, CODE_LANGUAGES[suffix], "code")
    if suffix in DOCUMENT_FORMATS:
        return FileKind(SourceType.DOC, DOCUMENT_FORMATS[suffix], DOCUMENT_FORMATS[suffix])
    return None


def check_languages(languages: tuple[str, ...] | None) -> None:
    for language in languages or ():
        if language not in LANGUAGE_NAMES:
            raise InvalidInput("supported_languages", f"unsupported language {language!r}; supported: "
                               f"{', '.join(sorted(LANGUAGE_NAMES))}")


def check_types(types: tuple[str, ...] | None) -> None:
    for name in types or ():
        if name not in TYPE_PRESETS:
            raise InvalidInput("include_types", f"unknown preset {name!r}; known: {', '.join(sorted(TYPE_PRESETS))}")


def is_selected(relative: str, kind: FileKind, options: IndexOptions) -> bool:
    """Whether a file (by its path relative to the indexed folder) is part of this request."""
    if kind.format == "code":
        if not options.include_code:
            return False
        language = "typescript" if kind.language == "tsx" else kind.language
        if options.languages and language not in options.languages and kind.language not in options.languages:
            return False
    if options.include_types:
        patterns = [pattern for name in options.include_types for pattern in TYPE_PRESETS[name]]
        if not matches_any(relative, patterns):
            return False
    if options.include_patterns and not matches_any(relative, options.include_patterns):
        return False
    return not (options.exclude_patterns and matches_any(relative, options.exclude_patterns))


def matches_any(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Glob match on the whole path or any tail of it (`docs/*.md`, `*.py`, `**/tests/**`)."""
    return any(matches(path, pattern) for pattern in patterns)


def matches(path: str, pattern: str) -> bool:
    path = path.replace("\\", "/")
    pattern = pattern.replace("**/", "*/").replace("/**", "/*") if "**" in pattern else pattern
    if fnmatchcase(path, pattern) or fnmatchcase(path, f"*/{pattern}"):
        return True
    return "/" not in pattern and fnmatchcase(PurePosixPath(path).name, pattern)


# -- allowed roots -------------------------------------------------------------------------------------

S3_SCHEME = "s3://"


def is_s3(path: str) -> bool:
    return path.startswith(S3_SCHEME)


def s3_from_resolved_path(path: str) -> str | None:
    """The S3 folder a client meant when it resolved `s3://bucket/prefix` as a local path: the Agent Brain CLI sends
    `Path(folder).resolve()`, which makes it `<cwd>/s3:/bucket/prefix`. None for any other path."""
    head, marker, rest = path.replace("\\", "/").partition("/s3:/")
    if not marker or (head and not head.startswith("/")):
        return None
    return S3_SCHEME + rest.lstrip("/") if rest.strip("/") else None


def normalise_s3(uri: str) -> str:
    """`s3://bucket/prefix` without a trailing slash; `..` or `.` segments are refused, not resolved."""
    rest = uri[len(S3_SCHEME):]
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise InvalidInput("folder_path", "an S3 folder is s3://bucket/prefix")
    segments = [segment for segment in key.split("/") if segment]
    if any(segment in (".", "..") for segment in segments):
        raise Forbidden("folder_path: '.' and '..' segments are not allowed in S3 folders")
    return S3_SCHEME + "/".join([bucket, *segments])


def s3_within(uri: str, roots: tuple[str, ...]) -> bool:
    return any(uri == root or uri.startswith(root.rstrip("/") + "/") for root in roots)


def posix_within(path: str, root: str) -> bool:
    """Both already resolved (absolute, no `..`, symlinks followed)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")
