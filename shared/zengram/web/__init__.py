"""HTTP layer: one APIRouter per endpoint group, shared middleware, one error mapper."""
