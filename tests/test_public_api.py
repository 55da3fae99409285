"""The top-level names a user reads first: listed, typed, documented, and no clutter."""

from __future__ import annotations

import pydoc

import streamflow
import streamflow.sources
from streamflow import ToolCallItem


def test_dir_lists_the_public_names_only() -> None:
    names = dir(streamflow)
    for name in ("stream", "stream_sync", "run", "pipeline", "Agent", "RenderSink", "scope"):
        assert name in names and name in streamflow.__all__
    for clutter in ("annotations", "_lazy", "lazy_exports", "TYPE_CHECKING"):
        assert clutter not in names
    assert all(hasattr(streamflow, name) for name in streamflow.__all__)


def test_replay_source_is_exported_from_sources() -> None:
    from streamflow.sources.replay import ReplaySource

    assert streamflow.sources.ReplaySource is ReplaySource
    assert "ReplaySource" in streamflow.sources.__all__
    assert "ReplaySource" in dir(streamflow.sources)


def test_help_lists_the_parameters() -> None:
    for function, params in [(streamflow.run, ["source", "*sinks", "dialect", "framing", "limits"]),
                             (streamflow.stream, ["source", "dialect", "sinks", "buffer"]),
                             (streamflow.pipeline, ["dialect", "framing", "limits"])]:
        text = pydoc.render_doc(function, renderer=pydoc.plaintext)
        assert "Args:" in text
        for param in params:
            assert f"{param}:" in text, (function, param)


def test_typed_accessors() -> None:
    done = ToolCallItem("tool_call.done", name="f", tool_call_id="c", arguments={"x": 1})
    assert done.parsed_arguments == {"x": 1}
    fragment = ToolCallItem("tool_call.delta", arguments='{"x"')
    try:
        fragment.parsed_arguments  # noqa: B018
    except TypeError as exc:
        assert "tool_call.done" in str(exc)
    else:
        raise AssertionError("a delta fragment has no parsed arguments")
    usage = streamflow.Usage(prompt_tokens=3)
    assert streamflow.Message(usage_metadata=usage).usage is usage


def test_the_tools_docs_name_the_sink_the_readme_names() -> None:
    import streamflow.tools

    assert "ToolDispatchSink" in (streamflow.tools.__doc__ or "")
