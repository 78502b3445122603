"""`python infra/scripts/cost_counts.py`: what docs/deploy-aws.md's cost table counts, read from template.yaml.

Functions (and which of them SnapStart snapshots, with their memory: the snapshot cache is billed per GB), CloudWatch
alarms and the metrics they read (an alarm is billed per metric, a metric-math alarm per metric it reads).
tests/infra/test_cost_counts.py checks the table against this, so the figures move with the template.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from samtranslator.yaml_helper import yaml_parse

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
# us-east-1 list prices (December 2026): SnapStart cache per GB-second, a standard alarm metric per month.
SNAPSTART_CACHE_PER_GB_SECOND = 0.0000015046
SECONDS_PER_MONTH = 730 * 3600
ALARM_METRIC_PER_MONTH = 0.10


@dataclass(frozen=True)
class CostCounts:
    functions: int
    snapstart_functions: int
    snapstart_gb: float  # memory of the snapshotted functions, one published version each
    snapstart_per_version: float  # dollars a month for one version of each snapshotted function
    conditional_functions: int  # created only under a condition (e.g. an option)
    alarms: int
    alarm_metrics: int
    alarms_per_month: float


def count(template: dict[str, Any]) -> CostCounts:
    globals_ = template.get("Globals", {}).get("Function", {})
    resources = template["Resources"].values()
    functions = [resource for resource in resources if resource["Type"] == "AWS::Serverless::Function"]
    snapshotted = [function for function in functions if _snapstart(globals_, function["Properties"])]
    gigabytes = sum(function["Properties"].get("MemorySize", globals_.get("MemorySize", 128)) for function
                    in snapshotted) / 1024
    alarms = [resource for resource in resources if resource["Type"] == "AWS::CloudWatch::Alarm"]
    metrics = sum(_metrics_read(alarm["Properties"]) for alarm in alarms)
    return CostCounts(
        functions=len(functions), snapstart_functions=len(snapshotted), snapstart_gb=gigabytes,
        snapstart_per_version=round(gigabytes * SNAPSTART_CACHE_PER_GB_SECOND * SECONDS_PER_MONTH, 2),
        conditional_functions=sum(1 for function in functions if "Condition" in function),
        alarms=len(alarms), alarm_metrics=metrics, alarms_per_month=round(metrics * ALARM_METRIC_PER_MONTH, 2))


def _snapstart(globals_: dict[str, Any], properties: dict[str, Any]) -> bool:
    setting = properties.get("SnapStart", globals_.get("SnapStart")) or {}
    return isinstance(setting, dict) and setting.get("ApplyOn") == "PublishedVersions"


def _metrics_read(properties: dict[str, Any]) -> int:
    """A single-metric alarm reads one metric; a metric-math alarm each `MetricStat` it lists."""
    if "Metrics" not in properties:
        return 1
    return sum(1 for query in properties["Metrics"] if "MetricStat" in query)


def main() -> None:
    counts = count(yaml_parse(TEMPLATE.read_text(encoding="utf-8")))
    print(json.dumps(asdict(counts), indent=2))


if __name__ == "__main__":
    main()
