"""The ``openai-responses`` dialect.

``decode.py`` reads its stream; ``wire.py`` holds its wire models.
"""

from .._declaration import Dialect

DIALECT = Dialect("openai-responses",
                  decoder=".decode:OpenAIResponsesDecoder",
                  encoder=".encode:OpenAIResponsesEncoder", request=".request:REQUEST")
