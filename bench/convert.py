"""``python -m bench.convert``: stream conversion throughput, streamflow vs its PyPI peers.

The same chunked body (the mixed workloads of bench/workloads.py) is converted from
one wire format into another, bytes in and bytes out, by:

* streamflow: ``StreamDecoder.feed`` per chunk, each event through the target's
  ``Encoder.feed`` (sans-IO, what ``streamflow convert`` and ``operators.encode`` run);
* ``llm-rosetta``: its provider converters (``stream_response_from_provider`` into
  its IR, ``stream_response_to_provider`` out), fed the JSON payloads of a minimal SSE
  split (``split`` on blank lines, ``json.loads``) and written back as SSE with
  ``json.dumps``;
* ``martian-linguafranca`` (Rust core): ``convert_response_stream_json`` fed and
  written the same way (its pairs: Anthropic Messages, OpenAI chat, Open Responses).

Every output is read back by streamflow's decoder of the target and checked for
the workload's text, thinking and tool calls (``ok``), so a fast path that drops
content is seen as such. Figures are source wire events per CPU second (median of
``--reps`` runs, ``time.process_time``). Needs the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from streamflow import StreamDecoder, assemble
from streamflow.wire.dialects import get_encoder

from .measure import interleaved_times
from .workloads import Workload, anthropic_mixed, chunked, openai_mixed

PAIRS = [("anthropic", "openai-chat"), ("openai-chat", "anthropic"),
         ("anthropic", "openai-responses"), ("openai-chat", "openai-responses"),
         ("anthropic", "gemini")]
_LF = {"anthropic": "ANTHROPIC_MESSAGES", "openai-chat": "OPENAI_CHAT_COMPLETIONS",
       "openai-responses": "OPEN_RESPONSES"}
_LR = {"anthropic": "AnthropicConverter", "openai-chat": "OpenAIChatConverter",
       "openai-responses": "OpenAIResponsesConverter", "gemini": "GoogleGenAIConverter"}


def workload(source: str) -> Workload:
    if source == "anthropic":
        w = anthropic_mixed()
        # the API now repeats input_tokens in message_delta (see the real recordings);
        # linguafranca requires it there
        old = b'"usage":{"output_tokens":9000}'
        new = b'"usage":{"input_tokens":1234,"output_tokens":9000}'
        w.body = w.body.replace(old, new)
        w.payloads = [p.replace(old, new) for p in w.payloads]
        return w
    return openai_mixed()


def streamflow_path(chunks: list[bytes], source: str, target: str) -> Callable[[], bytes]:
    def run() -> bytes:
        decoder = StreamDecoder(source)
        feed = get_encoder(target)().feed
        out: list[bytes] = []
        for chunk in chunks:
            for event in decoder.feed(chunk):
                out.append(feed(event))
        for event in decoder.close():
            out.append(feed(event))
        return b"".join(out)
    return run


def _payloads(chunks: list[bytes]) -> list[Any]:
    body = b"".join(chunks).replace(b"\r\n", b"\n")
    out = []
    for frame in body.split(b"\n\n"):
        for line in frame.split(b"\n"):
            if line.startswith(b"data:"):
                data = line[5:].strip()
                if data and data != b"[DONE]":
                    out.append(json.loads(data))
    return out


def _sse(events: list[Any], target: str) -> bytes:
    named = target in ("anthropic", "openai-responses")
    out = [(b"event: " + e["type"].encode() + b"\n" if named and isinstance(e, dict)
            and "type" in e else b"") + b"data: " + json.dumps(e).encode() + b"\n\n"
           for e in events]
    if target == "openai-chat":
        out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def rosetta_path(chunks: list[bytes], source: str, target: str) -> Callable[[], bytes] | None:
    try:
        import llm_rosetta
    except ImportError:
        return None
    src_cls, dst_cls = getattr(llm_rosetta, _LR[source]), getattr(llm_rosetta, _LR[target])

    def run() -> bytes:
        src, dst = src_cls(), dst_cls()
        ctx_in, ctx_out = src.create_stream_context(), dst.create_stream_context()
        out: list[Any] = []
        for payload in _payloads(chunks):
            for ir in src.stream_response_from_provider(payload, ctx_in):
                converted = dst.stream_response_to_provider(ir, ctx_out)
                if isinstance(converted, list):
                    out.extend(converted)
                elif converted:
                    out.append(converted)
        return _sse(out, target)
    return run


def linguafranca_path(chunks: list[bytes], source: str,
                      target: str) -> Callable[[], bytes] | None:
    try:
        import linguafranca
    except ImportError:
        return None
    if source not in _LF or target not in _LF:
        return None
    fmt = linguafranca.FormatName

    def run() -> bytes:
        stream = linguafranca.convert_response_stream_json(
            iter(_payloads(chunks)), source_format=getattr(fmt, _LF[source]),
            target_format=getattr(fmt, _LF[target]))
        return _sse(list(stream), target)
    return run


def check(body: bytes, target: str, w: Workload) -> str:
    """``ok`` when the target's reader finds the workload's content in ``body``."""
    try:
        msg = assemble(body, target)
    except Exception as exc:  # a peer's output our reader rejects: reported, not hidden
        return f"unreadable ({type(exc).__name__})"
    missing = [name for name, good in (
        ("text", msg.text == w.expected.text),
        ("thinking", msg.thinking == w.expected.thinking),
        ("tool calls", [(c.name, c.arguments) for c in msg.tool_calls]
         == [(n, a) for _, n, a in w.expected.tool_calls])) if not good]
    return "ok" if not missing else "lost " + ", ".join(missing)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.convert")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'pair':<34} {'path':<22} {'events/s':>10} {'vs streamflow':>14}  output")
    for source, target in PAIRS:
        w = workload(source)
        chunks = chunked(w.body, seed=11)
        paths: dict[str, Callable[[], bytes]] = {
            "streamflow": streamflow_path(chunks, source, target)}
        notes: dict[str, str] = {}
        for name, make in (("llm-rosetta", rosetta_path),
                           ("martian-linguafranca", linguafranca_path)):
            fn = make(chunks, source, target)
            if fn is None:
                notes[name] = "not installed, or does not cover the pair"
                continue
            try:
                fn()
            except Exception as exc:
                notes[name] = f"fails: {type(exc).__name__}: {str(exc)[:60]}"
                continue
            paths[name] = fn
        times, results = interleaved_times(paths, {name: args.reps for name in paths})
        base = times["streamflow"]
        for name in ("streamflow", "llm-rosetta", "martian-linguafranca"):
            label = f"{source} -> {target} ({w.events} ev)" if name == "streamflow" else ""
            if name in notes:
                print(f"{label:<34} {name:<22} {'-':>10} {'-':>14}  {notes[name]}")
                continue
            rate = w.events / times[name]
            print(f"{label:<34} {name:<22} {rate:>10,.0f} {base / times[name]:>13.2f}x  "
                  f"{check(results[name], target, w)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
