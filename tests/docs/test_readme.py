"""The README is the five-minute page, and keeps the contracts others read out of it.

Its code blocks run in ``tests/docs/test_code_blocks.py`` with those of the ``docs/``
pages; here: its length, the first sample, the two set-up commands (``.ci/run`` runs
the same install and test command), the install lines and extras, and the links of the
README and the pages (``tests/docs/test_site.py`` builds the site, anchors checked).
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from docblocks import PAGES, ROOT, blocks, private_imports

README = (ROOT / "README.md").read_text(encoding="utf-8")
MOST_LINES = 300
SETUP = ["pip install -e . && streamflow demo", "pip install -e '.[test]' && python -m pytest"]


def test_the_readme_reads_in_five_minutes() -> None:
    assert len(README.splitlines()) <= MOST_LINES
    for heading in ("## Install", "## Set up (fresh clone", "## Quick start", "## A tour",
                    "## Documentation"):
        assert heading in README, heading


def test_the_first_code_sample_is_the_async_for_form() -> None:
    first = next(b for b in blocks("README.md") if b.lang == "python")
    assert "async with streamflow.stream(" in first.text
    assert "async for event in s" in first.text


def _setup_block() -> str:
    section = README.split("## Set up (fresh clone", 1)[1].split("\n## ", 1)[0]
    return next(b.text for b in blocks("README.md") if b.lang == "bash" and b.text in section)


def test_the_two_set_up_commands() -> None:
    commands = [line for line in _setup_block().splitlines()
                if line.strip() and not line.startswith("#")]
    assert commands == SETUP


def _normal(command: str) -> list[str]:
    """A command's words without the environment and the quiet flags CI adds."""
    try:
        words = shlex.split(command)
    except ValueError:  # not one command (a heredoc's Python, a shell construct)
        return []
    while words and re.match(r"^\w+=", words[0]):
        words.pop(0)
    return [w for w in words if w not in ("--quiet", "-q")]


def test_ci_runs_the_readmes_install_and_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    run = [_normal(line.strip()) for line in ci.splitlines()
           if line.strip() and not line.lstrip().startswith("#")]
    install, test = (_normal(part) for part in SETUP[1].split(" && "))
    assert install in run, ".ci/run no longer installs the test extra as the README says"
    assert test in run, ".ci/run no longer runs the README's test command"


def test_the_command_line_guide_names_every_subcommand() -> None:
    from streamflow.cli.main import COMMANDS as SUBCOMMANDS

    guide = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in SUBCOMMANDS:
        assert f"- `streamflow {name}" in guide, name
        assert f"`{name}`" in README or f"streamflow {name}" in README, name


# --- the install lines and the extras -----------------------------------------------------

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_every_install_line_names_our_distribution_and_real_extras() -> None:
    assert PYPROJECT["name"] == "streamflow-llm"
    extras = set(PYPROJECT["optional-dependencies"])
    texts = {page: (ROOT / page).read_text(encoding="utf-8") for page in PAGES}
    code = [*(ROOT / "streamflow").rglob("*.py"), *(ROOT / "examples").glob("*.py")]
    texts.update({str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in code})
    for name, text in texts.items():
        assert not re.search(r"install[^\n]*\bstreamflow\[", text), name  # the other project's
        for named in re.findall(r"(?:streamflow-llm|\.)\[([\w,]+)\]", text):
            assert set(named.split(",")) <= extras, (name, named)


def test_the_private_import_check_sees_each_form() -> None:
    assert private_imports("import streamflow._lazy\n"
                           "from streamflow.wire.dialects._emitter import E\n"
                           "from streamflow.wire.dialects import _x, Decoder, __all__\n"
                           "from streamflow import stream\nimport _body\n") == [
        "streamflow._lazy", "streamflow.wire.dialects._emitter", "streamflow.wire.dialects._x"]


# --- links ---------------------------------------------------------------------------------

LINK = re.compile(r"(?<![`\w])!?\[[^\]]*\]\(([^)\s]+)\)")


def test_every_relative_link_points_at_a_file() -> None:
    broken = []
    for page in PAGES:
        text = re.sub(r"^```.*?^```", "", (ROOT / page).read_text(encoding="utf-8"),
                      flags=re.S | re.M)  # not inside code blocks
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = (ROOT / page).parent / target.split("#", 1)[0]
            if not Path(path).exists():
                broken.append(f"{page}: {target}")
    assert broken == []
