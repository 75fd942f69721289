"""Adapters from the sans-I/O core to the shapes servers and clients use."""
