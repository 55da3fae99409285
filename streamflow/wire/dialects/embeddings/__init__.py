"""The ``embeddings`` dialect: ``decode.py`` reads its stream."""

from .._declaration import Dialect

DIALECT = Dialect("openai-embeddings", decoder=".decode:EmbeddingsDecoder")
