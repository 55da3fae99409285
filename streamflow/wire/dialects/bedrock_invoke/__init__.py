"""The ``bedrock-invoke`` dialect: ``decode.py`` reads its stream."""
