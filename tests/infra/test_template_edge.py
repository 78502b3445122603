"""template.yaml at the edge: every route but /health passes the Lambda authorizer (cached per key header, run
through its alias so it restores from a snapshot), browsers get CORS only for the origins a parameter names, and
routes are throttled by what a request costs. Read from the API document SAM generates (samtranslator)."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import pytest
from samtranslator.translator.transform import transform

from tests.infra.template_model import as_packaged, functions, load_template
from tests.infra.test_template import NoManagedPolicies

KEY_HEADERS = {"ApiKey": "x-api-key", "BearerToken": "Authorization", "MnexiumKey": "x-mnexium-key"}
OPEN_ROUTES = {("GET", "/health"), ("GET", "/kb/health")}  # the memory API's and the document base's
# The authorizer's ARN as SAM writes it: the alias in the cloud, the function itself on emulators (EndpointUrl set).
AUTHORIZER_ARN = {"Fn::If": ["Emulated", {"Fn::GetAtt": ["KeyAuthorizerFunction", "Arn"]},
                             {"Ref": "KeyAuthorizerFunctionAliaslive"}]}


@cache
def transformed(cors_origins: str = "") -> dict[str, Any]:
    parameters = {"CorsAllowedOrigins": cors_origins} if cors_origins else {}
    # The translator needs a region; set only while it runs, so no later test (on moto) inherits it.
    saved = os.environ.get("AWS_DEFAULT_REGION")
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    try:
        output: dict[str, Any] = transform(as_packaged(load_template()), parameters, NoManagedPolicies())
    finally:
        if saved is None:
            del os.environ["AWS_DEFAULT_REGION"]
    return output


def api_document(cors_origins: str = "") -> dict[str, Any]:
    document: dict[str, Any] = transformed(cors_origins)["Resources"]["HttpApi"]["Properties"]["Body"]
    return document


def unconditional(value: Any) -> Any:
    """What a conditional part of the document is when its condition holds (SAM wraps a conditional function's
    routes in `Fn::If`: the document base's, on a stack whose search backend takes documents)."""
    while isinstance(value, dict) and "Fn::If" in value:
        value = value["Fn::If"][1]
    return value


def deployed_routes() -> dict[tuple[str, str], list[dict[str, list[str]]]]:
    """Every route of the HTTP API and the security (authorizer) it is deployed with."""
    routes = {}
    for path, operations in api_document()["paths"].items():
        for method, operation in unconditional(operations).items():
            verb = "ANY" if method == "x-amazon-apigateway-any-method" else method.upper()
            routes[(verb, path)] = unconditional(operation).get("security", [])
    return routes


def test_every_route_but_health_passes_an_authorizer() -> None:
    routes = deployed_routes()
    every_function_route = set().union(*(function.routes for function in functions(load_template())))
    assert set(routes) == every_function_route and set(routes) >= OPEN_ROUTES
    for route, security in routes.items():
        if route in OPEN_ROUTES:
            assert security == [{"NONE": []}], route
        else:
            assert len(security) == 1 and set(security[0]) <= set(KEY_HEADERS), (route, security)


def expected_authorizer(path: str) -> str:
    """The header each client family sends its key in: the mnexium SDK `x-mnexium-key` (/api/v1), agent-brain-cli
    `Authorization: Bearer` (/kb), Zengram's own clients `x-api-key` (the rest)."""
    if path.startswith("/api/v1/"):
        return "MnexiumKey"
    return "BearerToken" if path.startswith("/kb/") else "ApiKey"


def test_each_client_family_is_authorized_on_the_header_its_client_sends() -> None:
    for (method, path), security in deployed_routes().items():
        if (method, path) not in OPEN_ROUTES:
            assert set(security[0]) == {expected_authorizer(path)}, (method, path, security)


def test_each_authorizer_is_cached_on_one_key_header_and_answers_simply() -> None:
    schemes = api_document()["components"]["securitySchemes"]
    assert set(schemes) == set(KEY_HEADERS)
    for name, header in KEY_HEADERS.items():
        authorizer = schemes[name]["x-amazon-apigateway-authorizer"]
        # One header each: API Gateway refuses (401) a request missing any header of a cached identity source.
        assert authorizer["identitySource"] == [f"$request.header.{header}"]
        assert authorizer["authorizerResultTtlInSeconds"] == {"Ref": "AuthorizerCacheSeconds"}
        assert authorizer["authorizerPayloadFormatVersion"] == "2.0" and authorizer["enableSimpleResponses"] is True
        # Through the alias (the published version, restored from its snapshot), unless running on emulators.
        assert authorizer["authorizerUri"]["Fn::Sub"][1]["__FunctionArn__"] == AUTHORIZER_ARN
    cache_seconds = load_template()["Parameters"]["AuthorizerCacheSeconds"]
    assert 0 < cache_seconds["Default"] <= 300 and cache_seconds["MaxValue"] == 3600


def test_the_authorizer_runs_through_its_alias_in_the_cloud_and_as_itself_on_emulators() -> None:
    """SAM local resolves no alias (it dropped every authorizer, leaving each route open); it resolves `Fn::If` on a
    parameter and `Fn::GetAtt ….Arn`. So the function itself serves exactly when EndpointUrl names an emulator."""
    template = load_template()
    assert template["Parameters"]["EndpointUrl"]["Default"] == ""
    assert template["Conditions"]["Emulated"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "EndpointUrl"}, ""]}]}
    for name in KEY_HEADERS:
        authorizer = template["Resources"]["HttpApi"]["Properties"]["Auth"]["Authorizers"][name]
        assert authorizer["FunctionArn"] == {"Fn::If": ["Emulated", {"Fn::GetAtt": ["KeyAuthorizerFunction", "Arn"]},
                                                        {"Ref": "KeyAuthorizerFunction.Alias"}]}


