"""Small Anthropic turns the examples replay offline.

``BODY``: thinking, text and a ``get_weather`` call; ``ANSWER``: the next turn, the
answer once the tool result came back.
"""

import json

_EVENTS = [
    {"type": "message_start", "message": {"id": "msg_demo", "type": "message",
     "role": "assistant", "model": "claude-demo", "content": [],
     "usage": {"input_tokens": 25, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking",
                                                                  "thinking": ""}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "thinking_delta", "thinking": "The user wants "}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "thinking_delta", "thinking": "the weather."}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "signature_delta", "signature": "sig-demo"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    *({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": t}}
      for t in ["Sure. ", "Let me look ", "that up. ", "One moment!"]),
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2, "content_block": {
        "type": "tool_use", "id": "toolu_demo", "name": "get_weather", "input": {}}},
    *({"type": "content_block_delta", "index": 2,
       "delta": {"type": "input_json_delta", "partial_json": p}}
      for p in ['{"city": "Pa', 'ris", "unit": ', '"celsius"}']),
    {"type": "content_block_stop", "index": 2},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
     "usage": {"output_tokens": 37}},
    {"type": "message_stop"},
]

BODY = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _EVENTS).encode()

_ANSWER = [
    {"type": "message_start", "message": {"id": "msg_demo_2", "type": "message",
     "role": "assistant", "model": "claude-demo", "content": [],
     "usage": {"input_tokens": 90, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    *({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
      for t in ["It is 21 °C ", "in Paris ", "right now."]),
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
     "usage": {"output_tokens": 12}},
    {"type": "message_stop"},
]

ANSWER = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _ANSWER).encode()


def long_body(words: int = 2000) -> bytes:
    """A long text answer, for the cancellation example."""
    head, tail = _EVENTS[:1], _EVENTS[-2:]
    middle = [{"type": "content_block_start", "index": 0,
               "content_block": {"type": "text", "text": ""}}]
    middle += [{"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": f"word{i} "}} for i in range(words)]
    middle += [{"type": "content_block_stop", "index": 0}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
                   for e in head + middle + tail).encode()
