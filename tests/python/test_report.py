"""One report per experiment (issue 18 items 10 and 11): a `racc reproduce` folder gets one
self-contained report.html (claims table, figures, links to each case's report), `racc plot`
redraws an experiment folder, and long series are drawn as a min/max envelope with the mean. The
page is checked in a real headless browser (Debian's chromium and chromium-driver with selenium,
installed by scripts/test.sh); without them that test skips and says why."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import HAVE_CORE


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    if not HAVE_CORE:
        pytest.skip("racc._core is not built")
    from racc import experiments

    out = tmp_path_factory.mktemp("rep") / "mpcp-dumbbell"
    rep = experiments.reproduce("mpcp-dumbbell", out=out, quick=True, case_plots=True)
    return rep, out


def test_report_html_has_claims_figures_and_case_links(reproduced):
    rep, out = reproduced
    page = (out / "report.html").read_text()
    assert (
        page.count("<tr class='claim'>")
        == len(rep.claims)
        == len(json.loads((out / "claims.json").read_text())["claims"])
    )
    assert page.count("src='data:image/png;base64,") == len(rep.figures) >= 1
    for case in rep.results:
        assert f"href='{case}/report.html'" in page and (out / case / "report.html").exists()
    assert "src='http" not in page and "href='http" not in page  # self-contained


def test_plot_redraws_an_experiment_folder(reproduced, racc_cli):
    rep, out = reproduced
    (out / "report.html").unlink()
    (out / "claims.json").unlink()
    r = racc_cli("plot", out)
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").exists() and (out / "claims.json").exists()
    assert [c["verdict"] for c in json.loads((out / "claims.json").read_text())["claims"]] == [
        c.verdict for c in rep.claims
    ]


def test_case_plots_are_drawn_only_when_asked(tmp_path):
    """By default a reproduction's cases keep their data but draw no plots of their own (issue 40:
    they cost more CPU than the runs), and the experiment's report links to no missing page."""
    if not HAVE_CORE:
        pytest.skip("racc._core is not built")
    from racc import experiments

    out = tmp_path / "x"
    rep = experiments.reproduce("mpcp-dumbbell", out=out, quick=True, cases=["dpcp"])
    assert (out / "dpcp" / "summary.json").exists()
    assert not (out / "dpcp" / "report.html").exists() and not (out / "dpcp" / "plots").exists()
    assert "href='dpcp/report.html'" not in (out / "report.html").read_text()
    assert rep.figures


def test_long_series_are_drawn_as_an_envelope(tmp_path):
    import math

    from racc.experiments.figures import ENVELOPE_BINS, envelope, panels

    x = [i * 0.1 for i in range(30000)]  # 3000 s sampled every 100 ms
    y = [50 + 50 * math.sin(t) for t in x]
    c, lo, mean, hi = envelope(x, y)
    assert len(c) == ENVELOPE_BINS
    assert all(a <= m <= b for a, m, b in zip(lo, mean, hi, strict=True))
    assert min(lo) == pytest.approx(0, abs=0.01) and max(hi) == pytest.approx(100, abs=0.01)
    path = panels({"case": None}, tmp_path / "q.png", "queue", "pkts", lambda _r: (x, y))
    assert path.stat().st_size > 10_000


def _browser():
    """A headless Chromium driven by selenium, or the reason there is none."""
    try:
        from selenium import webdriver
    except ImportError:
        return None, "selenium is not installed (scripts/test.sh installs it with the test dependencies)"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        return None, "Debian's chromium and chromium-driver are not installed (scripts/test.sh installs them as root)"
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1300,2400"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=opts), ""


def test_report_in_a_headless_browser(reproduced, tmp_path):
    rep, out = reproduced
    browser, why = _browser()
    if browser is None:
        print(f"SKIPPED browser test: {why}")
        pytest.skip(why)
    try:
        browser.get((out / "report.html").resolve().as_uri())
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        images = browser.find_elements("tag name", "img")
        assert len(images) == len(rep.figures)
        for img in images:
            w = browser.execute_script("return arguments[0].naturalWidth", img)
            assert img.is_displayed() and w > 0 and img.size["width"] > 0 and img.size["height"] > 0
        rows = browser.find_elements("css selector", "table.claims tbody tr")
        assert len(rows) == len(rep.claims)
        shot = Path(tmp_path) / "report.png"
        browser.save_screenshot(str(shot))
        print(f"screenshot: {shot}")
    finally:
        browser.quit()
    assert re.search(r"racc reproduce mpcp-dumbbell", (out / "report.html").read_text())