def test_api_gateway_may_invoke_the_authorizer_alias_and_it_may_read_only_keys() -> None:
    resources = transformed()["Resources"]
    permissions = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Lambda::Permission"
                   and r["Properties"]["FunctionName"] == AUTHORIZER_ARN]
    assert permissions and all(p["Principal"] == "apigateway.amazonaws.com" for p in permissions)
    assert all("/authorizers/*" in p["SourceArn"]["Fn::Sub"][0] for p in permissions)
    policies = load_template()["Resources"]["KeyAuthorizerFunction"]["Properties"]["Policies"]
    statements = [s for policy in policies if "Statement" in policy for s in policy["Statement"]]
    assert [(s["Action"], s["Condition"]["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"]) for s in statements] \
        == [("dynamodb:GetItem", ["KEYS"])]
    assert [name for policy in policies for name in policy if name != "Statement"] == [
        "AWSSecretsManagerGetSecretValuePolicy"]


def test_cors_is_off_without_origins_and_names_them_when_given() -> None:
    assert load_template()["Parameters"]["CorsAllowedOrigins"]["Default"] == ""
    condition = load_template()["Conditions"]["HasCorsOrigins"]
    assert condition == {"Fn::Not": [{"Fn::Equals": [{"Ref": "CorsAllowedOrigins"}, ""]}]}
    cors = api_document("https://app.example.com,https://admin.example.com")["x-amazon-apigateway-cors"]
    assert cors["Fn::If"][0] == "HasCorsOrigins" and cors["Fn::If"][2] == {"Ref": "AWS::NoValue"}
    allowed = cors["Fn::If"][1]
    assert allowed["allowOrigins"] == {"Fn::Split": [",", "https://app.example.com,https://admin.example.com"]}
    assert {"x-api-key", "authorization", "x-mnexium-key", "content-type"} <= set(allowed["allowHeaders"])
    assert "x-request-id" in allowed["exposeHeaders"] and "retry-after" in allowed["exposeHeaders"]


def stage() -> dict[str, Any]:
    stages = [r["Properties"] for r in transformed()["Resources"].values() if r["Type"] == "AWS::ApiGatewayV2::Stage"]
    assert len(stages) == 1
    return stages[0]


def limits(settings: dict[str, Any]) -> tuple[int, int]:
    """(rate, burst) of route settings, at the parameters' defaults."""
    parameters = load_template()["Parameters"]
    return (parameters[settings["ThrottlingRateLimit"]["Ref"]]["Default"],
            parameters[settings["ThrottlingBurstLimit"]["Ref"]]["Default"])


def test_routes_are_throttled_by_what_a_request_costs() -> None:
    default = limits(stage()["DefaultRouteSettings"])
    by_route = {route: limits(settings) for route, settings in stage()["RouteSettings"].items()}
    assert set(by_route) <= {f"{method} {path}" for method, path in deployed_routes()}  # each names a real route
    assert "POST /memory" not in by_route and "GET /memory/search" not in by_route  # the hot paths: the default
    llm, bulk = by_route["POST /reflect"], by_route["POST /consolidate"]
    assert by_route["POST /research"] == llm
    assert by_route["POST /export/import"] == by_route["POST /entities/reclassify"] == bulk
    assert default[0] > llm[0] > bulk[0] >= 1 and default[1] > llm[1] > bulk[1] >= 1


@pytest.mark.parametrize("parameter", ["ThrottlingRateLimit", "ThrottlingBurstLimit", "LlmRouteRateLimit",
                                       "LlmRouteBurstLimit", "BulkRouteRateLimit", "BulkRouteBurstLimit"])
def test_every_throttle_is_a_parameter_that_cannot_go_negative(parameter: str) -> None:
    spec = load_template()["Parameters"][parameter]
    assert spec["Type"] == "Number" and spec["MinValue"] == 0
