"""OpenAI ``chat.completion.chunk`` and response shapes (the adapter lives in
``chatcodec.adapters.openai``; this module keeps the documented import path)."""

from chatcodec.adapters.openai import *  # noqa: F403
from chatcodec.adapters.openai import __all__  # noqa: F401
