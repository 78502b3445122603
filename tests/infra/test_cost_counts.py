"""docs/deploy-aws.md's cost table counts what template.yaml creates (issue 37: it priced 12 functions and 15
alarms when the template had 19 functions with SnapStart and 25 alarms). The counts come from
infra/scripts/cost_counts.py; this checks the table states them."""

from __future__ import annotations

from infra.scripts.cost_counts import count
from tests.infra.template_model import load_template
from tests.support import REPO_ROOT

DEPLOY_DOC = (REPO_ROOT / "docs/deploy-aws.md").read_text(encoding="utf-8")


def table_row(starting: str) -> str:
    (row,) = [line for line in DEPLOY_DOC.splitlines() if line.startswith(f"| {starting}")]
    return row


def test_the_snapstart_row_counts_the_templates_functions_and_memory() -> None:
    counts = count(load_template())
    row = table_row("Lambda SnapStart cache")
    assert counts.snapstart_functions == counts.functions  # every function is snapshotted (Globals)
    assert f"{counts.snapstart_functions} functions with SnapStart" in row
    assert f"{counts.snapstart_gb:g} GB of memory in all" in row
    assert f"~${counts.snapstart_per_version:.0f} for one version of each" in row


def test_the_cloudwatch_row_counts_the_templates_alarms_and_their_metrics() -> None:
    counts = count(load_template())
    row = table_row("CloudWatch")
    assert f"{counts.alarms} alarms ({counts.alarm_metrics} metrics)" in row
    assert f"~${counts.alarms_per_month:.2f}" in row


def test_the_counter_reads_the_template_it_is_given() -> None:
    template = load_template()
    function = next(resource for resource in template["Resources"].values()
                    if resource["Type"] == "AWS::Serverless::Function")
    function["Properties"]["SnapStart"] = {"ApplyOn": "None"}
    template["Resources"]["ExtraAlarm"] = {"Type": "AWS::CloudWatch::Alarm", "Properties": {"MetricName": "X"}}
    before, after = count(load_template()), count(template)
    assert after.snapstart_functions == before.snapstart_functions - 1
    assert (after.alarms, after.alarm_metrics) == (before.alarms + 1, before.alarm_metrics + 1)
