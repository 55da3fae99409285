"""A chat backend in one screen: useChat's history in, chats kept in SQLite, answers saved.

Run it with ``uvicorn examples.chat_app:app`` (the ``web`` extra; ``ANTHROPIC_API_KEY``,
optionally ``ANTHROPIC_BASE_URL``; ``CHAT_DB`` names the database file). Each POST to
``/api/chat`` carries the chat ``id`` and its messages (useChat sends them all; a client
that sends only the new one works too): the new user message is stored (the chat cut after
it, so a regenerate drops the old answer), the whole stored history goes to the model (tool
calls, results and signed thinking included), and ``on_finish`` stores the answer as the
user saw it (partial when it failed or the user left). ``book_table`` needs the user's
approval: the answer stops at the call (``approval-requested``); ``addToolApprovalResponse``
posts the message back, only the user's answers are taken from it, and
:func:`~streamflow.servers.web.agent_answer` runs the call (or tells the model it was
denied) and goes on in the same message. ``GET /api/chat/{id}`` returns the stored
``UIMessage[]`` (the page's initial messages); chats survive a restart. The page names its
AI SDK major in ``x-ai-sdk`` (5, 6 or 7, the default), and gets the chunks that major knows.
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
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from streamflow import Agent, ToolRegistry
from streamflow.app.agent import http_sender
from streamflow.app.providers import make_provider
from streamflow.servers.web import (
    Answer,
    ag_ui_response,
    agent_answer,
    agent_run,
    apply_approvals,
    from_run_agent_input,
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
        """Add ``message``, or replace the stored one of the same id; the chat ends with it."""
        with self.lock, self.db:
            self.db.execute(
                "INSERT INTO messages VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages"
                " WHERE chat_id = ?), ?, ?) ON CONFLICT (chat_id, id) DO UPDATE SET body ="
                " excluded.body", (chat_id, chat_id, message["id"], json.dumps(message)))
            self.db.execute("DELETE FROM messages WHERE chat_id = ? AND seq > (SELECT seq FROM "
                            "messages WHERE chat_id = ? AND id = ?)",
                            (chat_id, chat_id, message["id"]))


def get_weather(city: str, unit: str = "celsius") -> dict:
    """Current weather for a city."""
    return {"city": city, "unit": unit, "temperature": 17, "conditions": "partly cloudy"}


bookings: list[dict[str, str]] = []  # the restaurant's book (a real app calls its API)
tools = ToolRegistry([get_weather])


@tools.tool(needs_approval=True)
def book_table(restaurant: str, time: str) -> dict:
    """Book a table at a restaurant (runs only once the user approved it)."""
    bookings.append({"restaurant": restaurant, "time": time})
    return {"restaurant": restaurant, "time": time, "booked": True}


store = ChatStore(os.environ.get("CHAT_DB", "chats.db"))
client = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=600.0))
provider = make_provider("anthropic", model="claude-sonnet-4-5",  # ANTHROPIC_API_KEY from env
                         base_url=os.environ.get("ANTHROPIC_BASE_URL"), system=SYSTEM)
agent = Agent(provider, tools, http_sender(client))
streams = ResumableStreams(os.environ["REDIS_URL"]) if os.environ.get("REDIS_URL") else None


def ai_sdk(request: Request) -> Any:
    """The page's AI SDK major (``x-ai-sdk``: 5, 6 or 7, the default), each its own chunks."""
    major = request.headers.get("x-ai-sdk", "7")
    if major not in ("5", "6", "7"):
        raise HTTPException(400, "x-ai-sdk is the AI SDK major: 5, 6 or 7")
    return int(major)


def answer_id(chat: list[dict[str, Any]]) -> str:
    """The id of the answer to the chat's last message (the message itself when it goes on)."""
    last = chat[-1]
    return str(last["id"]) if last["role"] == "assistant" else f"{last['id']}-answer"


async def chat(request: Request) -> Response:  # useChat's transport posts {id, messages, ...}
    body, major = await request.json(), ai_sdk(request)
    chat_id, new = body["id"], body["messages"][-1]
    if new["role"] == "assistant":  # addToolApprovalResponse posts the answered message back
        stored = store.load(chat_id)
        if not stored or stored[-1]["id"] != new["id"]:
            raise HTTPException(409, "an answer to a message that is not the chat's last")
        new = apply_approvals(stored[-1], new)  # only the answers are the client's
    store.save(chat_id, new)
    history = store.load(chat_id)
    message_id, run = answer_id(history), agent_answer(agent, history)

    def on_finish(answer: Answer, *, status: str) -> None:  # completed, failed or aborted
        store.save(chat_id, to_ui_message(answer, id=message_id, ai_sdk=major))

    if streams is not None:  # the run through Redis: resumable, stoppable from any instance
        return await streams.create(request, chat_id, run, target="vercel-ui", on_finish=on_finish,
                                    message_id=message_id, ai_sdk=major)
    return ui_message_stream_response(run, message_id=message_id, on_finish=on_finish,
                                      ai_sdk=major)


async def messages(request: Request) -> Response:
    return JSONResponse(store.load(request.path_params["chat_id"]))


async def resume(request: Request) -> Response:  # the AI SDK's reconnect (resume: true)
    if streams is None:
        return Response(status_code=204)
    return await streams.response(request, request.path_params["chat_id"], target="vercel-ui",
                                  ai_sdk=ai_sdk(request))


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
