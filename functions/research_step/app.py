"""The Task states of the research state machine (infra/statemachines/research.asl.json): one step per call.

The event is `{"step": "retrieve" | "judge" | "synthesize", "state": <ResearchState>}`; the answer is the next
state. A step's error (e.g. LLMInvalidResponse) fails the execution under its class name, which the API
function's runner turns back into the same HTTP status.
"""

from typing import Any

from aws_lambda_powertools import Logger
from zengram.bootstrap import ContainerProvider, build_container
from zengram.domain.research import ResearchState
from zengram.settings import Settings

logger = Logger()
provider = ContainerProvider(lambda: build_container(Settings()))


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    step, state = str(event.get("step")), ResearchState.model_validate(event.get("state"))
    logger.info("research step", extra={"step": step, "iteration": state.iterations, "memories": len(state.memory_ids)})
    after: dict[str, Any] = provider.get().research.steps.run(step, state).model_dump(mode="json")
    return after
