"""Headless Chromium for the HTML report's tests, driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ended by NUL on file descriptors 3 and 4), so no
driver, port or package is needed. ``Browser.find()`` is None where Chromium is absent: the
tests that need it skip.

    with Browser.open(path) as page:
        page.eval("document.title")
        page.screenshot(png_path)
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    pass


class Page:
    def __init__(self, proc: subprocess.Popen[bytes], to_browser: int, from_browser: int):
        self.proc = proc
        self._w = to_browser
        self._r = from_browser
        self._buf = b""
        self._id = 0
        self.session = ""

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0, session: bool = True) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buf:
                if time.monotonic() > deadline:
                    raise BrowserError(f"no answer to {method} within {timeout}s")
                chunk = os.read(self._r, 1 << 16)
                if not chunk:
                    raise BrowserError("Chromium closed the pipe")
                self._buf += chunk
            raw, _, self._buf = self._buf.partition(b"\0")
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))

    def eval(self, expression: str) -> Any:
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in res:
            raise BrowserError(f"{expression}: {res['exceptionDetails'].get('exception', {}).get('description', res['exceptionDetails'])}")
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.1)
        raise BrowserError(f"{expression} stayed false for {timeout}s")

    def screenshot(self, path: Path, width: int = 1400, height: int = 1000) -> None:
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        time.sleep(0.3)
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))


class Browser:
    @staticmethod
    def find() -> str | None:
        for name in CANDIDATES:
            exe = shutil.which(name)
            if exe:
                return exe
        return None

    def __init__(self, url: str):
        self.url = url
        self.profile = tempfile.TemporaryDirectory(prefix="fluxgraph-chromium-")
        self.page: Page | None = None

    @classmethod
    def open(cls, path: Path) -> Browser:
        return cls(path.resolve().as_uri())

    def __enter__(self) -> Page:
        exe = self.find()
        if exe is None:
            raise BrowserError("Chromium is not installed")
        # fd 3: what Chromium reads (our commands); fd 4: what it writes (answers, events)
        cmd_r, cmd_w = os.pipe()
        out_r, out_w = os.pipe()

        def fds() -> None:
            os.dup2(cmd_r, 3)
            os.dup2(out_w, 4)

        proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self.profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # the child's 3 and 4 are set by ``fds`` before the close of every other descriptor,
            # which keeps the ones named here
            pass_fds=(3, 4, cmd_r, out_w),
            preexec_fn=fds,
        )
        os.close(cmd_r)
        os.close(out_w)
        page = Page(proc, cmd_w, out_r)
        target = page.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        page.session = page.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        page.send("Page.enable")
        page.send("Runtime.enable")
        page.send("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        page.send("Page.navigate", {"url": self.url})
        self.page = page
        return page

    def __exit__(self, *exc: object) -> None:
        if self.page is not None:
            try:
                self.page.send("Browser.close", session=False, timeout=5)
            except (BrowserError, OSError):
                pass
            try:
                self.page.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.page.proc.kill()
            for fd in (self.page._w, self.page._r):
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.profile.cleanup()


def main(argv: list[str]) -> int:
    """``python -m tests.browser REPORT.html OUT.png [KEY]``: a screenshot of an HTML report
    (with the node ``KEY``, e.g. ``ks:flux-system/apps``, selected): how docs/img's are made."""
    report, out = Path(argv[0]), Path(argv[1])
    with Browser.open(report) as page:
        page.wait_for("document.body && document.body.dataset.ready")
        if len(argv) > 2:
            key = json.dumps(argv[2])
            page.eval(f"document.querySelector('g.node[data-key=' + JSON.stringify({key}) + ']').dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")
        page.screenshot(out)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
