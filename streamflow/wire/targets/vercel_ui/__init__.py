"""The Vercel AI SDK UI message stream (what ``useChat`` reads): a write-only target."""
