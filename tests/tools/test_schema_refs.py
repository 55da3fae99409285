"""A hostile MCP server's schema never makes the client fetch, read or hang (issue 39).

The tools come from a real MCP stdio server (``tests/tools/mcp_server.py --schemas``)
listing the schemas written here. A reference outside the schema (``http://`` to a
loopback server started here, ``https://``, ``file://`` to a real file, a relative
``other.json``, an undefined ``urn:``) and a schema past the size or depth limit are a
``SchemaRefusedError`` naming the tool when it is listed, and the loopback server sees
no connection; references inside the schema (``$defs``, anchors, ``$id``\\ s it
defines) work, and a recursive schema is checked within bounds: every failure of a call
is a ``ValidationError`` tool result with the call's id, never an exception.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import StdioServerParameters
from mcp.types import ListToolsResult
from mcp.types import Tool as MCPSpec
from pydantic import BaseModel

from streamflow import SchemaRefusedError, ToolCallItem
from streamflow.app.tools import MCPTool, Tool, ToolRegistry, from_mcp, mcp_stdio, prepare_call
from streamflow.app.tools.dispatch import ToolDispatcher
from streamflow.core._json_schema import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, checked_schema
from streamflow.core.errors import OutputValidationError
from streamflow.core.events import TextItem, UniEvent
from streamflow.core.structured import OutputParser

SERVER_SCRIPT = str(Path(__file__).with_name("mcp_server.py"))


def call(name: str, arguments: Any, call_id: str) -> ToolCallItem:
    return ToolCallItem("tool_call.done", name, call_id, arguments)


class Probe(http.server.ThreadingHTTPServer):
    """A loopback HTTP server that records every connection made to it (a TLS hello
    included) and answers any GET with a schema that accepts nothing but strings."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ProbeHandler)
        self.connections: list[Any] = []

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections.append(client_address)
        return True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class ProbeHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"type": "string"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/schema+json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def probe() -> Iterator[Probe]:
    server = Probe()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                              daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@asynccontextmanager
async def served(tmp_path: Path, schemas: dict[str, Any]) -> AsyncIterator[ToolRegistry]:
    """The tools of a real MCP stdio server listing ``schemas`` (name -> inputSchema)."""
    listing = tmp_path / "schemas.json"
    listing.write_text(json.dumps(schemas), encoding="utf-8")
    server = StdioServerParameters(command=sys.executable,
                                   args=[SERVER_SCRIPT, "--schemas", str(listing)])
    with open("/dev/null", "w") as quiet:
        async with mcp_stdio(server, errlog=quiet) as tools:
            yield tools


async def refused(tmp_path: Path, schema: Any, name: str = "hostile") -> SchemaRefusedError:
    """The error listing a server with one good tool and ``schema`` raises."""
    good = {"type": "object", "properties": {"x": {"type": "string"}}}
    with pytest.raises(SchemaRefusedError) as caught:
        async with served(tmp_path, {"good": good, name: schema}):
            pytest.fail("the tools were listed")  # pragma: no cover
    assert caught.value.name == name
    assert name in str(caught.value)
    return caught.value


def wrapped(ref: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"$ref": ref}}}


def deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


# -- the control: jsonschema left alone fetches ----------------------------------------------

