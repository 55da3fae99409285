"""bench.structured runs, and every path it times reads the same object (a small answer)."""

from __future__ import annotations

from bench.structured import answer, fragments, run


def test_every_path_reads_the_same_object_and_the_fragments_rejoin() -> None:
    text = answer(12)
    assert "".join(fragments(text)) == text
    assert all(1 <= len(f) <= 10 for f in fragments(text))
    times = run(12, 1, with_instructor=False)  # run() asserts each path's object
    assert set(times) >= {"streamflow, read every event", "streamflow, feed only"}
