"""OutputUpdates and json_patch: UI updates of the partial output, bounded and exact."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_core import to_json

from streamflow.core.events import TextItem, UniEvent
from streamflow.core.structured import OutputParser
from streamflow.core.structured.updates import OutputUpdates, json_patch

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(alphabet="ab/~", max_size=3), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(old=json_values, new=json_values)
def test_the_patch_applied_by_jsonpatch_gives_the_new_value(old: Any, new: Any) -> None:
    ops = json_patch(old, new)
    assert jsonpatch.apply_patch(copy.deepcopy(old), ops) == new
    if old == new and type(old) is type(new):
        assert ops == []


class Row(BaseModel):
    n: int
    label: str


class Table(BaseModel):
    rows: list[Row]


def test_updates_follow_every_change_while_small_then_grow_geometrically() -> None:
    text = Table(rows=[Row(n=i, label="x" * 40) for i in range(400)]).model_dump_json()
    updates = OutputUpdates(OutputParser(Table))
    sent: list[Any] = []
    state: Any = None
    for at in range(0, len(text), 3):
        value = updates.feed(UniEvent("delta", [TextItem("text.delta", text[at:at + 3])]))
        if value is not None:
            state = jsonpatch.apply_patch(state, json_patch(state, value)) if state else value
            sent.append(value)
    final = updates.final(updates.parser.final())
    assert final == Table.model_validate_json(text).model_dump()
    small = [v for v in sent if len(to_json(v)) < 512]
    assert len(small) >= 100  # each change of a small object is sent
    assert len(sent) - len(small) < 40  # then an update per eighth of growth
    total = sum(len(to_json(v)) for v in sent)
    assert total < 12 * len(text)  # the bytes sent stay linear in the object's size
    assert state == sent[-1]
