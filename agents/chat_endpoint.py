"""An OpenAI-compatible chat endpoint (``POST {base_url}/chat/completions``), called with the standard library.

OpenAI, and the servers that copy its API (vLLM, Ollama, llama.cpp's server, LM Studio, OpenRouter, ...), answer
``{"model", "messages", "temperature"[, "max_tokens"]}`` with ``choices[0].message.content``. The key is read from
the environment variable ``key_env`` at every call and sent as a bearer token; it is never stored, logged or taken
from a spec or a file. Where the variable is unset no key is sent (local servers need none).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from urllib.parse import urlsplit


class ChatError(RuntimeError):
    """The endpoint gave no reply: unreachable, timed out, an HTTP error, or an answer that is not a chat
    completion. The message says which, and never holds the key."""


class ChatEndpoint:
    """``complete(messages)`` -> the model's reply text, from the endpoint at ``base_url``."""

    def __init__(self, base_url: str, model: str, key_env: str = "OPENAI_API_KEY", timeout: float = 60.0,
                 temperature: float = 0.0, max_tokens: int | None = None):
        if urlsplit(base_url).scheme not in ("http", "https") or not urlsplit(base_url).netloc:
            raise ValueError(f"base_url must be an http(s) address such as http://127.0.0.1:8000/v1, got {base_url!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.key_env = key_env
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens

    def complete(self, messages: list[dict]) -> str:
        """The reply to ``messages`` (OpenAI's ``[{"role", "content"}]``); a ChatError where none came."""
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read())
        except urllib.error.HTTPError as error:
            detail = error.read(300).decode("utf-8", "replace")
            raise ChatError(f"{self.url} answered HTTP {error.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as error:  # refused, unknown host, timed out
            raise ChatError(f"cannot reach {self.url}: {getattr(error, 'reason', error)}") from None
        except ValueError:
            raise ChatError(f"{self.url} answered with something that is not JSON") from None
        try:
            content = data["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ChatError(f"{self.url} answered JSON that is not a chat completion (no choices[0].message)") \
                from None
        return content if isinstance(content, str) else ""  # null content: a refusal or a tool call, no text
