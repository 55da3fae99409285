"""The ``embeddings`` dialect: ``decode.py`` reads its stream."""
