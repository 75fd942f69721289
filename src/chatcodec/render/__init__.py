"""Rendering: the Hugging Face-identical sandboxed Jinja renderer, and loading templates and model folders."""
