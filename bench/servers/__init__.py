"""``python -m bench.servers``: the gateway and LiteLLM's proxy on real servers, vs the direct path.

See ``__main__.py`` for the run and bench/README.md ("Servers") for how to read it.
"""
