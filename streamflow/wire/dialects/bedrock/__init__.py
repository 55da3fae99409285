"""The ``bedrock`` dialect.

``decode.py`` reads its stream; ``wire.py`` holds its wire models.
"""

from .._declaration import Dialect

DIALECT = Dialect("bedrock", decoder=".decode:BedrockDecoder")
