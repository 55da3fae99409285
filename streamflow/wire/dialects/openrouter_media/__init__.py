"""The ``openrouter-media`` dialect: ``decode.py`` reads its stream."""
