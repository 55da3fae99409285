"""The ``anthropic`` dialect.

``decode.py`` reads its stream; ``wire.py`` holds its wire models.
"""
