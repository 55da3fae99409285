"""The ``openai-chat`` dialect.

``decode.py`` reads its stream; ``wire.py`` holds its wire models.
"""

from .._declaration import Dialect

DIALECT = Dialect("openai-chat",
                  decoder=".decode:OpenAIChatDecoder", encoder=".encode:OpenAIChatEncoder",
                  request=".request:REQUEST")