def test_without_a_registry_jsonschema_fetches_the_reference(probe: Probe) -> None:
    """What issue 39 saw: the plain validator requests the URL (so the loopback server
    does record a fetch; the tests below prove streamflow makes none)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(wrapped(f"{probe.url}/probe.json"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "automatic retrieval"
        assert list(validator.iter_errors({"x": 5}))  # the fetched schema wants a string
    assert probe.connections


# -- references outside the schema: refused when listed, never fetched --------------------------

pytestmark = pytest.mark.anyio


async def test_an_http_reference_is_refused_and_never_fetched(tmp_path: Path,
                                                              probe: Probe) -> None:
    url = f"{probe.url}/probe.json"
    error = await refused(tmp_path, wrapped(url), name="probe")
    assert error.ref == url and error.limit is None
    assert "points outside the schema" in error.reason and "/properties/x/$ref" in error.reason
    assert error.to_dict()["name"] == "probe"
    assert probe.connections == []


async def test_an_https_reference_is_refused_and_no_connection_made(tmp_path: Path,
                                                                    probe: Probe) -> None:
    url = f"https://127.0.0.1:{probe.server_address[1]}/probe.json#/defs/x"
    error = await refused(tmp_path, wrapped(url))
    assert error.ref == url
    assert probe.connections == []


async def test_a_file_reference_is_refused_before_anything_reads_it(tmp_path: Path) -> None:
    target = tmp_path / "probe.json"
    target.write_text(json.dumps({"type": "string"}), encoding="utf-8")
    error = await refused(tmp_path, wrapped(target.as_uri()))
    assert error.ref == target.as_uri()
    assert "nothing is fetched or read" in str(error)


@pytest.mark.parametrize("ref", ["other.json", "other.json#/$defs/x", "../up.json",
                                 "urn:example:undefined", "//evil.example/s.json"])
async def test_relative_and_undefined_references_are_refused(tmp_path: Path, ref: str) -> None:
    error = await refused(tmp_path, wrapped(ref))
    assert error.ref == ref


async def test_a_reference_inside_default_or_examples_is_refused_too(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"x": {"examples": [{"$ref": "http://e.x/"}]}}}
    error = await refused(tmp_path, schema)
    assert error.ref == "http://e.x/"
    assert "/properties/x/examples/0/$ref" in error.reason


async def test_a_reference_to_nowhere_inside_is_refused(tmp_path: Path) -> None:
    schema = {"type": "object", "$defs": {"n": {"type": "integer"}},
              "properties": {"x": {"$ref": "#/$defs/missing"}}}
    error = await refused(tmp_path, schema)
    assert error.ref == "#/$defs/missing" and "resolves nowhere inside" in error.reason


# -- the limits: refused when listed, quickly ---------------------------------------------------

async def test_a_huge_schema_is_refused_quickly(tmp_path: Path) -> None:
    huge = {"type": "object", "properties": {
        f"p{i}": {"type": "string", "description": "d" * 1000} for i in range(10_000)}}
    assert len(json.dumps(huge)) > 10_000_000
    started = time.perf_counter()
    with pytest.raises(SchemaRefusedError) as direct:
        checked_schema(huge, name="huge")
    assert time.perf_counter() - started < 0.5  # stops after about 1 MB of it
    assert (direct.value.limit, direct.value.maximum) == ("max_schema_bytes", MAX_SCHEMA_BYTES)
    error = await refused(tmp_path, huge, name="huge")  # the same through the server
    assert error.limit == "max_schema_bytes"


async def test_a_deeply_nested_schema_is_refused(tmp_path: Path) -> None:
    # the SDK's own JSON parser takes about 200 levels: 80 schema levels are 160 of JSON
    error = await refused(tmp_path, deep(80), name="deep")
    assert (error.limit, error.maximum) == ("max_schema_depth", MAX_SCHEMA_DEPTH)


class Listing:
    """An initialized session's stand-in answering ``tools/list`` with ``specs``."""

    def __init__(self, *specs: MCPSpec) -> None:
        self.specs = specs

    async def list_tools(self, params: Any = None) -> ListToolsResult:
        return ListToolsResult(tools=list(self.specs))


async def test_ten_thousand_levels_are_refused_at_once() -> None:
    """Deeper than any JSON parser on the wire takes, so through ``from_mcp``."""
    spec = MCPSpec(name="deep", input_schema=deep(10_000))
    started = time.perf_counter()
    with pytest.raises(SchemaRefusedError) as caught:
        await from_mcp(Listing(spec))
    assert time.perf_counter() - started < 0.5
    assert (caught.value.name, caught.value.limit) == ("deep", "max_schema_depth")


async def test_the_refusal_names_the_tool_as_registered() -> None:
    spec = MCPSpec(name="fetch.remote", input_schema=wrapped("http://e.x/s.json"))
    with pytest.raises(SchemaRefusedError) as caught:
        await from_mcp(Listing(spec), prefix="srv.")
    assert caught.value.name == "srv_fetch_remote"


