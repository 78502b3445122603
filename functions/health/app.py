"""GET /health as a Lambda function."""

from typing import Any, cast

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum
from zengram.api.routers import health
from zengram.serverless import create_function_app

logger = Logger()
tracer = Tracer()
metrics = Metrics()
app = create_function_app([health.router])
asgi = Mangum(app, lifespan="off")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response: dict[str, Any] = asgi(event, cast(Any, context))  # Mangum declares its own context protocol
    return response
