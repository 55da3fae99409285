"""The ``bedrock-invoke`` dialect: ``decode.py`` reads its stream."""

from .._declaration import Dialect

DIALECT = Dialect("bedrock-invoke", decoder=".decode:BedrockInvokeDecoder")