# -- references inside the schema work; every failure of a call is a tool result ---------------

INSIDE = {
    "defs": {"type": "object", "$defs": {"count": {"type": "integer", "minimum": 0}},
             "properties": {"n": {"$ref": "#/$defs/count"}}, "required": ["n"]},
    "anchor": {"type": "object",
               "$defs": {"count": {"$anchor": "count", "type": "integer"}},
               "properties": {"n": {"$ref": "#count"}}},
    "draft7": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
               "definitions": {"count": {"type": "integer"}},
               "properties": {"n": {"$ref": "#/definitions/count"}}},
    "urn": {"type": "object", "$defs": {"count": {"$id": "urn:example:count",
                                                  "type": "integer"}},
            "properties": {"n": {"$ref": "urn:example:count"}}},
    "tree": {"$defs": {"node": {"type": "object", "properties": {
        "n": {"type": "integer"}, "x": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "type": "object", "$ref": "#/$defs/node"},
    "self": {"type": "object", "properties": {"x": {"$ref": "#"}, "n": {"type": "integer"}}},
    "loop": {"type": "object", "$ref": "#"},
    "mutual": {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
               "type": "object", "properties": {"n": {"$ref": "#/$defs/a"}}},
}


async def test_references_inside_the_schema_check_the_calls(tmp_path: Path) -> None:
    async with served(tmp_path, INSIDE) as tools:
        assert tools.names == list(INSIDE)
        results = await ToolDispatcher(tools).run([
            call("defs", {"n": 3}, "ok-defs"), call("defs", {"n": -1}, "bad-defs"),
            call("anchor", {"n": 1}, "ok-anchor"), call("anchor", {"n": "one"}, "bad-anchor"),
            call("draft7", {"n": "one"}, "bad-draft7"), call("urn", {"n": 1.5}, "bad-urn"),
            call("tree", {"n": 1, "x": [{"n": 2, "x": [{"n": 3}]}]}, "ok-tree"),
            call("tree", {"n": 1, "x": [{"n": 2, "x": [{"n": "3"}]}]}, "bad-tree"),
            call("self", {"n": 1, "x": {"n": 2, "x": {"n": 3}}}, "ok-self"),
            call("self", {"n": 1, "x": {"n": "2"}}, "bad-self")])
    by_id = {r.tool_call_id: r for r in results}
    for ok in ("ok-defs", "ok-anchor", "ok-tree", "ok-self"):
        assert not by_id[ok].is_error, by_id[ok].content
    assert json.loads(by_id["ok-defs"].content)["n"] == 3  # the call reached the server
    expected = {"bad-defs": (["n"], "json_schema_minimum"),
                "bad-anchor": (["n"], "json_schema_type"),
                "bad-draft7": (["n"], "json_schema_type"),
                "bad-urn": (["n"], "json_schema_type"),
                "bad-tree": (["x", 0, "x", 0, "n"], "json_schema_type"),
                "bad-self": (["x", "n"], "json_schema_type")}
    for call_id, (loc, kind) in expected.items():
        result = by_id[call_id]
        assert result.is_error and result.content["error"] == "ValidationError", call_id
        (error,) = result.content["errors"]
        assert (error["loc"], error["type"]) == (loc, kind), call_id


async def test_a_recursion_that_never_descends_is_a_tool_error(tmp_path: Path) -> None:
    async with served(tmp_path, {k: INSIDE[k] for k in ("loop", "mutual")}) as tools:
        started = time.perf_counter()
        loop, mutual = await ToolDispatcher(tools).run([
            call("loop", {"n": 1}, "call-loop"), call("mutual", {"n": 1}, "call-mutual")])
        assert time.perf_counter() - started < 2
    for result, call_id in ((loop, "call-loop"), (mutual, "call-mutual")):
        assert result.tool_call_id == call_id
        assert result.is_error and result.content["error"] == "ValidationError"
        (error,) = result.content["errors"]
        assert error["type"] == "json_schema_too_complex"
        assert "nest more than" in error["msg"]


async def test_a_reference_found_late_is_never_fetched_nor_read(tmp_path: Path,
                                                               probe: Probe) -> None:
    """The validator's registry refuses to retrieve: a reference the listing could not
    see (added to the schema afterwards) is an ``unresolvable`` tool error."""
    target = tmp_path / "string.json"
    target.write_text(json.dumps({"type": "string"}), encoding="utf-8")  # read: x passes
    schema: dict[str, Any] = {"type": "object", "properties": {"x": {}, "y": {}}}
    async with served(tmp_path, {"late": schema}) as tools:
        tool = tools.get("late")
        assert isinstance(tool, MCPTool)
        tool.parameters["properties"]["x"]["$ref"] = f"{probe.url}/probe.json"
        tool.parameters["properties"]["y"]["$ref"] = target.as_uri()
        http_ref, file_ref = await ToolDispatcher(tools).run([
            call("late", {"x": "text"}, "a"), call("late", {"y": "text"}, "b")])
    assert probe.connections == []
    for result, ref in ((http_ref, f"{probe.url}/probe.json"), (file_ref, target.as_uri())):
        assert result.is_error and result.content["error"] == "ValidationError"
        (error,) = result.content["errors"]
        assert error["type"] == "json_schema_unresolvable" and ref in error["msg"]


async def test_a_schema_doubling_at_each_level_is_bounded_in_time() -> None:
    """30 ``anyOf`` levels of two branches each: 2^30 evaluations unbounded."""
    defs: dict[str, Any] = {f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}] * 2}
                            for i in range(30)}
    defs["a30"] = {"type": "string"}
    spec = MCPSpec(name="bomb", input_schema={"$defs": defs, "type": "object",
                                              "properties": {"x": {"$ref": "#/$defs/a0"}}})
    tools = await from_mcp(Listing(spec))
    started = time.perf_counter()
    (result,) = await ToolDispatcher(tools).run([call("bomb", {"x": 5}, "boom")])
    assert time.perf_counter() - started < 2
    assert result.tool_call_id == "boom" and result.content["error"] == "ValidationError"
    assert result.content["errors"][0]["type"] == "json_schema_too_complex"


