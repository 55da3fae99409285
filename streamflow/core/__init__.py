"""The sans-IO core: the UniEvent model and its grammar, the assembled message, the one
error hierarchy, limits, partial JSON, the recording format, the neutral request types,
structured output and the sans-IO half of tools. Imports nothing of streamflow's above it
and no IO library (reactivex, anyio, httpx, rich)."""
