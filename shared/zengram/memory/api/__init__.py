"""One APIRouter per endpoint group; each becomes one Lambda function on AWS."""
