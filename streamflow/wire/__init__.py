"""The wire: framing (bytes -> frames), the dialects (frames <-> UniEvents, each a folder
with its decoder, encoder, wire models and request side), the encode-only UI targets,
the one decode loop (``decoder``), ``encode()``, the bundled recordings and redaction of
credentials. Sans-IO; builds on :mod:`streamflow.core` only."""
