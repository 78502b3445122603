"""`make prune-versions STAGE=dev [KEEP=2]`: deletes the published versions of a stack's functions that no alias
routes to, but the newest KEEP of them (to roll back to: `aws lambda update-alias --function-version N`).

Every deployment that changes a function publishes a version (AutoPublishAlias), and each SnapStart version keeps a
cached snapshot, billed for as long as the version exists, so `make deploy` runs this after each deployment.
$LATEST and every version an alias names (`live`, and any you made) are never deleted.

    python infra/scripts/prune_versions.py --stage dev [--keep 2] [--dry-run]
    python infra/scripts/prune_versions.py --stack-name zengram-dev
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMCONFIG = ROOT / "samconfig.toml"
DEFAULT_KEEP = 2


def stack_name_of(stage: str, samconfig: Path = SAMCONFIG) -> str:
    """The stack a stage deploys to, as samconfig.toml's `[<stage>.deploy.parameters]` names it."""
    config = tomllib.loads(samconfig.read_text())
    try:
        return str(config[stage]["deploy"]["parameters"]["stack_name"])
    except KeyError:
        raise SystemExit(f"samconfig.toml has no [{stage}.deploy.parameters] stack_name") from None


def stack_functions(cloudformation: Any, stack_name: str) -> list[str]:
    """The physical names of the stack's Lambda functions."""
    names = []
    for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack_name):
        names += [resource["PhysicalResourceId"] for resource in page["StackResourceSummaries"]
                  if resource["ResourceType"] == "AWS::Lambda::Function"]
    return sorted(names)


def prunable(versions: Iterable[str], aliased: Iterable[str], keep: int) -> list[str]:
    """The versions to delete: published ones (not $LATEST) that no alias names, but the newest `keep`."""
    routed = set(aliased)
    published = sorted((int(version) for version in versions if version.isdigit()), reverse=True)
    kept = 0
    doomed = []
    for version in published:
        if str(version) in routed:
            continue
        if kept < keep:
            kept += 1
            continue
        doomed.append(str(version))
    return doomed


def prune_function(client: Any, function: str, keep: int, *, dry_run: bool = False) -> list[str]:
    versions = [version["Version"] for page in client.get_paginator("list_versions_by_function").paginate(
        FunctionName=function) for version in page["Versions"]]
    aliases = [alias for page in client.get_paginator("list_aliases").paginate(FunctionName=function)
               for alias in page["Aliases"]]
    aliased = {alias["FunctionVersion"] for alias in aliases}
    # A weighted alias (a gradual deployment) routes to a second version too.
    aliased |= {version for alias in aliases
                for version in (alias.get("RoutingConfig") or {}).get("AdditionalVersionWeights", {})}
    doomed = prunable(versions, aliased, keep)
    if not dry_run:
        for version in doomed:
            client.delete_function(FunctionName=function, Qualifier=version)
    return doomed


def main(arguments: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--stage", help="a stage of samconfig.toml (its stack_name)")
    target.add_argument("--stack-name")
    parser.add_argument("--keep", type=int, default=DEFAULT_KEEP, help="unaliased versions kept per function")
    parser.add_argument("--region")
    parser.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")
    args = parser.parse_args(arguments)
    if args.keep < 0:
        raise SystemExit("--keep cannot be negative")
    import boto3

    stack_name = args.stack_name or stack_name_of(args.stage)
    cloudformation = boto3.client("cloudformation", region_name=args.region)
    lambdas = boto3.client("lambda", region_name=args.region)
    verb = "would delete" if args.dry_run else "deleted"
    for function in stack_functions(cloudformation, stack_name):
        doomed = prune_function(lambdas, function, args.keep, dry_run=args.dry_run)
        print(f"{function}: {verb} {len(doomed)} version(s){': ' + ', '.join(doomed) if doomed else ''}")


if __name__ == "__main__":
    main(sys.argv[1:])
