"""The ``ollama`` dialect: ``decode.py`` reads its stream."""

from .._declaration import Dialect

DIALECT = Dialect("ollama", decoder=".decode:OllamaDecoder", encoder=".encode:OllamaEncoder")
