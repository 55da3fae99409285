"""The ``openai-responses`` dialect.

``decode.py`` reads its wire format; ``wire.py`` holds its wire models.
"""
