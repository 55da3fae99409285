"""The benchmark suite runs, and its workloads are what they claim to be.

No timing is asserted here (timings belong to ``python -m bench``): these tests check
that the generated bodies assemble to the expected message under any chunking, that
the anchors (naive loop, official SDK helpers) read the same text, thinking and tool
calls as streamflow, and that the one command runs end to end on a tiny workload.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # bench/ is a top-level folder, not an installed package

from bench import anchors, paths  # noqa: E402
from bench.run import Config, main  # noqa: E402
from bench.workloads import (  # noqa: E402
    Workload,
    anthropic_growth,
    anthropic_mixed,
    chunked,
    openai_growth,
    openai_mixed,
)
from streamflow import StreamDecoder, assemble  # noqa: E402


def _small() -> list[Workload]:
    return [anthropic_mixed(5, 40, 120, 30, 900), openai_mixed(5, 40, 120, 15, 450),
            anthropic_growth(2_000), openai_growth(2_000)]


def _want(w: Workload) -> anchors.Outcome:
    return anchors.Outcome(w.expected.text, w.expected.thinking, w.expected.tool_calls)


def test_full_size_workloads_have_the_issue_shape() -> None:
    a, o = anthropic_mixed(), openai_mixed()
    assert a.events == 9_011 and o.events == 9_005
    assert 1_000_000 < len(a.body) < 1_400_000 and 1_700_000 < len(o.body) < 2_300_000
    # text with CJK and emoji, a ~60 KB tool input, two ~30 KB interleaved calls
    assert any("\u4e00" <= ch <= "\u9fff" for ch in a.expected.text)
    assert any(ord(ch) > 0xFFFF for ch in a.expected.text)
    assert len(str(a.expected.tool_calls[0][2])) > 50_000
    assert [name for _, name, _ in o.expected.tool_calls] == ["write_file", "search_code"]
    assert b'"tool_calls":[{"index":1' in o.body  # call 1 fragments interleave with call 0's


@pytest.mark.parametrize("w", _small(), ids=lambda w: w.name)
def test_workload_assembles_to_the_expected_message_under_any_chunking(w: Workload) -> None:
    for seed in (1, 2, 3):
        message = assemble(chunked(w.body, seed, 1, 400), w.dialect)
        assert paths.outcome(message) == _want(w)
        assert message.finish_reason == w.expected.finish_reason
        assert message.usage_metadata is not None
        assert message.usage_metadata.response_tokens == w.expected.response_tokens
    # one byte at a time too (splits every UTF-8 sequence)
    dec = StreamDecoder(w.dialect)
    for i in range(len(w.body)):
        dec.feed(w.body[i:i + 1])
    dec.close()
    assert paths.outcome(dec.message) == _want(w)


def test_signature_rides_on_the_thinking_item() -> None:
    w = anthropic_mixed(5, 40, 120, 30, 900)
    message = assemble(w.body, "anthropic")
    thinking = message.items[0]
    assert thinking.fidelity == {"signature": w.expected.signature}


@pytest.mark.parametrize("w", _small(), ids=lambda w: w.name)
def test_streamflow_paths_and_naive_loop_read_the_same_message(w: Workload) -> None:
    chunks = chunked(w.body, 9)
    for read in (paths.pipeline, paths.decoder, paths.over_httpx):
        assert paths.outcome(read(chunks, w.dialect)) == _want(w)
    assert anchors.naive(chunks, w.dialect) == _want(w)
    assert anchors.orjson_floor(w.payloads) == w.events - (w.dialect == "openai-chat")


@pytest.mark.parametrize("w", _small(), ids=lambda w: w.name)
def test_official_sdk_helpers_give_the_same_final_message_as_streamflow(w: Workload) -> None:
    pytest.importorskip("anthropic" if w.dialect == "anthropic" else "openai")
    chunks = chunked(w.body, 11)
    sdk = anchors.anthropic_sdk if w.dialect == "anthropic" else anchors.openai_sdk
    assert sdk(chunks, w.dialect) == paths.outcome(paths.pipeline(chunks, w.dialect))


def test_openai_helper_with_strict_tools_reads_one_call_but_not_interleaved_calls() -> None:
    pytest.importorskip("openai")
    one = openai_growth(2_000)
    got = anchors.openai_sdk(chunked(one.body, 3), strict_tools=True)
    assert got.tool_calls == one.expected.tool_calls
    # the helper takes call 0 as finished when call 1 first appears, and parses its cut
    # arguments: the reason the mixed workload runs it without tools (see bench/README.md)
    two = openai_mixed(5, 4, 4, 10, 450)
    with pytest.raises(ValueError):
        anchors.openai_sdk(chunked(two.body, 3), strict_tools=True)


def test_latency_and_memory_measure_every_event() -> None:
    w = anthropic_mixed(5, 40, 120, 30, 900)
    chunks = chunked(w.body, 4)
    lat = paths.latency(chunks, w.dialect)
    # one sample per UniEvent: a delta per fragment, a .done per group, the stop
    assert len(lat.samples) == len(lat.cpu) == 40 + 1 + 120 + 1 + 30 + 3 + 1
    assert 0 < lat.percentile(50) <= lat.percentile(99) <= lat.percentile(100)
    mem = paths.peak_memory(chunks, w.dialect)
    assert mem.peak > 0 and mem.message_json > len(w.expected.text.encode())
    assert mem.message_python > mem.message_json  # Python objects outweigh their JSON


@pytest.mark.slow
def test_the_one_command_runs_on_a_tiny_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--no-sdk"]) == 0
    out = capsys.readouterr().out
    for heading in ("## anthropic:", "## openai-chat:", "## growth, anthropic",
                    "## growth, openai-chat", "## targets"):
        assert heading in out
    assert "parse floor (orjson.loads only)" in out and "fitted exponent" in out
    assert Config(quick=True).growth_sizes == [1_000, 3_000, 10_000]


def test_the_failover_bench_reads_every_path_to_the_same_message(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m bench.failover --quick``: each path (a plain run, a chain of one and of
    three endpoints) assembles the expected message; no timing is asserted."""
    from bench import failover

    assert failover.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "run() through a Failover" in out and "the chain's cost when nothing fails" in out
