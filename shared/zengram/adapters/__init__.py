"""Adapters: the only modules that talk to databases, model files and network services."""
