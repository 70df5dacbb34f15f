"""The cardarena wire protocol (see PROTOCOL.md): framing, message schemas, and the Python bot SDK."""

PROTOCOL_VERSION = 1
