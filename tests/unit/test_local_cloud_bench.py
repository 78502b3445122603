"""bench/local_cloud.py's requests: each function's sample event as the HTTP request a client sends, with the
cloud's keys in place of the samples' (the benchmark itself is not run by the tests)."""

from __future__ import annotations

import statistics

from bench import local_cloud

KEYS = {"x-api-key": "api-key-1", "x-mnexium-key": "chat-key-1", "admin": "admin-key-1"}


def test_every_sample_request_names_a_function_of_the_template_and_carries_the_clouds_key() -> None:
    from infra.local_jobs.template import load

    functions = {name for name, resource in load()["Resources"].items()
                 if resource["Type"] == "AWS::Serverless::Function"}
    assert set(local_cloud.HTTP_REQUESTS) | set(local_cloud.INVOKED) <= functions
    for function, relative in local_cloud.HTTP_REQUESTS.items():
        request = local_cloud.http_request(relative, KEYS)
        assert request["method"] in ("GET", "POST") and request["url"].startswith("/"), function
        sent = set(request["headers"].values())
        assert local_cloud.SAMPLE_KEY not in sent and "Bearer sample-api-key" not in sent, function
    memory = local_cloud.http_request("memory/get_query.json", KEYS)
    assert memory == {"method": "GET", "url": "/memory/query?type=facts&key=acme-tech-stack",
                      "headers": {"x-api-key": "api-key-1"}, "content": None}
    assert local_cloud.http_request("chat/get_history_list.json", KEYS)["headers"] == {"x-mnexium-key": "chat-key-1"}
    documents = local_cloud.http_request("documents/get_status.json", KEYS)["headers"]
    assert documents["authorization"] == "Bearer api-key-1"


def test_a_series_is_the_first_call_then_the_warm_percentiles() -> None:
    # each call starts and ends on the clock: the first takes 50 ms, the warm ones 1..20 ms
    durations = [50.0] + [float(n) for n in range(1, 21)]
    ticks = iter([t for d in durations for t in (0.0, d / 1000)])
    result = local_cloud.series(lambda: 200, 20, clock=lambda: next(ticks))
    assert result["first_ms"] == 50.0 and result["status"] == 200
    assert result["p50_ms"] == statistics.median(range(1, 21))
    assert result["p95_ms"] == statistics.quantiles(range(1, 21), n=20)[18]
