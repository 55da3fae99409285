"""Render streams in a browser: ASGI responses speaking the two UI protocols, and the web demo.

Needs the ``web`` extra (``pip install 'streamflow-llm[web]'``: starlette, uvicorn,
ag-ui-protocol). :func:`ui_message_stream_response` writes the Vercel AI SDK v5 UI
message stream (``useChat``), :func:`ag_ui_response` AG-UI events (CopilotKit and
the agent frameworks that speak it); both take a byte source, a UniEvent source or
an :func:`agent_run`, and cancel the upstream request when the client disconnects.
"""

from __future__ import annotations

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("streamflow.web needs the web extra: "
                      "pip install 'streamflow-llm[web]'") from exc

from .drive import AgentRun, EncoderSink, agent_run
from .outbox import Outbox
from .responses import (
    UI_MESSAGE_STREAM_HEADERS,
    EncodedStreamResponse,
    ag_ui_response,
    ui_message_stream_response,
)

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "AgentRun", "EncodedStreamResponse", "EncoderSink",
           "Outbox", "ag_ui_response", "agent_run", "ui_message_stream_response"]
