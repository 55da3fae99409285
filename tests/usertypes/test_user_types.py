"""A user's ``mypy --strict`` sees real types: ``run()`` is a ``Message``, not ``Any``.

``user_script.py`` (next to this file) is a small application written against the
public API with ``assert_type`` checks; mypy runs on it in strict mode with the
repository on ``mypy_path``, so the result does not depend on how the package was
installed (errors inside streamflow itself are ``mypy streamflow``'s business).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def mypy(script: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nstrict = True\nmypy_path = {ROOT}\ncache_dir = {tmp_path}/cache\n"
                      "[mypy-streamflow.*]\nignore_errors = True\n")
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config),
                           str(script)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)


@pytest.mark.skipif(subprocess.run([sys.executable, "-m", "mypy", "--version"],
                                   capture_output=True).returncode != 0,
                    reason="mypy is not installed (pip install -e '.[test]')")
@pytest.mark.slow
def test_the_user_api_passes_mypy_strict(tmp_path: Path) -> None:
    done = mypy(HERE / "user_script.py", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    bad = tmp_path / "typo.py"
    bad.write_text("import streamflow\n\nstreamflow.strem(b'')\n"
                   "x: int = streamflow.assemble(b'')\n"
                   "streamflow.run_sync('a str body')\n"
                   "streamflow.run_sync(b'', 42)\n"
                   "streamflow.stream_sync(b'', sinks=[object()])\n")
    done = mypy(bad, tmp_path)
    assert 'Module has no attribute "strem"' in done.stdout
    assert 'Incompatible types in assignment (expression has type "Message"' in done.stdout
    lines = done.stdout.splitlines()
    for line_no, culprit in [(5, '"str"'), (6, '"int"'), (7, '"object"')]:
        assert any(f"typo.py:{line_no}:" in line and culprit in line for line in lines), (
            line_no, done.stdout)
