"""The baseline `make bench-coldstart` measures the functions against: a bare FastAPI app with one route behind
Mangum, the least a FastAPI + Mangum Lambda function imports."""

from fastapi import FastAPI
from mangum import Mangum

app = FastAPI()


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


handler = Mangum(app, lifespan="off")
