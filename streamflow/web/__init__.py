"""Render streams in a browser: ASGI responses speaking the two UI protocols, and the web demo.

Needs the ``web`` extra (``pip install 'streamflow-llm[web]'``: starlette, uvicorn,
ag-ui-protocol). :func:`ui_message_stream_response` writes the Vercel AI SDK v5 UI
message stream (``useChat``), :func:`ag_ui_response` AG-UI events (CopilotKit and
the agent frameworks that speak it); both take a byte source, a UniEvent source or
an :func:`agent_run`, and cancel the upstream request when the client disconnects;
``on_finish`` hears how each answer ended. :func:`from_ui_messages` and
:func:`from_run_agent_input` read the client's history back in (:mod:`.history`),
:func:`to_ui_message` writes an answer as the ``UIMessage`` to store.
"""

from __future__ import annotations

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("streamflow.web needs the web extra: "
                      "pip install 'streamflow-llm[web]'") from exc

from .answer import Answer, to_ui_message
from .drive import AgentRun, EncoderSink, agent_resume, agent_run, approvals
from .history import from_ui_messages
from .history_agui import from_run_agent_input
from .outbox import Outbox
from .responses import (
    UI_MESSAGE_STREAM_HEADERS,
    EncodedStreamResponse,
    ag_ui_response,
    ui_message_stream_response,
)

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "AgentRun", "Answer", "EncodedStreamResponse",
           "EncoderSink", "Outbox", "ag_ui_response", "agent_resume", "agent_run", "approvals",
           "from_run_agent_input", "from_ui_messages", "to_ui_message",
           "ui_message_stream_response"]