def test_a_nested_dialect_switch_and_a_metaschema_reference_are_refused() -> None:
    nested = {"type": "object", "properties": {
        "x": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}}}
    with pytest.raises(SchemaRefusedError, match="switches dialect"):
        checked_schema(nested, name="t")
    meta = wrapped("https://json-schema.org/draft/2020-12/schema")
    with pytest.raises(SchemaRefusedError, match="points outside"):
        checked_schema(meta, name="t")
    checked_schema({"$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object"}, name="t")  # at the root it picks the dialect


def test_a_validator_that_raises_is_a_validation_error_result() -> None:
    class Broken(Tool):
        def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
            raise RecursionError("maximum recursion depth exceeded")

    tool = Broken(name="broken", description="", func=lambda: None, parameters={},
                  model=BaseModel, is_async=False)
    result = prepare_call(ToolRegistry([tool]), call("broken", {}, "id-1"))
    assert not isinstance(result, tuple)
    assert (result.tool_call_id, result.is_error) == ("id-1", True)
    assert result.content["error"] == "ValidationError"
    assert "RecursionError" in result.content["message"]


# -- a structured output's schema goes through the same check -----------------------------------

def test_an_output_schema_is_checked_the_same_way(probe: Probe) -> None:
    with pytest.raises(SchemaRefusedError) as caught:
        OutputParser(wrapped(f"{probe.url}/probe.json"))
    assert caught.value.name == "output" and "output schema" in str(caught.value)
    with pytest.raises(SchemaRefusedError):
        OutputParser(deep(10_000))
    assert probe.connections == []
    answer = UniEvent(event_type="delta", content_items=[TextItem(text='{"n": 2}')])
    parser = OutputParser({"$defs": {"n": {"type": "integer"}}, "type": "object",
                           "properties": {"n": {"$ref": "#/$defs/n"}}})
    parser.feed(answer)
    assert parser.final() == {"n": 2}
    looping = OutputParser({"$ref": "#"})
    looping.feed(answer)
    with pytest.raises(OutputValidationError) as failed:
        looping.final()
    assert failed.value.errors[0]["type"] == "too_complex"
