"""The ``ollama`` dialect: ``decode.py`` reads its stream."""
