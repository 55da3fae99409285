"""The servers: the gateway (every client dialect over any upstream), the web responses
and resumable answers (``web``), the replay server (``replay``), on starlette and uvicorn.
The top of the library; only the demo, the fault tools and the CLI build on it."""
