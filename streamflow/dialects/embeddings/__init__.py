"""The ``embeddings`` dialect: ``decode.py`` reads its wire format."""
