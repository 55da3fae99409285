"""An ``Agent(output=T)`` run in the browser protocols, read by the real clients.

The run's ``"output"`` events go through the same UI encoders the web responses use
(``feed_agent_event``): the AI SDK folds one ``data-output`` part that grows to the validated
object (ai@5 and the current major), and ``@ag-ui/client`` applies the state snapshot and
the JSON Patches to ``{"output": <the object>}`` -- across a retry, too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.servers.replay import ReplayServer
from streamflow.wire.dialects import get_encoder
from streamflow.wire.dialects.ui_agent import feed_agent_event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "structured"))
from test_agent_output import answer
from test_stream_output import ANSWER, WEATHER, Weather
from test_structured_ui import _growing, _read

pytest.importorskip("ag_ui", reason="the web extra (ag-ui-protocol) is not installed")


async def bodies_of_a_run() -> dict[str, str]:
    """One agent run (a wrong answer, then the right one) written as both UI streams."""
    wrong = ANSWER.replace('"cloudy"', '"foggy"')
    encoders = {"vercel": get_encoder("vercel-ui")(run=True),
                "agui": get_encoder("ag-ui")(run=True)}
    out = {name: b"" for name in encoders}
    async with ReplayServer({"/chat/completions": [answer("openai-chat", wrong),
                                                   answer("openai-chat", ANSWER)]}
                            ) as server, httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("openai-chat", base_url=server.url, api_key="k", model="m")
        agent = Agent(provider, send=http_sender(client), output=Weather)
        async with agent.stream("Weather in Lisbon?") as run:
            async for ev in run:
                for name, encoder in encoders.items():
                    out[name] += feed_agent_event(encoder, ev)
    assert run.result.output == WEATHER
    return {name: body.decode() for name, body in out.items()}


@pytest.mark.parametrize("ai", ["ai", "ai-latest"])
def test_the_ai_sdk_folds_the_agents_output(node_clients: Path, tmp_path: Path,
                                            ai: str) -> None:
    import anyio
    seen: Any = _read(node_clients, tmp_path, anyio.run(bodies_of_a_run), ai)
    vercel, agui = seen["vercel"], seen["agui"]
    assert vercel["schemaErrors"] == [] and vercel["streamErrors"] == []
    assert all(s["count"] <= 1 for s in vercel["snapshots"])  # one part, replaced in place
    datas = [s["data"] for s in vercel["snapshots"] if s["data"] is not None]
    assert len(datas) > 5 and datas[-1] == json.loads(WEATHER.model_dump_json())
    assert agui["schemaErrors"] == [] and agui["error"] is None
    assert agui["final"] == {"output": json.loads(WEATHER.model_dump_json())}
    outputs = [state["output"] for state in agui["states"]]
    assert len(outputs) > 5
    _growing(outputs[-3:])
