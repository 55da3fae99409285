"""Record raw answers of a live llama.cpp ``llama-server`` into tests/data/live/.

::

    python tests/live/record.py --url http://127.0.0.1:8080 \\
        --tools-url http://127.0.0.1:8081 [--out tests/data/live] [CASE ...]

Each case of :mod:`livecases` is sent once; the body is written byte for byte as
the server sent it (``<case>.sse`` for a stream, ``<case>.body`` for one JSON body,
errors included) next to ``<case>.<sse|body>.meta``, its provenance as JSON: the
server's build and model (from ``GET /props`` and ``GET /v1/models``), the
endpoint, the request sent, the status, the response headers and the date.
``--tools-url`` is the instance started with a tool-use chat template; without it
the tool cases are left out. Only loopback servers are recorded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from livecases import CASES, Case

OUT = Path(__file__).resolve().parent.parent / "data" / "live"


def server_facts(client: httpx.Client, url: str) -> dict[str, Any]:
    """What the server says it is: build, model file, chat template (hashed), slots."""
    props = client.get(url + "/props").json()
    models = client.get(url + "/v1/models").json()
    model = (models.get("data") or [{}])[0]
    template = props.get("chat_template") or ""
    return {
        "build_info": props.get("build_info"),
        "model_file": Path(props.get("model_path") or "").name,
        "model_meta": model.get("meta"),
        "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest(),
        "chat_template_head": template.strip().splitlines()[0][:120] if template else "",
        "total_slots": props.get("total_slots"),
        "n_ctx": (props.get("default_generation_settings") or {}).get("n_ctx"),
    }


def record(client: httpx.Client, url: str, case: Case, facts: dict[str, Any],
           out: Path) -> tuple[int, int]:
    """Send ``case`` to ``url``; write its body and provenance; return (status, size)."""
    content = case.raw if case.raw is not None else json.dumps(case.body).encode()
    chunks: list[bytes] = []
    with client.stream("POST", url + case.path, content=content,
                       headers={"content-type": "application/json",
                                "connection": "close"}) as response:
        for chunk in response.iter_raw():
            chunks.append(chunk)
    body = b"".join(chunks)
    # an error is one JSON body even when a stream was asked for (no stream to read)
    file = case.file if response.status_code < 400 else case.name + ".body"
    (out / file).write_bytes(body)
    meta = {
        "case": case.name,
        "file": file,
        "dialect": case.dialect,
        "endpoint": "POST " + case.path,
        "server": {"instance": case.server, **facts},
        "request": json.loads(content) if case.raw is None else content.decode(),
        "status": response.status_code,
        "headers": dict(response.headers.items()),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "note": case.note,
    }
    (out / (file + ".meta")).write_text(json.dumps(meta, indent=1) + "\n")
    return response.status_code, len(body)


def _loopback(url: str) -> str:
    host = urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"only a loopback server is recorded, not {host!r}")
    return url.rstrip("/")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the llama-server (own chat template)")
    parser.add_argument("--tools-url", help="the llama-server started with a tool-use template")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    urls = {"plain": _loopback(args.url)}
    if args.tools_url:
        urls["tools"] = _loopback(args.tools_url)
    args.out.mkdir(parents=True, exist_ok=True)
    with httpx.Client(timeout=httpx.Timeout(120.0)) as client:
        facts = {name: server_facts(client, url) for name, url in urls.items()}
        for case in CASES:
            if args.cases and case.name not in args.cases:
                continue
            if case.server not in urls:
                print(f"skip {case.file}: no --tools-url", file=sys.stderr)
                continue
            status, size = record(client, urls[case.server], case, facts[case.server],
                                  args.out)
            print(f"{case.file}: {status}, {size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
