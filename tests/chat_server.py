"""A local OpenAI-compatible chat endpoint for the tests (127.0.0.1 only): no model runs, a function answers.

``ChatServer(answer)`` serves ``POST /v1/chat/completions`` on a free port of 127.0.0.1 in a thread; ``answer`` gets
the request's JSON and returns the reply text, or an ``(HTTP status, body text)`` pair to answer with an error or a
body that is not a chat completion. Every request is kept (``requests``: its JSON and its Authorization header).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MOVE_LINE = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


def listed_moves(request: dict) -> list[str]:
    """The numbered moves of the request's last user message (a turn or a rethink), in order."""
    last = [m["content"] for m in request["messages"] if m["role"] == "user"][-1]
    return [text for _, text in MOVE_LINE.findall(last)]


class ChatServer:
    """A chat endpoint on 127.0.0.1 answering with ``answer(request)`` (see the module docstring)."""

    def __init__(self, answer):
        self.answer = answer
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"json": request, "authorization": self.headers.get("Authorization")})
                answered = server.answer(request)
                if isinstance(answered, tuple):
                    status, body = answered
                else:
                    status, body = 200, json.dumps({"choices": [{"message": {"role": "assistant",
                                                                             "content": answered}}]})
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):  # quiet test output
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
