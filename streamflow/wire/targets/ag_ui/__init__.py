"""AG-UI (the Agent-User Interaction protocol) events over SSE: a write-only target."""

from ...._extras import require

require("the ag-ui target", "web", "ag_ui")
