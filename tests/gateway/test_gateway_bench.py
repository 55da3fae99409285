"""The gateway latency benchmark runs end to end (tiny settings; no timing asserted)."""

from __future__ import annotations

import json

import pytest

from bench.gateway import main


@pytest.mark.slow
def test_the_latency_bench_measures_every_client_dialect(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    assert main(["--events", "20", "--gap", "0.002", "--reps", "1", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert set(results) == {"direct", "/v1/messages", "/v1/chat/completions", "/v1/responses"}
    assert all(r["events"] == 20 for r in results.values())
