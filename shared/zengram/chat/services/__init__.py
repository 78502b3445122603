"""The chat layer's use cases (docs/chat.md); each service receives its ports in its constructor."""
