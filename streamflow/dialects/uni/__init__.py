"""The ``uni`` dialect: ``decode.py`` reads its wire format."""
