"""A dialect is declared once: its folder's ``DIALECT`` and one registry line.

The registry's views (decoders, encoders, request sides) are exactly what the folders
declare, every dialect folder is listed, and a dialect written outside the package -- a
toy folder in a temporary directory, registered with one ``register`` call -- is decoded,
encoded, sniffed by name and served by the gateway as a client route and as an upstream.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from recordings import turn_bodies
from security.hostile import serve

import streamflow
import streamflow.wire.dialects as registry
from streamflow.servers.gateway import create_app
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects import (
    DIALECTS,
    ENCODERS,
    FOLDERS,
    REQUESTS,
    TARGETS,
    Dialect,
    get_dialect,
    get_encoder,
    get_request,
    register,
)

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
ASK = [{"role": "user", "content": "hi"}]
PACKAGE = Path(registry.__file__).parent

TOY = {
    "__init__.py": '''"""The toy dialect: OpenAI chat bodies on its own paths and key header."""
from streamflow.wire.dialects import Dialect

DIALECT = Dialect("toy", decoder=".decode:ToyDecoder", encoder=".encode:ToyEncoder",
                  request=".request:REQUEST")
''',
    "decode.py": '''from streamflow.wire.dialects.openai_chat.decode import OpenAIChatDecoder


class ToyDecoder(OpenAIChatDecoder):
    name = "toy"

    @classmethod
    def sniff(cls, frame):  # asked by name only: never taken for openai-chat
        return False
''',
    "encode.py": '''from streamflow.wire.dialects.openai_chat.encode import OpenAIChatEncoder


class ToyEncoder(OpenAIChatEncoder):
    name = "toy"
''',
    "request.py": '''from streamflow.wire.dialects.openai_chat import request as chat
from streamflow.wire.dialects.request_base import RequestSide

REQUEST = RequestSide(
    name="toy", build=chat.build, parse=chat.parse, path="/toy/chat",
    client_path="/toy/v1/chat/completions", credential="x-toy-key", bearer=False,
    error_body=chat.error_body, reply=chat.message_body, takes=chat.REQUEST.takes)
''',
}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Dialect, ...]]:
    """The toy folder on the path, registered; the registry as it was afterwards."""
    folder = tmp_path / "sf_toy"
    folder.mkdir()
    for name, text in TOY.items():
        (folder / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in [m for m in sys.modules if m == "sf_toy" or m.startswith("sf_toy.")]:
        monkeypatch.delitem(sys.modules, module)
    views = [DIALECTS, ENCODERS, REQUESTS]
    saved = [dict(view) for view in views]
    try:
        yield register("sf_toy")  # the one line a new dialect adds
    finally:
        for view, before in zip(views, saved, strict=True):
            view.clear()
            view.update(before)
        registry._loaded.pop("toy", None)
        registry._loaded_encoders.pop("toy", None)


def test_the_registry_is_what_the_folders_declare() -> None:
    declared = [d for folder in FOLDERS for d in _declared(folder)]
    assert list(DIALECTS) == [d.name for d in declared if d.decoder]  # in sniffing order
    assert {n: p for n, p in ENCODERS.items() if n not in TARGETS} == {
        d.name: d.encoder for d in declared if d.encoder}
    assert REQUESTS == {d.name: d.request for d in declared if d.request}
    folders = {f"streamflow.wire.dialects.{p.parent.name}"
               for p in PACKAGE.glob("*/decode.py")}
    assert folders == set(FOLDERS)  # no dialect folder left out of the registry


def _declared(folder: str) -> tuple[Dialect, ...]:
    declared = importlib.import_module(folder).DIALECT
    dialects = declared if isinstance(declared, tuple) else (declared,)
    return tuple(d.located(folder) for d in dialects)


def test_a_declaration_is_checked() -> None:
    with pytest.raises(ValueError, match="module:attribute"):
        Dialect("bad", decoder=".decode")
    with pytest.raises(TypeError, match="DIALECT"):
        register("streamflow.wire.targets")  # a package that declares no dialect


def test_a_toy_dialect_decodes_encodes_and_round_trips(toy: tuple[Dialect, ...]) -> None:
    assert [d.name for d in toy] == ["toy"] and "toy" in registry.dialect_names()
    first, _ = turn_bodies("openai-chat")
    message = streamflow.assemble([first], dialect="toy")
    body = b"".join(streamflow.encode(streamflow.StreamDecoder("toy").feed(first), "toy"))
    again = streamflow.assemble([body], dialect="toy")
    assert message.complete and again.to_dict()["items"] == message.to_dict()["items"]
    assert get_dialect("toy").name == get_encoder("toy").name == get_request("toy").name
    sniffing = streamflow.StreamDecoder("auto")
    sniffing.feed(first)
    assert sniffing.dialect == "openai-chat"  # registered last, asked by name only


@pytest.mark.anyio
async def test_the_gateway_serves_a_toy_dialect_both_ways(toy: tuple[Dialect, ...]) -> None:
    first, _ = turn_bodies("openai-chat")
    async with ReplayServer({"/toy/chat": [Route.from_body(first), Route.from_body(first)]}
                            ) as upstream, serve(create_app(upstream.url, "toy")) as url:
        # an OpenAI SDK on the toy's own client route, the toy upstream behind it
        client = openai.AsyncOpenAI(base_url=url + "/toy/v1", api_key="k", max_retries=0)
        stream = await client.chat.completions.create(model="m", messages=ASK, stream=True)
        calls = [c async for c in stream if c.choices and c.choices[0].delta.tool_calls]
        await client.close()
        # an Anthropic SDK on its own route, answered by the toy upstream's stream
        claude = anthropic.AsyncAnthropic(base_url=url, api_key="k2", max_retries=0)
        async with claude.messages.stream(model="m", max_tokens=64, messages=ASK) as reply:
            answer = await reply.get_final_message()
        await claude.close()
    assert calls and answer.stop_reason == "tool_use"
    assert [hit.headers.get("x-toy-key") for hit in upstream.hits] == ["k", "k2"]


@pytest.mark.anyio
async def test_the_agent_runs_on_a_toy_dialect(toy: tuple[Dialect, ...]) -> None:
    import httpx

    from streamflow.app.agent import Agent, http_sender
    from streamflow.app.providers import make_provider
    from streamflow.demo import DEMO_PROMPT
    from streamflow.demo.tools import demo_tools

    first, second = turn_bodies("openai-chat")
    async with ReplayServer({"/toy/chat": [Route.from_body(first), Route.from_body(second)]}
                            ) as upstream, httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("toy", base_url=upstream.url, api_key="k", model="m")
        result = await Agent(provider, demo_tools(), http_sender(client)).run(DEMO_PROMPT)
        sent = upstream.hits[1].json()["messages"]
    assert [t.message.finish_reason for t in result.turns] == ["tool_call", "stop"]
    (call,) = result.turns[0].message.tool_calls
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == call.tool_call_id
    assert [hit.headers.get("x-toy-key") for hit in upstream.hits] == ["k", "k"]
    with pytest.raises(ValueError, match="no default base URL"):
        make_provider("toy")
