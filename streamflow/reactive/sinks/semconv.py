"""OpenTelemetry GenAI semantic-convention names used by streamflow (the one place for them).

Names follow the OpenTelemetry GenAI semantic conventions (client inference spans,
``invoke_agent`` and ``execute_tool`` spans, the ``gen_ai.client.*`` metrics with
their advised bucket boundaries; ``gen_ai.*`` attributes); ``streamflow.*`` names
are streamflow's own additions. Kept as plain strings so this module needs no
OpenTelemetry package.
"""

from __future__ import annotations

__all__ = [
    "DURATION_BUCKETS",
    "ERROR_CANCELLED",
    "ERROR_TYPE",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CLIENT_OPERATION_DURATION",
    "GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK",
    "GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK",
    "GEN_AI_CLIENT_TOKEN_USAGE",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK",
    "GEN_AI_TOKEN_TYPE",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_DESCRIPTION",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "GEN_AI_USAGE_REASONING_OUTPUT_TOKENS",
    "OPERATION_CHAT",
    "OPERATION_EXECUTE_TOOL",
    "OPERATION_INVOKE_AGENT",
    "PROVIDER_BY_DIALECT",
    "STREAMFLOW_APPROVAL_EVENT",
    "STREAMFLOW_ATTEMPTS",
    "STREAMFLOW_COST",
    "STREAMFLOW_DIALECT",
    "STREAMFLOW_INTER_CHUNK_P50",
    "STREAMFLOW_INTER_CHUNK_P99",
    "STREAMFLOW_RETRY_ATTEMPT",
    "STREAMFLOW_RETRY_DROPPED",
    "STREAMFLOW_RETRY_ENDPOINT",
    "STREAMFLOW_RETRY_EVENT",
    "STREAMFLOW_STALLS",
    "STREAMFLOW_TOOL_PROGRESS_EVENT",
    "TOKEN_BUCKETS",
    "TOKEN_TYPE_INPUT",
    "TOKEN_TYPE_OUTPUT",
    "TOOL_TYPE_FUNCTION",
    "provider_name",
    "span_name",
]

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
ERROR_TYPE = "error.type"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOOL_DESCRIPTION = "gen_ai.tool.description"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"  # opt-in: content
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"  # opt-in: content
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"

OPERATION_CHAT = "chat"
OPERATION_INVOKE_AGENT = "invoke_agent"
OPERATION_EXECUTE_TOOL = "execute_tool"
TOOL_TYPE_FUNCTION = "function"
TOKEN_TYPE_INPUT = "input"
TOKEN_TYPE_OUTPUT = "output"
ERROR_CANCELLED = "cancelled"

#: The GenAI client metrics (histograms).
GEN_AI_CLIENT_TOKEN_USAGE = "gen_ai.client.token.usage"  # unit {token}
GEN_AI_CLIENT_OPERATION_DURATION = "gen_ai.client.operation.duration"  # unit s
GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"  # s
#: each gap after the first chunk (s): recorded from the stream's sample of gaps
GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK = "gen_ai.client.operation.time_per_output_chunk"

#: The bucket boundaries the conventions advise for the token and the time histograms.
TOKEN_BUCKETS: tuple[float, ...] = tuple(float(4 ** n) for n in range(14))
DURATION_BUCKETS: tuple[float, ...] = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56,
                                       5.12, 10.24, 20.48, 40.96, 81.92)

STREAMFLOW_DIALECT = "streamflow.dialect"
STREAMFLOW_COST = "streamflow.usage.cost"
STREAMFLOW_RETRY_EVENT = "streamflow.retry"
STREAMFLOW_RETRY_ATTEMPT = "streamflow.retry.attempt"
STREAMFLOW_RETRY_DROPPED = "streamflow.retry.dropped_groups"  # a continuation's drops
STREAMFLOW_RETRY_ENDPOINT = "streamflow.retry.endpoint"  # where a continuation went on
STREAMFLOW_ATTEMPTS = "streamflow.attempts"  # requests made for the answer
STREAMFLOW_STALLS = "streamflow.stalls"  # attempts ended by a first-chunk or idle timeout
STREAMFLOW_INTER_CHUNK_P50 = "streamflow.inter_chunk.p50"  # s between content chunks
STREAMFLOW_INTER_CHUNK_P99 = "streamflow.inter_chunk.p99"
STREAMFLOW_TOOL_PROGRESS_EVENT = "streamflow.tool.progress"
STREAMFLOW_APPROVAL_EVENT = "streamflow.approval.request"

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
    from ...wire.dialects import DIALECTS, get_dialect  # the dialect's own fact, when registered

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
