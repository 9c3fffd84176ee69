"""Make ``docs/service-page.png``: the service with the local provider as its model, driven in
a real browser (Debian's chromium + Playwright) through a few tool-using turns and a compaction.

Run: ``.venv/bin/python docs/screenshot_page.py``
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402
from tests.server.conftest import service_config, serving, tool_replies  # noqa: E402
from tests.server.test_page import BROWSER_ARGS, CHROMIUM  # noqa: E402

from abridged.testing import ProviderServer  # noqa: E402

OUT = ROOT / "docs" / "service-page.png"


def main() -> None:
    """Drive the page and write the screenshot."""
    os.environ["ABRIDGED_API_KEY"] = "local-provider"
    with (
        ProviderServer(context_window=8192, max_output=1024, replies=tool_replies()) as provider,
        tempfile.TemporaryDirectory() as folder,
    ):
        config = service_config(str(Path(folder) / "shot.db"), provider, open_access=True)
        with serving(config) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(base + "/")
            page.get_by_test_id("new-conversation").click()
            for text in ("Read the first records.", "Now the next ones.", "And a third batch."):
                page.get_by_test_id("input").fill(text)
                page.get_by_test_id("send").click()
                expect(page.get_by_test_id("send")).to_be_enabled(timeout=30_000)
            page.get_by_test_id("compact").click()
            page.get_by_test_id("compact-confirm").click()
            expect(page.get_by_test_id("compaction")).to_have_count(1, timeout=30_000)
            page.get_by_test_id("input").fill("Summarize what you found.")
            page.get_by_test_id("send").click()
            expect(page.get_by_test_id("send")).to_be_enabled(timeout=30_000)
            page.get_by_test_id("compaction").locator("summary").click()
            page.get_by_test_id("ring").hover()
            page.screenshot(path=str(OUT))
            browser.close()
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
