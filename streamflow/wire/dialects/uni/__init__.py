"""The ``uni`` dialect and its JSON-lines form ``uni-jsonl``: ``decode.py`` reads them,
``encode.py`` writes them."""

from .._declaration import Dialect

DIALECT = (Dialect("uni", decoder=".decode:UniDecoder", encoder=".encode:UniEncoder"),
           Dialect("uni-jsonl", decoder=".decode:UniJSONLDecoder",
                   encoder=".encode:UniJSONLEncoder"))
