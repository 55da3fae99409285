"""Coverage-guided fuzzing of every dialect with atheris (optional; not run in CI).

Input format: byte 0 picks the dialect (``"auto"`` first, then the registry order),
byte 1 the chunk size (1-256), the rest is the body. Each input is decoded whole and
chunked; a crash is any exception that is not a ``StreamflowError``, a typed error
without its partial message, or two chunkings that disagree. See fuzz/README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:
    import atheris
except ImportError:  # replay mode still works without it
    atheris = None


def _imports() -> tuple[Any, Any, list[str]]:
    from streamflow import StreamDecoder, StreamflowError
    from streamflow.wire.dialects import dialect_names, get_dialect

    names = ["auto"]
    for name in dialect_names():
        try:
            get_dialect(name)
        except ImportError:
            continue
        names.append(name)
    return StreamDecoder, StreamflowError, names


if atheris is not None:
    with atheris.instrument_imports():
        StreamDecoder, StreamflowError, DIALECTS = _imports()
else:
    StreamDecoder, StreamflowError, DIALECTS = _imports()


def outcome(dialect: str, chunks: list[bytes]) -> tuple[Any, ...]:
    """The items and the error type of one decode (other exceptions propagate)."""
    decoder = StreamDecoder(dialect)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
        decoder.close()
    except StreamflowError as exc:
        if exc.partial is None:
            raise AssertionError(f"{type(exc).__name__} without a partial message") from exc
        return (type(exc).__name__, repr(exc.partial.items))
    return ("ok", repr(decoder.message.items))


def test_one_input(data: bytes) -> None:
    """The fuzz target."""
    if len(data) < 2:
        return
    dialect = DIALECTS[data[0] % len(DIALECTS)]
    size = data[1] + 1
    body = data[2:]
    whole = outcome(dialect, [body])
    chunked = outcome(dialect, [body[i:i + size] for i in range(0, len(body), size)])
    if whole != chunked:
        raise AssertionError(f"{dialect}: chunking changed the outcome: {whole} != {chunked}")


def write_corpus(folder: Path) -> None:
    """Seed inputs from the test suite's sample bodies (one per dialect, two chunkings)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "faults"))
    import fault_bodies

    folder.mkdir(parents=True, exist_ok=True)
    for name in fault_bodies.available():
        for size in (0, 6, 255):
            seed = bytes([DIALECTS.index(name), size]) + fault_bodies.body_for(name)
            (folder / f"{name}-{size}").write_bytes(seed)


def main(argv: list[str]) -> None:
    """``--corpus DIR`` writes seeds; ``--replay FILE...`` reruns inputs; else atheris."""
    if argv[1:2] == ["--corpus"]:
        write_corpus(Path(argv[2]))
    elif argv[1:2] == ["--replay"]:
        for path in argv[2:]:
            test_one_input(Path(path).read_bytes())
            print(f"ok {path}")
    elif atheris is None:
        sys.exit("atheris is not installed: pip install atheris (or use --replay FILE...)")
    else:
        atheris.Setup(argv, test_one_input)
        atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
