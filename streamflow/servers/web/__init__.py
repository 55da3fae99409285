"""Render streams in a browser: ASGI responses speaking the two UI protocols, and the web demo.

Needs the ``web`` extra (``pip install 'streamflow-llm[web]'``: starlette, uvicorn,
ag-ui-protocol). :func:`ui_message_stream_response` writes the Vercel AI SDK v5 UI
message stream (``useChat``), :func:`ag_ui_response` AG-UI events (CopilotKit and
the agent frameworks that speak it); both take a byte source, a UniEvent source or
an :func:`agent_run`, and cancel the upstream request when the client disconnects;
``on_finish`` hears how each answer ended. :func:`from_ui_messages` and
:func:`from_run_agent_input` read the client's history back in (:func:`to_dialect`
writes neutral turns as a dialect's messages), :func:`to_ui_message` writes an answer
as the ``UIMessage`` to store. ``streamflow demo --web`` is the web demo.
"""

from __future__ import annotations

from ..._extras import require

require("streamflow.servers.web", "web", "starlette", "uvicorn", "ag_ui")


from ._answer import Answer, FinishStatus, OnFinish, to_ui_message
from ._drive import (
    AgentRun,
    EncoderSink,
    agent_answer,
    agent_resume,
    agent_run,
    apply_approvals,
    approvals,
)
from ._history import DataMapper, from_ui_messages, to_dialect
from ._history_agui import from_run_agent_input
from ._outbox import Outbox
from .responses import (
    UI_MESSAGE_STREAM_HEADERS,
    EncodedStreamResponse,
    ag_ui_response,
    ui_message_stream_response,
)

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "AgentRun", "Answer", "DataMapper",
           "EncodedStreamResponse", "EncoderSink", "FinishStatus", "OnFinish", "Outbox",
           "ag_ui_response", "agent_answer", "agent_resume", "agent_run", "apply_approvals",
           "approvals",
           "from_run_agent_input", "from_ui_messages", "to_dialect", "to_ui_message",
           "ui_message_stream_response"]
