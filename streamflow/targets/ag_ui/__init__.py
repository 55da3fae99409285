"""AG-UI (the Agent-User Interaction protocol) events over SSE: a write-only target."""
