"""The demo's tool: a deterministic ``get_weather`` (no network, same answer every run).

Known cities return the conditions the bundled recordings talk about; any other city
gets plausible conditions derived from its name, so a real model driving the demo
(``streamflow demo`` with an API key) gets a consistent answer too.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import Field

from ..app.tools import ToolRegistry

__all__ = ["demo_tools", "get_weather"]

_KNOWN: dict[str, dict[str, Any]] = {
    "lisbon": {"temperature": 17, "conditions": "partly cloudy", "wind_kmh": 22,
               "wind_direction": "NW", "humidity": 68, "evening_low": 13,
               "rain_expected": False},
    "paris": {"temperature": 11, "conditions": "light rain", "wind_kmh": 15,
              "wind_direction": "SW", "humidity": 87, "evening_low": 8, "rain_expected": True},
    "seoul": {"temperature": 6, "conditions": "clear", "wind_kmh": 9, "wind_direction": "N",
              "humidity": 41, "evening_low": 1, "rain_expected": False},
}
_CONDITIONS = ("clear", "partly cloudy", "overcast", "light rain", "windy")


def get_weather(
    city: Annotated[str, Field(min_length=1, max_length=100)],
    unit: Literal["celsius", "fahrenheit"] = "celsius",
) -> dict[str, Any]:
    """Current weather and tonight's low for a city.

    Args:
        city: City name, e.g. "Lisbon".
        unit: Temperature unit of the answer.
    """
    key = city.strip().lower()
    data = _KNOWN.get(key)
    if data is None:
        seed = hashlib.sha256(key.encode()).digest()
        temperature = seed[0] % 30 - 2
        data = {"temperature": temperature, "conditions": _CONDITIONS[seed[1] % 5],
                "wind_kmh": seed[2] % 35, "wind_direction": "NESW"[seed[3] % 4],
                "humidity": 30 + seed[4] % 60, "evening_low": temperature - 3 - seed[5] % 4,
                "rain_expected": _CONDITIONS[seed[1] % 5] == "light rain"}
    out = {"city": city.strip().title(), "unit": unit, **data}
    if unit == "fahrenheit":
        out["temperature"] = round(data["temperature"] * 9 / 5 + 32)
        out["evening_low"] = round(data["evening_low"] * 9 / 5 + 32)
    return out


def demo_tools() -> ToolRegistry:
    """A fresh registry holding the demo's tools."""
    return ToolRegistry([get_weather])
