"""OpenRouter's media streams, two dialects (``openrouter-image``, ``speech``): ``decode.py``
reads them."""

from .._declaration import Dialect

DIALECT = (Dialect("openrouter-image", decoder=".decode:OpenRouterImageDecoder"),
           Dialect("speech", decoder=".decode:SpeechDecoder"))
