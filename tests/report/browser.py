"""A real headless Chromium (Debian's `chromium` package) driven over the DevTools protocol
with websocket-client: nothing is downloaded, the system browser is used as installed.

The page is opened from a file; every request the page makes is recorded (the report must
make none), the host resolver maps every name to nowhere as a second guard, and console
errors and uncaught exceptions are collected."""

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket

# The real binary: Debian's /usr/bin/chromium is a shell wrapper that adds flags of its own.
BINARIES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser")
# Only how long to wait for a start that is slow, not a hang: nothing here is measured. 30 s
# was too short on the 2-core CI host while other engineers built (load average 20 and more):
# the timeout failed tests whose page would have rendered. As the DevTools socket's 120 s below.
START_TIMEOUT_S = 120.0


def find_chromium() -> str | None:
    for name in BINARIES:
        found = shutil.which(name) if "/" not in name else (name if Path(name).exists() else None)
        if found:
            return found
    return None


@dataclass
class PageLog:
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)


class Page:
    """One tab, attached with a flat session."""

    def __init__(self, ws: websocket.WebSocket, session: str) -> None:
        self._ws, self._session = ws, session
        self._ids = itertools.count(1)
        self.log = PageLog()

    def send(self, method: str, timeout_s: float = 60.0, **params: Any) -> dict[str, Any]:
        call_id = next(self._ids)
        self._ws.send(
            json.dumps(
                {"id": call_id, "method": method, "params": params, "sessionId": self._session}
            )
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = json.loads(self._ws.recv())
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)
        raise TimeoutError(f"{method}: no answer in {timeout_s} s")

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.log.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.log.console_errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.log.console_errors.append(params["entry"].get("text", ""))
        elif method == "Runtime.exceptionThrown":
            self.log.exceptions.append(json.dumps(params["exceptionDetails"])[:500])

    def evaluate(self, expression: str) -> Any:
        found = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression[:60]}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def open(self, path: Path, ready: str, timeout_s: float = 90.0) -> None:
        """Loads file://`path` and waits until the JavaScript `ready` is truthy."""
        self.send("Page.navigate", url=path.resolve().as_uri())
        deadline = time.monotonic() + timeout_s
        while not self.evaluate(f"!!({ready})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path}: {ready} still false after {timeout_s} s")
            time.sleep(0.2)

    def screenshot(self, out: Path) -> Path:
        """A full-page PNG."""
        metrics = self.send("Page.getLayoutMetrics")["cssContentSize"]
        width, height = int(metrics["width"]), int(metrics["height"])
        shot = self.send(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        )
        out.write_bytes(base64.b64decode(shot["data"]))
        return out


@contextlib.contextmanager
def chromium_page(width: int = 1200, height: int = 900) -> Iterator[Page]:
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError(
            "chromium is not installed (scripts/install-test-deps.sh installs it)"
        )
    with tempfile.TemporaryDirectory(prefix="oltplab-chromium-") as profile:
        process = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its helpers share the group: stopped together below
        )
        try:
            port, path = _devtools_address(Path(profile), process)
            ws = websocket.create_connection(
                f"ws://127.0.0.1:{port}{path}", timeout=120, suppress_origin=True
            )
            try:
                yield _attached_page(ws)
            finally:
                ws.close()
        finally:
            _stop_group(process)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stops Chromium and its helper processes (its own process group): a helper still
    writing into the profile directory would make its removal fail."""
    group = process.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    time.sleep(0.2)


def _devtools_address(profile: Path, process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Chromium writes its port and browser endpoint to DevToolsActivePort once listening."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with {process.returncode} before listening")
        with contextlib.suppress(OSError, ValueError):
            port, path = marker.read_text().split()[:2]
            return int(port), path
        time.sleep(0.1)
    raise TimeoutError(f"chromium did not open its DevTools port in {START_TIMEOUT_S} s")


def _attached_page(ws: websocket.WebSocket) -> Page:
    ws.send(
        json.dumps({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}})
    )
    target = _answer(ws, 1)["targetId"]
    ws.send(
        json.dumps(
            {
                "id": 2,
                "method": "Target.attachToTarget",
                "params": {"targetId": target, "flatten": True},
            }
        )
    )
    page = Page(ws, _answer(ws, 2)["sessionId"])
    for domain in ("Page", "Runtime", "Network", "Log"):
        page.send(f"{domain}.enable")
    return page


def _answer(ws: websocket.WebSocket, call_id: int) -> dict[str, Any]:
    while True:
        message = json.loads(ws.recv())
        if message.get("id") == call_id:
            result: dict[str, Any] = message["result"]
            return result
