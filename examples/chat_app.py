"""A chat backend in one screen: useChat's history in, chats kept in SQLite, answers saved.

Run it with ``uvicorn examples.chat_app:app`` (the ``web`` extra; ``ANTHROPIC_API_KEY``,
optionally ``ANTHROPIC_BASE_URL``; ``CHAT_DB`` names the database file). Each POST
to ``/api/chat`` carries the chat ``id`` and its messages (useChat sends them all; a
client that sends only the new one works too): the new user message is stored, the
chat's whole stored history goes to the model (tool calls, results and signed
thinking included, through :func:`~streamflow.servers.web.from_ui_messages`), and
``on_finish`` stores the answer as the user saw it (partial when it failed or the
user left). ``GET /api/chat/{id}`` returns the stored ``UIMessage[]`` (the page's
initial messages); the database is a file, so chats survive a restart.
``/api/agui`` serves an AG-UI ``HttpAgent`` the same way (its thread is the chat).

With ``REDIS_URL`` set, every instance shares the answers through
:class:`~streamflow.servers.web.resume.ResumableStreams`: an answer (the whole agent run,
tool calls and all) is produced into Redis, ``GET /api/chat/{id}/stream`` resumes it (the AI SDK's
``resume: true``), and ``POST /api/chat/{id}/stop`` -- where the page's stop button
goes besides aborting its fetch -- stops it on whichever instance runs it (the chat's
``x-resume-token`` required); ``on_finish`` then stores the partial.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from streamflow import Agent, ToolRegistry
from streamflow.app.agent import http_sender
from streamflow.app.providers import make_provider
from streamflow.servers.web import (
    Answer,
    ag_ui_response,
    agent_run,
    from_run_agent_input,
    from_ui_messages,
    to_ui_message,
    ui_message_stream_response,
)
from streamflow.servers.web.resume import ResumableStreams

SYSTEM = "You are a helpful assistant."  # the app's own prompt: never taken from the client


class ChatStore:
    """Chats in one SQLite file: each chat an ordered list of UIMessage JSON."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.lock = threading.Lock()
        with self.lock, self.db:
            self.db.execute("CREATE TABLE IF NOT EXISTS messages (chat_id TEXT, seq INTEGER, "
                            "id TEXT, body TEXT, PRIMARY KEY (chat_id, id))")

    def load(self, chat_id: str) -> list[dict[str, Any]]:
        with self.lock:
            rows = self.db.execute("SELECT body FROM messages WHERE chat_id = ? ORDER BY seq",
                                   (chat_id,)).fetchall()
        return [json.loads(body) for (body,) in rows]

    def save(self, chat_id: str, message: dict[str, Any]) -> None:
        """Add ``message``, or replace the stored one of the same id (keeping its place)."""
        with self.lock, self.db:
            self.db.execute(
                "INSERT INTO messages VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages"
                " WHERE chat_id = ?), ?, ?) ON CONFLICT (chat_id, id) DO UPDATE SET body ="
                " excluded.body", (chat_id, chat_id, message["id"], json.dumps(message)))


def get_weather(city: str, unit: str = "celsius") -> dict:
    """Current weather for a city."""
    return {"city": city, "unit": unit, "temperature": 17, "conditions": "partly cloudy"}


store = ChatStore(os.environ.get("CHAT_DB", "chats.db"))
client = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=600.0))
provider = make_provider("anthropic", model="claude-sonnet-4-5",  # ANTHROPIC_API_KEY from env
                         base_url=os.environ.get("ANTHROPIC_BASE_URL"), system=SYSTEM)
tools = ToolRegistry([get_weather])
agent = Agent(provider, tools, http_sender(client))
streams = ResumableStreams(os.environ["REDIS_URL"]) if os.environ.get("REDIS_URL") else None


def saver(chat_id: str, message_id: str) -> Any:
    def on_finish(answer: Answer, *, status: str) -> None:  # completed, failed or aborted
        store.save(chat_id, to_ui_message(answer, id=message_id))
    return on_finish


async def chat(request: Request) -> Response:  # useChat's transport posts {id, messages, ...}
    body = await request.json()
    chat_id, new = body["id"], body["messages"][-1]
    store.save(chat_id, new)
    history = store.load(chat_id)
    message_id = f"{new['id']}-answer"
    run = agent_run(agent, from_ui_messages(history))
    if streams is not None:  # the run through Redis: resumable, stoppable from any instance
        return await streams.create(request, chat_id, run, to="vercel-ui",
                                    on_finish=saver(chat_id, message_id), message_id=message_id)
    return ui_message_stream_response(run, message_id=message_id,
                                      on_finish=saver(chat_id, message_id))


async def messages(request: Request) -> Response:
    return JSONResponse(store.load(request.path_params["chat_id"]))


async def resume(request: Request) -> Response:  # the AI SDK's reconnect (resume: true)
    if streams is None:
        return Response(status_code=204)
    return await streams.response(request, request.path_params["chat_id"], to="vercel-ui")


async def stop(request: Request) -> Response:  # the stop button, from any instance
    if streams is None:
        return Response(status_code=204)  # the aborted fetch already stopped it
    return await streams.stop_response(request, request.path_params["chat_id"])


async def agui(request: Request) -> Response:  # an AG-UI HttpAgent posts a RunAgentInput
    run = await request.json()
    return ag_ui_response(agent_run(agent, from_run_agent_input(run)),
                          thread_id=run["threadId"], run_id=run["runId"])


app = Starlette(routes=[Route("/api/chat", chat, methods=["POST"]),
                        Route("/api/chat/{chat_id}", messages, methods=["GET"]),
                        Route("/api/chat/{chat_id}/stream", resume, methods=["GET"]),
                        Route("/api/chat/{chat_id}/stop", stop, methods=["POST"]),
                        Route("/api/agui", agui, methods=["POST"])],
                lifespan=streams.lifespan if streams is not None else None)
