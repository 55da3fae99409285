"""The ``ollama`` dialect: ``decode.py`` reads its wire format."""
