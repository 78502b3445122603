"""The API key from Secrets Manager or an SSM SecureString, read with Powertools parameters (cached)."""

from __future__ import annotations

KEY_CACHE_SECONDS = 300


def fetch_api_key(*, secret_id: str | None = None, parameter_name: str | None = None) -> str:
    """Reads the key from whichever store is configured; Powertools caches it between invocations."""
    from aws_lambda_powertools.utilities import parameters

    if secret_id:
        value = parameters.get_secret(secret_id, max_age=KEY_CACHE_SECONDS)
    elif parameter_name:
        value = parameters.get_parameter(parameter_name, decrypt=True, max_age=KEY_CACHE_SECONDS)
    else:
        raise ValueError("neither a secret id nor a parameter name is configured for the API key")
    if isinstance(value, bytes):
        value = value.decode()
    return str(value).strip()
