"""`make package`: builds the Lambda layer (infra/scripts/layer.py, the build `sam build` uses too) into build/layer
and build/layer.zip, zips each function's code, and prints the sizes against Lambda's limit."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layer import LOCK, ROOT, build, zip_layer

BUILD = ROOT / "build"
LAYER = BUILD / "layer"
LAMBDA_LIMIT_MB = 250


def folder_size(path: Path) -> int:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


def mb(size: int) -> str:
    return f"{size / 1_048_576:6.1f} MB"


def main() -> None:
    print(f"layer from {LOCK.relative_to(ROOT)}: {build(LAYER)}")
    unzipped = folder_size(LAYER)
    zipped = zip_layer(LAYER, BUILD / "layer.zip")
    print(f"layer (python3.13, x86_64): {mb(unzipped)} unzipped, {mb(zipped)} zipped; "
          f"Lambda limit {LAMBDA_LIMIT_MB} MB unzipped (layer + function code) -> "
          f"{'OK' if unzipped < LAMBDA_LIMIT_MB * 1_048_576 else 'TOO BIG'}")
    site = LAYER / "python"
    packages = sorted(((folder_size(path), path.name) for path in site.iterdir() if path.is_dir()), reverse=True)
    print("largest packages:")
    for size, name in packages[:8]:
        print(f"  {mb(size)}  {name}")
    for function in sorted((ROOT / "functions").iterdir()):
        if (function / "app.py").is_file():
            code = zip_layer(function, BUILD / f"function-{function.name}.zip")
            print(f"function {function.name:<13} {code:>6} bytes zipped")


if __name__ == "__main__":
    main()
