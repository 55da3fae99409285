"""OpenTelemetry GenAI semantic-convention names used by streamflow (the one place for them).

Names follow the OpenTelemetry GenAI semantic conventions (client spans,
``gen_ai.*`` attributes); ``streamflow.*`` names are streamflow's own additions.
Kept as plain strings so this module needs no OpenTelemetry package.
"""

from __future__ import annotations

__all__ = [
    "ERROR_CANCELLED",
    "ERROR_TYPE",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "GEN_AI_USAGE_REASONING_OUTPUT_TOKENS",
    "OPERATION_CHAT",
    "PROVIDER_BY_DIALECT",
    "STREAMFLOW_COST",
    "STREAMFLOW_DIALECT",
    "STREAMFLOW_RETRY_ATTEMPT",
    "STREAMFLOW_RETRY_EVENT",
    "STREAMFLOW_TIME_TO_FIRST_TOKEN",
    "provider_name",
    "span_name",
]

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
ERROR_TYPE = "error.type"

OPERATION_CHAT = "chat"
ERROR_CANCELLED = "cancelled"

STREAMFLOW_DIALECT = "streamflow.dialect"
STREAMFLOW_TIME_TO_FIRST_TOKEN = "streamflow.time_to_first_token_s"
STREAMFLOW_COST = "streamflow.usage.cost"
STREAMFLOW_RETRY_EVENT = "streamflow.retry"
STREAMFLOW_RETRY_ATTEMPT = "streamflow.retry.attempt"

#: ``gen_ai.provider.name`` well-known values of providers that are not a dialect name
#: (a registered dialect says its own: ``Decoder.provider_name``).
PROVIDER_BY_DIALECT: dict[str, str] = {
    "openai": "openai",
    "azure-openai": "azure.ai.openai",
    "vertex": "gcp.vertex_ai",
    "cohere": "cohere",
    "deepseek": "deepseek",
    "groq": "groq",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "perplexity": "perplexity",
    "openrouter": "openrouter",
}


def provider_name(dialect: str | None) -> str | None:
    """The ``gen_ai.provider.name`` of a dialect (its own name when not well known)."""
    if not dialect:
        return None
    key = dialect.lower().replace("_", "-")
    from ..dialects import DIALECTS, get_dialect  # the dialect's own fact, when registered

    if key in DIALECTS:
        try:
            named = get_dialect(key).provider_name
        except ImportError:
            named = ""
        if named:
            return named
    return PROVIDER_BY_DIALECT.get(key, key)


def span_name(model: str | None, operation: str = OPERATION_CHAT) -> str:
    """``"{operation} {model}"`` (just the operation when the model is unknown)."""
    return f"{operation} {model}" if model else operation
