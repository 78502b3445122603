"""Use cases. Each service receives its ports in its constructor and does no wiring of its own."""
