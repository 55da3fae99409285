"""Tools from typed functions: JSON schema from type hints and docstrings, the registry,
and the sans-IO half of dispatch (lookup + validation)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from streamflow import ToolCallItem
from streamflow.app.tools import ToolRegistry, ToolResult, prepare_call, tool_from_function


def weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city, e.g. "Lisbon".
    """
    return {"city": city, "temperature": 17, "unit": unit}


def test_schema_is_derived_from_type_hints_and_docstring() -> None:
    tool = tool_from_function(weather)
    assert tool.description == "Current weather for a city."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": 'The city, e.g. "Lisbon".'},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert not tool.is_async


class Point(BaseModel):
    lat: float
    lon: float


def test_annotated_fields_nested_models_and_async_functions() -> None:
    async def near(at: Point, radius: Annotated[int, Field(gt=0, description="metres")] = 50
                   ) -> list[str]:
        """Places near a point."""
        return []

    tool = tool_from_function(near)
    assert tool.is_async
    props = tool.parameters["properties"]
    assert props["radius"] == {"type": "integer", "exclusiveMinimum": 0, "default": 50,
                               "description": "metres"}
    assert props["at"] == {"$ref": "#/$defs/Point"}
    assert set(tool.parameters["$defs"]["Point"]["properties"]) == {"lat", "lon"}


def test_registry_decorator_and_register() -> None:
    tools = ToolRegistry()

    @tools.tool
    def ping() -> str:
        """Answers pong."""
        return "pong"

    tools.register(weather, name="get_weather", timeout=2)
    assert ping() == "pong"  # the decorator returns the function unchanged
    assert tools.names == ["ping", "get_weather"]
    assert tools.get("get_weather").timeout == 2  # type: ignore[union-attr]
    assert [s["name"] for s in tools.specs()] == ["ping", "get_weather"]
    with pytest.raises(ValueError, match="already registered"):
        tools.register(ping)


def test_unsupported_signatures_are_refused() -> None:
    def star(*args: int) -> None: ...

    with pytest.raises(TypeError, match=r"\*args"):
        tool_from_function(star)
    with pytest.raises(ValueError, match="must match"):
        tool_from_function(weather, name="get weather")




def test_docstring_args_section_with_types_and_continuation_lines() -> None:
    def search(query: str, limit: int = 5) -> list[str]:
        """Search the notes.

        Longer explanation that is not the description.

        Args:
            query (str): Words to look for,
                all of them.
            limit: At most this many hits.

        Returns:
            The hits.
        """
        return []

    tool = tool_from_function(search, description="Find notes.")
    assert tool.description == "Find notes."
    assert tool.parameters["properties"]["query"]["description"] == \
        "Words to look for, all of them."
    assert tool.parameters["properties"]["limit"]["description"] == "At most this many hits."


def test_prepare_call_validates_and_converts() -> None:
    tools = ToolRegistry([weather])
    call = ToolCallItem("tool_call.done", "weather", "t1", {"city": "Oslo"})
    prepared = prepare_call(tools, call)
    assert not isinstance(prepared, ToolResult)
    tool, kwargs = prepared
    assert tool.name == "weather" and kwargs == {"city": "Oslo", "unit": "celsius"}
    not_an_object = prepare_call(tools, ToolCallItem("tool_call.done", "weather", "t2", "[1]"))
    assert isinstance(not_an_object, ToolResult) and not_an_object.is_error
    assert ToolResult("t", "n", {"a": object()}).to_dict()["content"]["a"].startswith("<object")
