"""The ``anthropic`` dialect.

``decode.py`` reads its stream; ``wire.py`` holds its wire models.
"""

from .._declaration import Dialect

DIALECT = Dialect("anthropic",
                  decoder=".decode:AnthropicDecoder", encoder=".encode:AnthropicEncoder",
                  request=".request:REQUEST")
