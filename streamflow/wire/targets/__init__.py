"""Encode-only targets: UI stream protocols a browser reads, written from UniEvents.

A *target* is any name :func:`streamflow.encode` writes to; the dialects' encoders
are targets too, but these two have no decoder and no request side, so they are not
dialects: ``vercel_ui`` (the Vercel AI SDK UI message stream) and ``ag_ui`` (the
AG-UI protocol). Both share ``_ui_run`` (a run is one UI message). They are
registered in :data:`streamflow.wire.dialects.ENCODERS`.
"""
