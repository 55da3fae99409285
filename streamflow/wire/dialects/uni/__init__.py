"""The ``uni`` dialect: ``decode.py`` reads its stream."""
