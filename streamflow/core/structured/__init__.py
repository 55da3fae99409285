"""Structured output: typed partial objects while the JSON arrives, a strict final.

``OutputParser`` (sans-IO) is what ``streamflow.stream(source, output=T)`` uses;
``partial_type(T)`` derives the partial type its snapshots are instances of.
"""

from .output import OutputFrom, OutputParser, json_text
from .partial_types import partial_type

__all__ = ["OutputFrom", "OutputParser", "json_text", "partial_type"]
