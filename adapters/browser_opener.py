"""Opening the approval page in the person's browser from a stdio server (guard.md §4b), off the event loop.

`webbrowser` runs a `$BROWSER` or console browser as a child that inherits its parent's stdin and stdout,
which in stdio are the JSON-RPC pipe, and may wait for it. So it runs in a child process of its own whose
stdin is /dev/null and whose stdout goes to stderr; the URL reaches it in its environment, never on a
command line of ours or in a log. A console-only browser (it would draw on the pipe's terminal),
`webbrowser.Error` or a False answer means no browser: the caller falls back to the token.
"""

import asyncio
import logging
import os
import sys

logger = logging.getLogger(__name__)

_URL_VARIABLE = "WOODPECKER_MCP_PAGE_URL"
# How long the opener may take to say whether it opened; a browser still running after it is taken as open.
OPEN_SECONDS = 10.0
_OPENED, _NONE = 0, 3
_CHILD = f"""
import os, sys, webbrowser
CONSOLE = {{"lynx", "w3m", "links", "links2", "elinks", "www-browser", "browsh"}}
url = os.environ.pop({_URL_VARIABLE!r})
try:
    browser = webbrowser.get()
except webbrowser.Error:
    sys.exit({_NONE})
names = [getattr(browser, "name", "")] + list(getattr(browser, "args", [])[:1])
words = [str(n).split() for n in names if n]
if any(os.path.basename(w[0]) in CONSOLE for w in words if w):
    sys.exit({_NONE})
try:
    opened = browser.open(url, new=2)
except Exception:
    sys.exit({_NONE})
sys.exit({_OPENED} if opened else {_NONE})
"""


async def open_in_browser(url: str, *, wait_seconds: float = OPEN_SECONDS) -> bool:
    """True when a graphical browser was asked to show `url`; False when there is none."""
    env = {**os.environ, _URL_VARIABLE: url}
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-c",
            _CHILD,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=sys.stderr.fileno(),
            stderr=sys.stderr.fileno(),
            env=env,
            start_new_session=True,
        )
    except OSError:
        logger.info("no browser could be started to ask the person")
        return False
    try:
        code = await asyncio.wait_for(child.wait(), wait_seconds)
    except TimeoutError:
        # A `$BROWSER` that `webbrowser` waits for and that is still showing the page.
        return True
    if code != _OPENED:
        logger.info("no graphical browser opened the approval page")
    return code == _OPENED
