"""The servers under test in front of the upstream: ``streamflow gateway`` and LiteLLM's proxy.

Both are started as their users start them, one process each: the gateway with
``python -m streamflow gateway --listen ... --upstream ... --upstream-dialect ...``
(one per upstream dialect, since a gateway has one upstream), LiteLLM with
``litellm --config <yaml> --num_workers 1`` and a config written to a temp dir: one
model per upstream dialect routed to the loopback upstream (``openai/`` and
``anthropic/`` providers with ``api_base``; ``/v1/messages`` in front of the OpenAI
model goes to chat completions, as the gateway's does, not to the Responses API),
no callbacks, no database, telemetry off, the model cost map read from the package
instead of the network, and a master key (it refuses to start without one; with no
database, checking it is a comparison against the config).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .answer import API_KEY
from .procs import Server, free_port, python_module

__all__ = ["floor", "gateway", "litellm", "litellm_python", "uses_uvloop"]

_CONFIG = """\
model_list:
  - model_name: bench-openai
    litellm_params:
      model: openai/bench
      api_base: {upstream}/v1
      api_key: sk-bench
  - model_name: bench-anthropic
    litellm_params:
      model: anthropic/bench
      api_base: {upstream}
      api_key: sk-bench
litellm_settings:
  telemetry: false
  callbacks: []
  success_callback: []
  failure_callback: []
  drop_params: true
  use_chat_completions_url_for_anthropic_messages: true
  request_timeout: 600
general_settings:
  master_key: {key}
"""

_QUIET = {"LITELLM_TELEMETRY": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
          "LITELLM_LOG": "ERROR", "LITELLM_MODE": "PRODUCTION",
          "DISABLE_SCHEMA_UPDATE": "true", "NO_DOCS": "True", "NO_REDOC": "True"}


def gateway(upstream: str, dialect: str, max_connections: int = 1000, workers: int = 1
            ) -> Server:
    """``streamflow gateway`` in front of ``upstream`` speaking ``dialect`` (not started);
    ``workers`` > 1 runs that many processes on its socket (``--workers``: CPU and RSS
    are read over the process tree)."""
    port = free_port()
    base = upstream + "/v1" if dialect == "openai-chat" else upstream
    argv = python_module("streamflow", "gateway", "--listen", f"127.0.0.1:{port}",
                         "--upstream", base, "--upstream-dialect", dialect,
                         "--max-connections", str(max_connections),
                         "--keep-alive-timeout", "600", "--log-level", "warning",
                         *(("--workers", str(workers)) if workers > 1 else ()))
    return Server(f"gateway-{dialect}", argv, f"http://127.0.0.1:{port}")


def floor(upstream: str) -> Server:
    """The byte-forwarding proxy (``bench.servers.floor``) before ``upstream`` (not started)."""
    port = free_port()
    upstream_port = upstream.rsplit(":", 1)[1]
    argv = python_module("bench.servers.floor", "--port", str(port),
                         "--upstream-port", upstream_port)
    return Server("floor", argv, f"http://127.0.0.1:{port}", probe="/_stats")


def litellm_python(given: str | None = None) -> str | None:
    """The interpreter that has ``litellm[proxy]``: ``given``, ``$BENCH_LITELLM_PYTHON``,
    or this one if it imports ``litellm.proxy``; None when none has it."""
    for candidate in (given, os.environ.get("BENCH_LITELLM_PYTHON"), sys.executable):
        if candidate and shutil.which(candidate) and subprocess.run(
                [candidate, "-c", "import litellm.proxy.proxy_cli"], capture_output=True,
                env={**os.environ, **_QUIET}).returncode == 0:
            return candidate
    return None


def uses_uvloop(python: str) -> bool:
    """Whether uvicorn's ``loop="auto"`` picks uvloop under ``python`` (the gateway's loop)."""
    return subprocess.run([python, "-c", "import uvloop"], capture_output=True).returncode == 0


def litellm(upstream: str, python: str, workdir: Path, max_connections: int = 1000) -> Server:
    """LiteLLM's proxy, one worker, routing both models to ``upstream`` (not started)."""
    config = workdir / "litellm.yaml"
    config.write_text(_CONFIG.format(upstream=upstream, key=API_KEY))
    port = free_port()
    argv = [python, "-m", "litellm.proxy.proxy_cli", "--config", str(config),
            "--host", "127.0.0.1", "--port", str(port), "--num_workers", "1",
            "--keepalive_timeout", "600", "--limit_concurrency", str(max_connections)]
    return Server("litellm", argv, f"http://127.0.0.1:{port}", probe="/health/liveliness",
                  env=_QUIET)
