"""The ``gemini`` dialect.

``decode.py`` reads its stream; ``wire.py`` holds its wire models.
"""

from .._declaration import Dialect

DIALECT = Dialect("gemini",
                  decoder=".decode:GeminiDecoder", encoder=".encode:GeminiEncoder",
                  request=".request:REQUEST")
