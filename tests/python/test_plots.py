"""Plots and the HTML report from synthetic frames."""

import base64
import re

import matplotlib.pyplot as plt
import pytest
from racc import plots, report
from racc.results import load, replot
from synth import make_results

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("n_flows", [3, 30])
def test_render_all(tmp_path, n_flows):
    res = make_results(n_flows=n_flows)
    files = plots.render_all(res, tmp_path / "plots")
    names = {p.name for p in files}
    assert names == {"throughput.png", "cwnd.png", "queue.png", "utilisation.png", "fct.png"}
    for p in files:
        data = p.read_bytes()
        assert data.startswith(PNG), p
        # A drawn figure, not an empty canvas: matplotlib reads it back, and it has ink (pixels
        # that differ from the background) in more than a sliver of the image.
        img = plt.imread(p)
        assert img.shape[0] > 200 and img.shape[1] > 300, (p, img.shape)
        ink = (abs(img[..., :3] - img[0, 0, :3]).sum(axis=-1) > 0.1).mean()
        assert ink > 0.02, (p, ink)


def test_no_completions_no_fct_plot(tmp_path):
    files = plots.render_all(make_results(n_done=0), tmp_path)
    assert "fct.png" not in {p.name for p in files}


def test_report_embeds_images(tmp_path):
    res = make_results()
    plots.render_all(res, tmp_path / "plots")
    html = report.write(res, tmp_path / "report.html", tmp_path / "plots").read_text()
    imgs = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
    assert len(imgs) == 5
    assert all(base64.b64decode(b).startswith(PNG) for b in imgs)
    assert "Jain" in html and "r0-&gt;r1" in html and "name = &quot;synthetic&quot;" in html
    assert "http://" not in html and "https://" not in html  # opens offline


def test_save_with_plots_and_replot(tmp_path):
    out = make_results().save(tmp_path / "r", plots=True)
    assert (out / "report.html").stat().st_size > 10000
    first = (out / "plots" / "queue.png").stat().st_mtime_ns
    (out / "plots" / "extra.png").write_bytes(b"junk")
    res = replot(out)
    assert res.name == "synthetic"
    assert not (out / "plots" / "extra.png").exists()
    assert (out / "plots" / "queue.png").stat().st_mtime_ns >= first
    assert load(out).flows.height > 0
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_long_interval_series_are_averaged_for_display():
    import polars as pl

    df = pl.DataFrame(
        {"time_s": [0.1 * (k + 1) for k in range(1000)], "flow": [0] * 1000, "y": [float(k % 2) for k in range(1000)]}
    )
    out, label = plots._coarsen(df, "flow", "goodput (Mb/s)")
    assert out.height == 250 and label == "goodput (Mb/s), 0.4 s means"
    assert out.get_column("y").to_list() == pytest.approx([0.5] * 250)
    small, same = plots._coarsen(df.head(100), "flow", "x")
    assert small.height == 100 and same == "x"
