"""A small Chromium DevTools-protocol driver over --remote-debugging-pipe (no websocket, no
Playwright, nothing downloaded): open a page at a given viewport width, collect console errors
and uncaught exceptions, evaluate JavaScript, take a full-page screenshot. Loopback only:
pages are file:// URLs."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("BENCHWATCH_CHROMIUM") or next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
        if (found := shutil.which(name))
    ),
    None,
)  # Debian's chromium (.ci/run), the GitHub runner's Chrome


class BrowserError(RuntimeError):
    pass


@dataclass
class Page:
    browser: Chromium
    session: str
    errors: list[str] = field(default_factory=list)

    def call(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30
    ) -> dict[str, Any]:
        return self.browser.call(method, params, self.session, timeout)

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}…: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def screenshot(self, path: Path, width: int, max_height: int | None = None) -> Path:
        """The whole page (or its top `max_height` px), `width` CSS px wide."""
        height = min(
            int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)")),
            max_height or 16000,
        )
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        data = self.call(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False}
        )["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


class Chromium:
    """`with Chromium() as browser: page = browser.open(url, width=414)`."""

    def __init__(self, binary: str | None = None, dark: bool = False) -> None:
        binary = binary or CHROMIUM
        if binary is None:
            raise BrowserError("chromium is not installed (apt-get install -y chromium)")
        self.dark = dark
        self.profile = tempfile.mkdtemp(prefix="bw-chromium-")
        to_chrome_r, self._write = os.pipe()
        self._read, from_chrome_w = os.pipe()

        def fds() -> None:  # the protocol pipe is fds 3 (commands in) and 4 (answers out)
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                "--hide-scrollbars",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                f"--user-data-dir={self.profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            preexec_fn=fds,
            pass_fds=(3, 4),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 30,
    ) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next(deadline)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def _next(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the protocol pipe")
                self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._next(deadline))
        except BrowserError:
            pass

    def open(self, url: str, width: int, height: int = 900) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        page.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        page.call(
            "Emulation.setEmulatedMedia",
            {
                "features": [
                    {"name": "prefers-color-scheme", "value": "dark" if self.dark else "light"}
                ]
            },
        )
        for domain in ("Page", "Runtime", "Log"):
            page.call(f"{domain}.enable")
        start = len(self.events)
        page.call("Page.navigate", {"url": url})
        deadline = time.monotonic() + 30
        while not any(
            e.get("method") == "Page.loadEventFired" and e.get("sessionId") == session
            for e in self.events[start:]
        ):
            if time.monotonic() > deadline:
                raise BrowserError(f"{url}: no load event")
            self.drain(0.2)
        self.drain(0.5)  # scripts that run after load (the pages mark their wide tables)
        for event in self.events[start:]:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                page.errors.append(
                    str(details.get("exception", {}).get("description") or details.get("text"))
                )
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                page.errors.append(
                    " ".join(
                        str(a.get("value", a.get("description"))) for a in params.get("args", [])
                    )
                )
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                page.errors.append(params["entry"].get("text", ""))
        return page

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


# What a page looks like to a reader, measured in the browser (CSS px).
MEASURE = r"""
(() => {
  const doc = document.documentElement;
  const fonts = [];
  for (const svg of document.querySelectorAll("svg")) {
    const box = svg.getBoundingClientRect();
    const view = svg.viewBox && svg.viewBox.baseVal;
    if (!box.width || !view || !view.width) continue;
    const scale = box.width / view.width;
    for (const t of svg.querySelectorAll("text")) {
      if (!t.textContent.trim()) continue;
      fonts.push(parseFloat(getComputedStyle(t).fontSize) * scale);
    }
  }
  const colors = {};
  for (const el of document.querySelectorAll("svg [data-stack]")) {
    const stack = el.getAttribute("data-stack");
    const style = getComputedStyle(el);
    const fill = el.getAttribute("fill");
    const color = (fill && fill !== "none") ? style.fill : style.stroke;
    (colors[stack] = colors[stack] || {})[color] = true;
  }
  const overflowing = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest(".scroll")) continue;
    const r = el.getBoundingClientRect();
    if (r.width && r.right > doc.clientWidth + 1) overflowing.push(el.tagName + "." + el.className);
  }
  const scrolls = [...document.querySelectorAll(".scroll")].map(s => ({
    wide: s.scrollWidth > s.clientWidth + 1, overflow: getComputedStyle(s).overflowX,
    hint: !!(s.nextElementSibling && s.nextElementSibling.classList.contains("scroll-hint")
             && getComputedStyle(s.nextElementSibling).display !== "none")}));
  return {
    width: window.innerWidth, scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth,
    minFont: fonts.length ? Math.min(...fonts) : null, texts: fonts.length,
    colors: Object.fromEntries(Object.entries(colors).map(([k, v]) => [k, Object.keys(v)])),
    overflowing: overflowing.slice(0, 10), scrolls,
    background: getComputedStyle(document.body).backgroundColor,
    tables: document.querySelectorAll("table").length,
    tablesOutsideScroll: [...document.querySelectorAll("table")].filter(t => !t.closest(".scroll")).length,
  };
})()
"""


def measure(page: Page) -> dict[str, Any]:
    return page.evaluate(MEASURE)
