"""The application layer: the run (``run``, ``stream``: one ``Run`` over a source, its
operators and sinks), the Agent and its tool loop, running tools (dispatch, MCP), and the
providers (where a request goes and with which key). Builds on the reactive layer."""
