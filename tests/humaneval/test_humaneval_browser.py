"""The annotation page in a real browser (headless Chromium through Selenium): a kit drawn from
ParaBank-Eval's ParaNMT and ParaBank-1 outputs, answered by clicking and by keyboard, reloaded
midway, downloaded as CSV and JSON, and scored back to the Table 4 a hand count gives.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them); skipped where
they are missing unless ``PARAAMR_REQUIRE_BROWSER=1`` (CI), where it fails instead."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest

from paraamr.cli import main

pytestmark = pytest.mark.slow

N = 50
# the page's storage key, in the page's script
STORE = "Object.keys(localStorage).find(k => k.startsWith('paraamr-humaneval:'))"


def _browser(download_dir: Path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    if not (chromium and driver_bin):
        if os.environ.get("PARAAMR_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium and chromedriver are required (apt-get install chromium "
                        "chromium-driver)")  # fmt: skip
        pytest.skip("chromium / chromedriver not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1000,900"):  # fmt: skip
        opts.add_argument(a)
    opts.binary_location = chromium
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(download_dir)}
    )
    return driver


def _wait_file(folder: Path, suffix: str) -> Path:
    for _ in range(100):
        found = [p for p in folder.iterdir() if p.name.endswith(suffix)]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no {suffix} download in {folder}")


def _choice(annotator: str, i: int) -> tuple[int, int | None]:
    """The answers this test gives: a fixed pattern per annotator; ann-a skips the diversity of
    one pair (a page download may hold half-answered pairs)."""
    if annotator == "ann-a":
        return 1 + (i * 7) % 3, None if i == 5 else 1 + (i * 5 + 1) % 3
    return 1 + (i * 2 + 1) % 3, 1 + (i // 2) % 3


@pytest.fixture(scope="module")
def kit(tmp_path_factory, parabank_eval):
    PBE = parabank_eval
    out = tmp_path_factory.mktemp("kit") / "kit"
    main(["humaneval", "sample", f"ParaNMT={PBE}:parabank-eval-paranmt",
          f"ParaBank1={PBE}:parabank-eval-parabank1", "--n", str(N), "--checks", "2",
          "--seed", "3", "--out", str(out)])  # fmt: skip
    return out


def test_page_answers_reload_download_and_score_back(kit, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    key = [json.loads(line) for line in (kit / "key.jsonl").read_text().splitlines()]
    items = len(key)
    assert items == 2 * N + 4
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    d = _browser(downloads)
    try:
        d.get((kit / "annotate.html").resolve().as_uri())
        text = lambda i: d.find_element(By.ID, i).text  # noqa: E731
        keys = lambda *k: ActionChains(d).send_keys(*k).perform()  # noqa: E731
        blur = lambda: d.execute_script("document.activeElement.blur()")  # noqa: E731
        assert text("position") == f"Pair 1 of {items}"
        assert text("progress-text") == f"0 of {items} answered"
        # the page shows the key's pairs in the key's order, sentences and nothing else
        assert text("source") == key[0]["source"] and text("paraphrase") == key[0]["paraphrase"]
        d.find_element(By.ID, "annotator").send_keys("ann-a")
        half = items // 2
        stale = None
        for i in range(items):
            if i == half // 2:  # what localStorage held a while ago
                stale = d.execute_script(f"return localStorage.getItem({STORE})")
                assert stale is not None
            if i == half:  # reload midway: answers, position and annotator id are kept, even
                # when the reloaded page's localStorage misses the last writes (as Chromium's
                # can, for a file:// page), from the tab's sessionStorage copy
                d.execute_script(f"localStorage.setItem({STORE}, arguments[0])", stale)
                d.refresh()
                assert text("progress-text") == f"{half - 1} of {items} answered"  # pair 5 half
                assert text("position") == f"Pair {half + 1} of {items}"
                assert d.find_element(By.ID, "annotator").get_attribute("value") == "ann-a"
                blur()
                keys(Keys.ARROW_LEFT)
                sim, div = _choice("ann-a", half - 1)
                assert d.find_element(By.ID, f"similarity-{sim}").is_selected()
                assert d.find_element(By.ID, f"diversity-{div}").is_selected()
                keys(Keys.ARROW_RIGHT)
            assert text("position") == f"Pair {i + 1} of {items}"
            assert text("source") == key[i]["source"]
            sim, div = _choice("ann-a", i)
            if i % 2 == 0:  # by clicking the labels, then the Next button
                d.find_element(By.CSS_SELECTOR, f"label[for=similarity-{sim}]").click()
                if i == half:  # a reload right after an answer keeps that answer
                    d.refresh()
                    assert text("position") == f"Pair {half + 1} of {items}"
                    assert d.find_element(By.ID, f"similarity-{sim}").is_selected()
                if div is not None:
                    d.find_element(By.CSS_SELECTOR, f"label[for=diversity-{div}]").click()
                if i < items - 1:
                    d.find_element(By.ID, "next").click()
            else:  # by keyboard: the second answer moves on to the next pair by itself
                blur()
                keys(str(sim))
                if div is None:
                    keys(Keys.ARROW_RIGHT)
                else:
                    keys(str(div))
        assert text("progress-text") == f"{items - 1} of {items} answered"
        d.find_element(By.ID, "download-csv").click()
        csv_file = _wait_file(downloads, ".csv")

        # a second annotator in a fresh browser profile: keyboard only, JSON download
        d.quit()
        d = _browser(downloads)
        d.get((kit / "annotate.html").resolve().as_uri())
        assert text("progress-text") == f"0 of {items} answered"
        d.find_element(By.ID, "download-json").click()  # refused: no annotator id yet
        assert "annotator id" in text("status")
        d.find_element(By.ID, "annotator").send_keys("ann-b")
        blur()
        for i in range(items):
            sim, div = _choice("ann-b", i)
            keys(str(sim), str(div))
        d.find_element(By.ID, "download-json").click()
        json_file = _wait_file(downloads, ".json")

        # inside a radio group the arrows move the choice, as in any form (not the pair)
        d.find_element(By.ID, "similarity-2").click()
        keys(Keys.ARROW_DOWN)
        assert d.find_element(By.ID, "similarity-1").is_selected()
        assert text("position") == f"Pair {items} of {items}"

        # accessible: keyboard focus is visible; at 320 px nothing scrolls sideways
        d.find_element(By.ID, "annotator").click()
        keys(Keys.TAB)
        outline = d.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
        assert outline not in ("none", "")
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": 320, "height": 700, "deviceScaleFactor": 1,
                           "mobile": True})  # fmt: skip
        d.refresh()
        width = d.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert width[0] <= width[1] == 320
        errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        d.quit()

    rows = list(csv_file.read_text().splitlines())
    assert rows[0] == "kit,annotator,item_id,similarity,diversity,answered_at"
    assert len(rows) == 1 + items
    out = tmp_path / "table4"
    main(["humaneval", "score", "--dir", str(kit), str(csv_file), str(json_file), "--out",
          str(out), "--bootstrap", "0", "--no-wandb"])  # fmt: skip
    got = {
        (r["corpus"], r["question"]): r
        for r in json.loads((out / "table4.json").read_text())["rows"]
    }

    # by hand: what this test chose, per corpus and question, checks left out
    expected: dict[tuple[str, str], Counter] = {}
    for i, k in enumerate(key):
        if k["corpus"].startswith("check:"):
            continue
        for who in ("ann-a", "ann-b"):
            for q, s in zip(("similarity", "diversity"), _choice(who, i), strict=True):
                if s is not None:
                    expected.setdefault((k["corpus"], q), Counter())[s] += 1
    assert set(got) == set(expected)
    for cell, c in expected.items():
        total = sum(c.values())
        r = got[cell]
        assert r["n_judgements"] == total
        assert r["n_items"] == N
        for s in (1, 2, 3):
            assert r[f"share_{s}"] == pytest.approx(100 * c[s] / total)
        assert r["average"] == pytest.approx(sum(s * n for s, n in c.items()) / total)
    checks = json.loads((out / "table4.json").read_text())["meta"]["attention_checks"]
    assert {c["annotator"] for c in checks} == {"ann-a", "ann-b"}
    assert all(c["checks_answered"] == 4 for c in checks)
