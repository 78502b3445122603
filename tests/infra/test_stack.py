"""template.yaml as deployed stacks: names unique per stack (two stacks, even of one stage, never collide), Rules that
refuse parameter combinations that cannot work, least-privilege access to the search index, secrets read at run
time, failures that land in queues, and alarms on what an operator watches. The template is transformed by SAM
(samtranslator) and its intrinsic functions evaluated for given stacks (tests/infra/cfn.py)."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest
from samtranslator.translator.transform import transform
from zengram.adapters.aws_lambda.metrics import PENDING_INDEX, RECORDS_PARKED

from tests.infra.cfn import Evaluator, Stack
from tests.infra.template_model import as_packaged, load_template

# The property that holds a resource's own physical name, for every type whose names must be unique.
NAME_PROPERTIES = {
    "AWS::Lambda::Function": "FunctionName", "AWS::Lambda::LayerVersion": "LayerName",
    "AWS::Scheduler::Schedule": "Name", "AWS::StepFunctions::StateMachine": "StateMachineName",
    "AWS::OpenSearchService::Domain": "DomainName", "AWS::OpenSearchServerless::Collection": "Name",
    "AWS::OpenSearchServerless::SecurityPolicy": "Name", "AWS::OpenSearchServerless::AccessPolicy": "Name",
    "AWS::Logs::LogGroup": "LogGroupName", "AWS::SQS::Queue": "QueueName", "AWS::SNS::Topic": "TopicName",
    "AWS::IAM::Role": "RoleName", "AWS::IAM::ManagedPolicy": "ManagedPolicyName",
    "AWS::CloudWatch::Alarm": "AlarmName", "AWS::DynamoDB::Table": "TableName",
    "AWS::SecretsManager::Secret": "Name", "AWS::EC2::SecurityGroup": "GroupName",
}
# Names that share a namespace (one name per type) and their rules.
NAME_RULES = {
    "AWS::OpenSearchService::Domain": r"[a-z][a-z0-9-]{2,27}",
    "AWS::OpenSearchServerless::Collection": r"[a-z][a-z0-9-]{2,31}",
    "AWS::OpenSearchServerless::SecurityPolicy": r"[a-z][a-z0-9-]{2,31}",
    "AWS::OpenSearchServerless::AccessPolicy": r"[a-z][a-z0-9-]{2,31}",
    "AWS::Lambda::Function": r"[a-zA-Z0-9-_]{1,64}",
    "AWS::Lambda::LayerVersion": r"[a-zA-Z0-9-_]{1,140}",
}
EVERY_BACKEND = [{"SearchBackend": "opensearch-domain", "OpenSearchVpcId": "vpc-0abc",
                  "OpenSearchSubnetIds": "subnet-0a,subnet-0b"},
                 {"SearchBackend": "opensearch-serverless", "Embedder": "openai", "OpenAIApiKeySecretName": "openai",
                  "EmbeddingDimensions": "1536", "AlarmEmail": "ops@example.com", "OperatorPrincipalArn":
                  "arn:aws:iam::123456789012:role/ops"}]
LONG_MIXED_CASE = "Zengram-Production-EU-West-Customer-Facing-Memory-Service-With-A-Very-Long-Stack-Name"


class NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}


@cache
def transformed() -> dict[str, Any]:
    import os

    # The SAM translator reads the region from the environment; set it for the transform only, so the other
    # tests of this process (their boto3 session, made later) keep the region they expect.
    previous = os.environ.get("AWS_DEFAULT_REGION")
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    try:
        output: dict[str, Any] = transform(as_packaged(load_template()), {}, NoManagedPolicies())
    finally:
        if previous is None:
            del os.environ["AWS_DEFAULT_REGION"]
    return output


def evaluator(parameters: dict[str, Any] | None = None, name: str = "zengram-prod",
              uuid: str = "1a2b3c4d-0000-4000-8000-000000000001") -> Evaluator:
    return Evaluator(transformed(), Stack(name, uuid, {"Stage": "prod", **(parameters or {})}))


def created(stack: Evaluator) -> dict[str, dict[str, Any]]:
    """The resources this stack creates (their conditions hold), with their properties resolved."""
    return {logical: {**resource, "Properties": stack.resolve(resource.get("Properties", {}))}
            for logical, resource in stack.template["Resources"].items()
            if "Condition" not in resource or stack.condition(resource["Condition"])}


def physical_names(stack: Evaluator) -> dict[tuple[str, str], str]:
    return {(namespace(resource), logical): resource["Properties"][NAME_PROPERTIES[resource["Type"]]]
            for logical, resource in created(stack).items()
            if NAME_PROPERTIES.get(resource["Type"]) in resource["Properties"]}


def namespace(resource: dict[str, Any]) -> str:
    """Where a name must be unique: its type (Serverless security policies: per type and policy kind)."""
    if resource["Type"] == "AWS::OpenSearchServerless::SecurityPolicy":
        return f"{resource['Type']}/{resource['Properties']['Type']}"
    return str(resource["Type"])


# ---- names per stack ----

@pytest.mark.parametrize("parameters", EVERY_BACKEND, ids=["domain-in-vpc", "serverless-openai"])
def test_two_stacks_of_the_same_stage_share_no_name(parameters: dict[str, Any]) -> None:
    first = physical_names(evaluator(parameters, "zengram-prod", "1a2b3c4d-0000-4000-8000-000000000001"))
    second = physical_names(evaluator(parameters, "zengram-prod-copy", "9f8e7d6c-0000-4000-8000-000000000002"))
    assert first and set(first) == set(second)
    collisions = {key: name for key, name in first.items() if second[key] == name}
    assert not collisions
    # A serverless collection's three policies share its name, but each lives in its own namespace.
    for names in (first, second):
        per_type = [(kind, name) for (kind, _), name in names.items()]
        assert len(per_type) == len(set(per_type))


@pytest.mark.parametrize("parameters", EVERY_BACKEND, ids=["domain-in-vpc", "serverless-openai"])
def test_names_are_valid_whatever_the_stack_is_called(parameters: dict[str, Any]) -> None:
    stack = evaluator({**parameters, "Stage": "abcdefghij-l"}, LONG_MIXED_CASE)
    names = physical_names(stack)
    checked = {kind.split("/")[0] for kind, _ in names} & set(NAME_RULES)
    assert checked >= {"AWS::Lambda::Function", "AWS::Lambda::LayerVersion"}
    for (kind, logical), name in names.items():
        rule = NAME_RULES.get(kind.split("/")[0])
        if rule:
            assert re.fullmatch(rule, name), f"{logical}: {name!r} is no valid {kind} name"


def test_the_suffix_is_the_stack_ids_own_and_names_carry_the_stage() -> None:
    names = physical_names(evaluator({"SearchBackend": "opensearch-serverless"}, LONG_MIXED_CASE))
    assert names[("AWS::OpenSearchServerless::Collection", "MemoryCollection")] == "zg-prod-1a2b3c4d"
    domain = physical_names(evaluator())[("AWS::OpenSearchService::Domain", "OpenSearchDomain")]
    assert domain == "zg-prod-1a2b3c4d"


def test_schedules_let_cloudformation_name_them() -> None:
    events = [event for resource in load_template()["Resources"].values()
              for event in resource.get("Properties", {}).get("Events", {}).values() if event["Type"] == "ScheduleV2"]
    assert len(events) == 3 and all(event["Properties"]["OmitName"] is True for event in events)  # + chat learning
    schedules = [r for r in transformed()["Resources"].values() if r["Type"] == "AWS::Scheduler::Schedule"]
    assert len(schedules) == 3 and not any("Name" in schedule["Properties"] for schedule in schedules)


def test_every_stage_gets_its_own_index_alias_and_metric_namespace() -> None:
    variables = load_template()["Globals"]["Function"]["Environment"]["Variables"]
    prod, dev = evaluator(), evaluator({"Stage": "dev"}, "zengram-dev")
    assert prod.resolve(variables["ZENGRAM_OPENSEARCH_ALIAS"]) == "zengram-prod-memories"
    assert dev.resolve(variables["ZENGRAM_OPENSEARCH_ALIAS"]) == "zengram-dev-memories"
    assert prod.resolve(variables["POWERTOOLS_METRICS_NAMESPACE"]) == "Zengram/zengram-prod"


# ---- Rules ----

@pytest.mark.parametrize(("parameters", "refusal"), [
    ({"SearchBackend": "opensearch-existing"}, "SearchBackend=opensearch-existing needs ExistingOpenSearchEndpoint."),
    ({"SearchBackend": "opensearch-existing", "ExistingOpenSearchEndpoint": "https://search-x.eu-west-1.es.amazonaws.com"},
     "SearchBackend=opensearch-existing needs ExistingOpenSearchArn (the IAM policies name it)."),
    ({"Embedder": "openai", "EmbeddingDimensions": "1536"},
     "Embedder=openai needs OpenAIApiKeySecretName (a Secrets Manager secret with the key)."),
    ({"EmbeddingDimensions": "1536"}, "Bedrock Titan v2 embeddings have 256, 512 or 1024 dimensions."),
    ({"EmbeddingDimensions": "3072"}, "Bedrock Titan v2 embeddings have 256, 512 or 1024 dimensions."),
    ({"SearchBackend": "opensearch-serverless", "OpenSearchVpcId": "vpc-0abc", "OpenSearchSubnetIds": "subnet-0a"},
     "OpenSearchVpcId places the domain this stack creates (SearchBackend=opensearch-domain)."),
    ({"OpenSearchVpcId": "vpc-0abc"}, "OpenSearchVpcId needs OpenSearchSubnetIds."),
    ({"OpenSearchSubnetIds": "subnet-0a"}, "OpenSearchSubnetIds needs OpenSearchVpcId."),
])
def test_rules_refuse_combinations_that_cannot_deploy(parameters: dict[str, Any], refusal: str) -> None:
    assert refusal in evaluator(parameters).failed_rules()


@pytest.mark.parametrize("parameters", [
    {},
    *EVERY_BACKEND,
    {"SearchBackend": "opensearch-existing", "ExistingOpenSearchEndpoint": "https://search-x.eu-west-1.es.amazonaws.com",
     "ExistingOpenSearchArn": "arn:aws:es:eu-west-1:123456789012:domain/shared-search"},
    {"Embedder": "openai", "OpenAIApiKeySecretName": "openai", "EmbeddingDimensions": "3072"},
    {"EmbeddingDimensions": "256"},
])
def test_rules_accept_combinations_that_work(parameters: dict[str, Any]) -> None:
    stack = evaluator(parameters)
    assert stack.failed_rules() == [] and stack.refused_parameters() == []


@pytest.mark.parametrize(("parameter", "value"), [
    ("Stage", "Prod"), ("Stage", "production-eu1"), ("Stage", "1st"),
    ("ExistingOpenSearchArn", "arn:aws:es:eu-west-1:123456789012:domain/x/*"),
    ("ExistingOpenSearchEndpoint", "search-x.eu-west-1.es.amazonaws.com"),
    ("OperatorPrincipalArn", "*"),
])
def test_parameter_patterns_refuse_values_that_would_break_names_or_policies(parameter: str, value: str) -> None:
    assert evaluator({parameter: value}).refused_parameters() == [parameter]


# ---- access to the search index ----

def role_policies(stack: Evaluator, function: str) -> list[dict[str, Any]]:
    """Every statement the function's role holds: inline, and from the stack's managed policies it attaches."""
    resources = created(stack)
    role = resources[f"{function}Role"]["Properties"]
    statements = [s for policy in role.get("Policies", []) for s in policy["PolicyDocument"]["Statement"]]
    for arn in role.get("ManagedPolicyArns", []):
        logical = next((name for name in resources if arn.startswith(f"{stack.stack.name}-{name}-")), None)
        if logical:
            statements += resources[logical]["Properties"]["PolicyDocument"]["Statement"]
    return statements


def search_actions(stack: Evaluator, function: str) -> set[str]:
    return {action for statement in role_policies(stack, function)
            for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
            if action.startswith(("es:", "aoss:"))}


@pytest.mark.parametrize("function", ["ReflectFunction", "ResearchStepFunction", "BriefingFunction", "HealthFunction"])
def test_readers_may_not_create_or_change_indexes(function: str) -> None:
    actions = search_actions(evaluator(), function)
    assert actions == {"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "aoss:APIAccessAll"}


@pytest.mark.parametrize("function", ["MemoryFunction", "RepairFunction", "ExportFunction", "EntitiesFunction",
                                      "ConsolidateFunction", "IndexBootstrapFunction", "DocumentsFunction",
                                      "DocumentsStepFunction"])
def test_writers_may_write(function: str) -> None:
    assert {"es:ESHttpPut", "es:ESHttpDelete"} <= search_actions(evaluator(), function)


@pytest.mark.parametrize("function", ["ClientsFunction", "ResearchFunction"])
def test_functions_without_a_search_index_get_no_access_to_it(function: str) -> None:
    assert search_actions(evaluator(), function) == set()


def test_an_existing_domain_is_reachable_down_to_its_index_paths() -> None:
    arn = "arn:aws:es:eu-west-1:123456789012:domain/shared-search"
    stack = evaluator({"SearchBackend": "opensearch-existing", "ExistingOpenSearchArn": arn,
                       "ExistingOpenSearchEndpoint": "https://search-shared.eu-west-1.es.amazonaws.com"})
    statement = created(stack)["SearchWritePolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert statement["Resource"] == [arn, f"{arn}/*"]


def test_the_created_domain_admits_only_the_stacks_search_roles() -> None:
    stack = evaluator({"OperatorPrincipalArn": "arn:aws:iam::123456789012:role/ops"})
    policy = created(stack)["OpenSearchDomain"]["Properties"]["AccessPolicies"]
    (statement,) = policy["Statement"]
    principals = statement["Principal"]["AWS"]
    assert not any(principal.endswith(":root") or principal == "*" for principal in principals)
    roles = {match.group(1) for principal in principals
             if (match := re.search(f"{stack.stack.name}-(\\w+)-GENERATED1", principal))}
    assert roles == {f"{name}FunctionRole" for name in ("Memory", "Briefing", "Export", "Entities", "Repair",
                                                       "ResearchStep", "Reflect", "Consolidate", "IndexBootstrap",
                                                       "Chat", "ChatData", "ChatLearning", "Documents",
                                                       "DocumentsStep")}
    assert "arn:aws:iam::123456789012:role/ops" in principals
    assert statement["Resource"] == "arn:aws:es:eu-west-1:123456789012:domain/zg-prod-1a2b3c4d/*"


def test_the_domain_can_be_placed_in_a_vpc_with_the_functions() -> None:
    resources = created(evaluator(EVERY_BACKEND[0]))
    vpc = resources["OpenSearchDomain"]["Properties"]["VPCOptions"]
    assert vpc["SubnetIds"] == ["subnet-0a"]
    assert vpc["SecurityGroupIds"] == [evaluator().ref("OpenSearchSecurityGroup")]
    ingress = resources["OpenSearchSecurityGroup"]["Properties"]["SecurityGroupIngress"]
    assert ingress == [{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "Description": "HTTPS from the Zengram "
                        "functions", "SourceSecurityGroupId": evaluator().ref("FunctionSecurityGroup")}]
    functions = [r for r in resources.values() if r["Type"] == "AWS::Lambda::Function"]
    assert all(f["Properties"]["VpcConfig"]["SubnetIds"] == ["subnet-0a", "subnet-0b"] for f in functions)
    public = created(evaluator())
    assert "VPCOptions" not in public["OpenSearchDomain"]["Properties"] and "FunctionSecurityGroup" not in public


def test_the_collection_data_policy_lets_only_the_bootstrap_and_operator_manage_indexes() -> None:
    stack = evaluator(EVERY_BACKEND[1])
    rules = json.loads(created(stack)["CollectionAccessPolicy"]["Properties"]["Policy"])
    by_permission: dict[str, set[str]] = {}
    for rule in rules:
        for grant in rule["Rules"]:
            assert grant["Resource"] in (["index/zg-prod-1a2b3c4d/*"], ["collection/zg-prod-1a2b3c4d"])
            for permission in grant["Permission"]:
                by_permission.setdefault(permission, set()).update(rule["Principal"])
    managers = {stack.resolve({"Fn::GetAtt": ["IndexBootstrapFunctionRole", "Arn"]}),
                "arn:aws:iam::123456789012:role/ops"}
    assert by_permission["aoss:CreateIndex"] == by_permission["aoss:DeleteIndex"] == managers  # reindex deletes
    # writers: memory, repair, export, entities, consolidate, chat, chat data, chat learning (and the two managers)
    assert len(by_permission["aoss:ReadDocument"]) == 13 and len(by_permission["aoss:WriteDocument"]) == 10


# ---- secrets ----

def test_no_secret_value_reaches_a_function_configuration() -> None:
    text = json.dumps(load_template())
    assert "{{resolve:secretsmanager" not in text
    stack = evaluator(EVERY_BACKEND[1])
    for resource in created(stack).values():
        if resource["Type"] == "AWS::Lambda::Function":
            variables = resource["Properties"]["Environment"]["Variables"]
            assert "OPENAI_API_KEY" not in variables
            if variables.get("ZENGRAM_EMBEDDER") == "openai":
                assert variables["ZENGRAM_OPENAI_API_KEY_SECRET_ID"] == "openai"


@pytest.mark.parametrize(("parameters", "documents"), [
    (EVERY_BACKEND[1], ()),
    ({"Embedder": "openai", "OpenAIApiKeySecretName": "openai"}, ("Documents", "DocumentsStep"))],
    ids=["serverless", "domain"])
def test_the_openai_key_secret_is_readable_by_the_functions_that_embed_only(parameters: dict[str, Any],
                                                                            documents: tuple[str, ...]) -> None:
    stack = evaluator(parameters)
    statement = created(stack)["OpenAIKeyPolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert statement["Action"] == "secretsmanager:GetSecretValue"
    assert statement["Resource"] == "arn:aws:secretsmanager:eu-west-1:123456789012:secret:openai-*"
    readers = {logical.removesuffix("Role") for logical, r in created(stack).items() if r["Type"] == "AWS::IAM::Role"
               and stack.ref("OpenAIKeyPolicy") in r["Properties"].get("ManagedPolicyArns", [])}
    assert readers == {f"{name}Function" for name in ("Health", "Memory", "Briefing", "Export", "Entities", "Repair",
                                                     "ResearchStep", "Reflect", "Consolidate", "IndexBootstrap",
                                                     "Chat", "ChatData", "ChatLearning", *documents)}
    assert "OpenAIKeyPolicy" not in created(evaluator())


# ---- the document knowledge base ----

DOCUMENTS = {"DocumentsBucket", "DocumentsBucketPolicy", "DocumentsTable", "DocumentsFunction", "DocumentsStepFunction",
             "DocumentsIndexStateMachine", "DocumentsIndexStateMachineLogs", "DocumentsFunctionLogGroup",
             "DocumentsStepFunctionLogGroup", "DocumentsFunctionFailingAlarm", "DocumentsStepFunctionFailingAlarm",
             "DocumentsIndexingFailedAlarm", "DocumentsTableThrottlesAlarm", "DocumentsWatchRule",
             "DocumentsWatchQueue", "DocumentsWatchDeadLetterQueue", "DocumentsWatchQueuePolicy",
             "DocumentsWatchFunction", "DocumentsWatchFunctionLogGroup", "DocumentsWatchFunctionFailingAlarm",
             "DocumentsWatchDeadLettersAlarm"}


@pytest.mark.parametrize(("parameters", "deployed"), [
    ({}, True),
    ({"SearchBackend": "opensearch-existing", "ExistingOpenSearchService": "es",
      "ExistingOpenSearchArn": "arn:aws:es:eu-west-1:123456789012:domain/shared",
      "ExistingOpenSearchEndpoint": "https://search-shared.eu-west-1.es.amazonaws.com"}, True),
    (EVERY_BACKEND[1], False),
    ({"SearchBackend": "opensearch-existing", "ExistingOpenSearchService": "aoss",
      "ExistingOpenSearchArn": "arn:aws:aoss:eu-west-1:123456789012:collection/abc",
      "ExistingOpenSearchEndpoint": "https://abc.eu-west-1.aoss.amazonaws.com"}, False),
], ids=["domain", "existing-domain", "serverless", "existing-collection"])
def test_the_document_knowledge_base_is_deployed_on_domains_only(parameters: dict[str, Any], deployed: bool) -> None:
    resources = created(evaluator(parameters))
    assert (DOCUMENTS & set(resources)) == (DOCUMENTS if deployed else set())
    assert ("/kb/{proxy+}" in resources["HttpApi"]["Properties"]["Body"]["paths"]) == deployed  # the route too


def test_the_documents_functions_follow_the_stack() -> None:
    stack = evaluator()
    resources = created(stack)
    for function in ("DocumentsFunction", "DocumentsStepFunction"):
        variables = resources[function]["Properties"]["Environment"]["Variables"]
        assert variables["ZENGRAM_DOCUMENTS_OPENSEARCH_ALIAS"] == "zengram-prod-documents"  # per stage
        assert variables["ZENGRAM_SEARCH_INDEX"] == "opensearch" and variables["ZENGRAM_RECORD_STORE"] == "dynamodb"
        assert variables["ZENGRAM_API_KEY_SECRET_ID"] == stack.ref("ApiKeySecret")  # key check / scrubber key
        assert "FunctionName" not in resources[function]["Properties"]  # named by CloudFormation, per stack
        assert stack.ref("SearchWritePolicy") in resources[f"{function}Role"]["Properties"]["ManagedPolicyArns"]
    api_statements = role_policies(stack, "DocumentsFunction")
    assert any(statement.get("Sid") == "ApiKeys" and statement["Action"] == "dynamodb:GetItem"
               for statement in api_statements)
    assert not any("RATE#" in json.dumps(statement) for statement in api_statements)  # /kb is not rate limited


# ---- the index bootstrap step ----

def test_the_index_is_created_by_its_own_step_before_anything_searches_it() -> None:
    resource = load_template()["Resources"]["SearchIndex"]
    assert resource["Type"] == "Custom::ZengramSearchIndex"
    assert resource["Properties"]["ServiceToken"] == {"Ref": "IndexBootstrapFunction.Alias"}
    serverless = created(evaluator(EVERY_BACKEND[1]))["SearchIndex"]["Properties"]
    assert serverless["DataAccessPolicy"] == evaluator().ref("CollectionAccessPolicy")  # waits for its access
    assert created(evaluator())["SearchIndex"]["Properties"]["Alias"] == "zengram-prod-memories"


# ---- failures and alarms ----

def test_every_schedule_retries_then_dead_letters() -> None:
    resources = created(evaluator())
    queue = evaluator().resolve({"Fn::GetAtt": ["ScheduleDeadLetterQueue", "Arn"]})
    for resource in (r for r in resources.values() if r["Type"] == "AWS::Scheduler::Schedule"):
        target = resource["Properties"]["Target"]
        assert target["DeadLetterConfig"] == {"Arn": queue}
        assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1


@pytest.mark.parametrize(("function", "retries"), [("ConsolidateFunction", 2), ("RepairFunction", 0)])
def test_async_invocations_that_fail_land_in_a_queue(function: str, retries: int) -> None:
    resources = created(evaluator())
    config = resources[f"{function}EventInvokeConfig"]["Properties"]
    assert config["MaximumRetryAttempts"] == retries
    assert config["DestinationConfig"]["OnFailure"]["Destination"] == evaluator().resolve(
        {"Fn::GetAtt": ["FailedInvocationsQueue", "Arn"]})


def alarms(stack: Evaluator) -> list[dict[str, Any]]:
    return [r["Properties"] for r in created(stack).values() if r["Type"] == "AWS::CloudWatch::Alarm"]


def watched(alarm: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    """(namespace, metric, dimensions) of every metric an alarm reads."""
    metrics = [query["MetricStat"]["Metric"] for query in alarm.get("Metrics", []) if "MetricStat" in query]
    if "MetricName" in alarm:
        metrics.append(alarm)
    return [(m["Namespace"], m["MetricName"], {d["Name"]: d["Value"] for d in m.get("Dimensions", [])})
            for m in metrics]


def test_every_function_raises_an_alarm_on_errors_and_throttles() -> None:
    stack = evaluator()
    functions = {stack.ref(logical) for logical, r in created(stack).items() if r["Type"] == "AWS::Lambda::Function"
                 and logical != "IndexBootstrapFunction"}  # it runs only while CloudFormation waits on it
    covered: dict[str, set[str]] = {}
    for alarm in alarms(stack):
        for namespace, metric, dimensions in watched(alarm):
            if namespace == "AWS/Lambda":
                covered.setdefault(dimensions["FunctionName"], set()).add(metric)
    assert {"MemoryFunction", "AdminFunction", "RepairFunction"} <= {name.split("-")[-2] for name in functions}
    assert {name: covered.get(name) for name in functions} == {name: {"Errors", "Throttles"} for name in functions}


def test_queues_table_and_repair_backlog_raise_alarms() -> None:
    stack = evaluator()
    metrics = {(namespace, metric, tuple(sorted(dimensions.items())))
               for alarm in alarms(stack) for namespace, metric, dimensions in watched(alarm)}
    for queue in ("FailedInvocationsQueue", "ScheduleDeadLetterQueue"):
        name = stack.resolve({"Fn::GetAtt": [queue, "QueueName"]})
        assert ("AWS/SQS", "ApproximateNumberOfMessagesVisible", (("QueueName", name),)) in metrics
    table = (("TableName", stack.ref("MemoryTable")),)
    assert {("AWS/DynamoDB", "ReadThrottleEvents", table), ("AWS/DynamoDB", "WriteThrottleEvents", table)} <= metrics
    # The backlog alarm reads what the repair function emits: its namespace, its service dimension, its name.
    variables = load_template()["Globals"]["Function"]["Environment"]["Variables"]
    repair = load_template()["Resources"]["RepairFunction"]["Properties"]["Environment"]["Variables"]
    backlog = (stack.resolve(variables["POWERTOOLS_METRICS_NAMESPACE"]), PENDING_INDEX,
               (("service", repair["POWERTOOLS_SERVICE_NAME"]),))
    assert backlog in metrics
    parked = (stack.resolve(variables["POWERTOOLS_METRICS_NAMESPACE"]), RECORDS_PARKED,
              (("service", repair["POWERTOOLS_SERVICE_NAME"]),))
    assert parked in metrics


def test_every_alarm_notifies_the_alarm_topic() -> None:
    stack = evaluator({"AlarmEmail": "ops@example.com"})
    found = alarms(stack)
    assert len(found) >= 16  # one per function, the queues, the table, the repair backlog
    assert all(alarm["AlarmActions"] == [stack.ref("AlarmTopic")] for alarm in found)
    subscription = created(stack)["AlarmEmailSubscription"]["Properties"]
    assert subscription == {"TopicArn": stack.ref("AlarmTopic"), "Protocol": "email", "Endpoint": "ops@example.com"}
