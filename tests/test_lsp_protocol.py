"""`gradlint lsp` at the level of bytes: what a client that breaks the protocol, or a
document no file system can hold, gets back. A raw client writes frames to the server's
stdin and reads its messages, so malformed input can be sent at all."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("pygls")

TIMEOUT = 30
LEAF = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    """The server as a process, spoken to in bytes; its messages arrive on a queue."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gradlint", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue = queue.Queue()
        self.seen: list[dict] = []  # every message wait_for has taken off the queue
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stdout = self.process.stdout
        while True:
            length = None
            while True:
                line = stdout.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line == b"\r\n":
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert length is not None
            self.messages.put(json.loads(stdout.read(length)))

    def send(self, data: bytes | dict) -> None:
        self.process.stdin.write(data if isinstance(data, bytes) else frame(data))
        self.process.stdin.flush()

    def request(self, number: int, method: str, params=None) -> None:
        self.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})

    def wait_for(self, wanted) -> dict:
        """The first message `wanted` accepts."""
        while True:
            message = self.messages.get(timeout=TIMEOUT)
            assert message is not None, "the server closed its output"
            self.seen.append(message)
            if wanted(message):
                return message

    def start(self) -> None:
        self.request(1, "initialize", {"processId": None, "capabilities": {}})
        self.wait_for(lambda m: m.get("id") == 1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def finish(self) -> int:
        """shutdown, exit: the exit status, with the server's stderr kept."""
        self.request(999, "shutdown")
        assert self.wait_for(lambda m: m.get("id") == 999).get("result", "x") is None
        self.send({"jsonrpc": "2.0", "method": "exit"})
        self.process.stdin.close()
        self.stderr = self.process.stderr.read()
        return self.process.wait(TIMEOUT)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def client(tmp_path):
    raw = RawClient(tmp_path)
    yield raw
    raw.close()


def hover(uri: str, line: int = 0) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": 0}}


def test_requests_after_shutdown_get_invalid_request(client, tmp_path):
    client.start()
    client.request(2, "shutdown")
    assert client.wait_for(lambda m: m.get("id") == 2)["result"] is None
    client.request(3, "textDocument/hover", hover((tmp_path / "a.py").as_uri()))
    answer = client.wait_for(lambda m: m.get("id") == 3)
    assert answer["error"]["code"] == -32600  # InvalidRequest
    client.request(4, "shutdown")
    assert client.wait_for(lambda m: m.get("id") == 4)["error"]["code"] == -32600
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.process.wait(TIMEOUT) == 0


@pytest.mark.parametrize(
    "declared",
    [b"99999999999999999999", b"999999999999", b"9" * 5000, b"0"],
    ids=["past-64-bits", "a-terabyte", "5000-digits", "zero"],
)
def test_an_absurd_content_length_is_one_line_and_the_server_goes_on(client, tmp_path, declared):
    client.start()
    client.send(b"Content-Length: " + declared + b"\r\n\r\n" + json.dumps({"id": 5}).encode())
    client.request(6, "textDocument/hover", hover((tmp_path / "a.py").as_uri()))
    assert client.wait_for(lambda m: m.get("id") == 6)["result"] is None
    assert client.finish() == 0
    lines = client.stderr.decode().splitlines()
    assert len(lines) == 1 and "skipped" in lines[0] and len(lines[0]) < 200, lines
    shown = [m["params"]["message"] for m in client.seen if m.get("method") == "window/showMessage"]
    assert shown == [lines[0]]


def test_a_document_whose_path_is_too_long_is_linted_with_one_line_of_warning(client):
    folders = "/".join(["d" * 200] * 30)  # past PATH_MAX, each part within NAME_MAX
    uri = f"file:///{folders}/train.py"
    client.start()
    client.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": LEAF}
            },
        }
    )
    published = client.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    assert published["params"]["uri"] == uri
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["GL002"]
    shown = [m["params"]["message"] for m in client.seen if m.get("method") == "window/showMessage"]
    assert len(shown) == 1 and "\n" not in shown[0] and len(shown[0]) < 300, shown
    assert "internal error" not in shown[0] and "cannot name a file" in shown[0]
    client.request(7, "textDocument/hover", hover(uri, line=2))
    assert "GL002" in client.wait_for(lambda m: m.get("id") == 7)["result"]["contents"]["value"]
    assert client.finish() == 0
