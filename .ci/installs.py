"""Prove every install of streamflow-llm imports: the core alone, then the core with each extra.

For each install, in a clean venv of its own (the wheel is built once): import every module
of the package -- each imports, or fails with the one line naming an extra this install
lacks (``streamflow._extras.require``) and nothing else -- and on the core install run the
README's main job, ``streamflow demo``. Run by ``.ci/run``; ``python3 .ci/installs.py
[extra ...]`` runs a subset (``core`` is the core alone).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALLS = ("core", "web", "gateway", "redis", "mcp", "otel", "fast")

CHECK = r'''
import importlib, json, pkgutil, sys
import streamflow
installed = set(sys.argv[1].split(",")) - {"core"}
bad, optional = [], 0
for info in pkgutil.walk_packages(streamflow.__path__, "streamflow."):
    if info.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(info.name)
    except ImportError as exc:
        text = str(exc)
        named = [e for e in ("web", "gateway", "redis", "mcp", "otel", "fast")
                 if f"pip install 'streamflow-llm[{e}]'" in text]
        if "\n" in text or len(named) != 1 or named[0] in installed:
            bad.append(f"{info.name}: {type(exc).__name__}: {text}")
        optional += 1
    except Exception as exc:
        bad.append(f"{info.name}: {type(exc).__name__}: {exc}")
print(json.dumps({"bad": bad, "optional": optional, "compiled": streamflow.compiled}))
'''


def sh(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run ``argv``; its output is shown only when it fails."""
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        sys.stdout.write(done.stdout + done.stderr)
        raise SystemExit(f"failed ({done.returncode}): {' '.join(map(str, argv))}")
    return done


def main(installs: list[str]) -> int:
    import json

    work = Path(tempfile.mkdtemp(prefix="streamflow-installs-"))
    env = {**os.environ, "STREAMFLOW_COMPILE": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    sh(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", work / "dist",
       ROOT, env=env)
    wheel, = (work / "dist").glob("streamflow_llm-*.whl")
    failures = 0
    for install in installs:
        started = time.monotonic()
        venv = work / install
        sh(sys.executable, "-m", "venv", venv)
        python = venv / "bin" / "python"
        spec = str(wheel) if install == "core" else f"{wheel}[{install}]"
        sh(python, "-m", "pip", "install", "--quiet", spec, env=env)
        # an empty folder: the checkout must not shadow the installed package
        report = json.loads(sh(python, "-c", CHECK, install, cwd=work).stdout)
        if report["bad"]:
            failures += 1
            print(f"{install}: modules that neither import nor name a missing extra:")
            for line in report["bad"]:
                print("   ", line)
        if install == "core":
            demo = sh(venv / "bin" / "streamflow", "demo", cwd=work, env=env)
            # the answer on stdout, the tool call and the turns' footers on stderr
            assert "Lisbon" in demo.stdout and "get_weather" in demo.stderr, demo
        print(f"{install}: ok ({report['optional']} modules name a missing extra, "
              f"{time.monotonic() - started:.0f} s)" if not report["bad"] else
              f"{install}: FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    chosen = sys.argv[1:] or list(INSTALLS)
    unknown = set(chosen) - set(INSTALLS)
    if unknown:
        raise SystemExit(f"unknown installs: {', '.join(sorted(unknown))}; "
                         f"choose from {', '.join(INSTALLS)}")
    raise SystemExit(main(chosen))
