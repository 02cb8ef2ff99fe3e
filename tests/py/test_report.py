"""`vgt report TRACE -o FILE.html`: one self-contained page, opened in headless Chromium (Debian's
`chromium`, installed by tests/setup.sh): its plots (inline SVG with bars) and render-target images (PNG
data URIs that decode) are there, nothing is fetched from elsewhere, and a screenshot is taken."""
import base64
import json
import re
import shutil
import struct
import subprocess
import zlib

import pytest

from conftest import REPO

SECTIONS = ["identity", "submissions", "classes", "work", "macros", "stores", "render-targets"]
PLOTS = ["plot-submissions-time", "plot-methods-per-class", "plot-launches-draws", "plot-store-census"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.fail("headless Chromium is missing: run tests/setup.sh (Debian package chromium)", pytrace=False)


def browser(*args, timeout=120):
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--no-first-run", "--disable-extensions", *args], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def report(vgt, trace, tmp_path, *opts):
    out = tmp_path / (trace.stem + ".html")
    vgt("report", trace, "-o", out, *opts, check=0, timeout=300)
    return out


def rt_count(vgt, trace):
    out = vgt("replay", trace, "--backend", "sim", "--list-rt", "--quiet", check=0).stdout
    return int(re.search(r"render targets \(from the decoded SET_COLOR_TARGET_\* methods\): (\d+)", out).group(1))


@pytest.mark.parametrize("name", ["vk_triangle", "gl_egl"])
def test_report_in_chromium(vgt, tmp_path, name):
    trace = REPO / "corpus" / f"{name}.vgt"
    page = report(vgt, trace, tmp_path)
    html = page.read_text()
    # self-contained: nothing loaded from a URL (the SVG namespace is a name, never fetched)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "url(http" not in html and "@import" not in html and "<link" not in html
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    body = re.search(r"<body([^>]*)>", dom).group(1)
    for s in SECTIONS:
        assert f'id="{s}"' in dom, s
    for p in PLOTS:
        m = re.search(rf'<svg id="{p}"[^>]*>(.*?)</svg>', dom, re.S)
        assert m, p
        assert "<rect" in m.group(1) and 'class="bar' in m.group(1), f"{p} has no bars"
    n_rt = rt_count(vgt, trace)
    assert n_rt >= 1
    imgs = re.findall(r'<img class="rt"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', dom)
    assert len(imgs) == n_rt
    # the browser decoded every image and found bars in every plot (the page's load handler says so)
    assert f'data-images-decoded="{n_rt}"' in body, body
    assert f'data-plots-drawn="{len(PLOTS)}"' in body, body
    # each image is a compressed PNG (zlib, not stored blocks) of the render target's size
    for b64 in imgs:
        png = base64.b64decode(b64)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = struct.unpack(">II", png[16:24])
        idat = png[png.index(b"IDAT") + 4:]
        raw = zlib.decompressobj().decompress(idat)
        assert len(raw) == h * (1 + 4 * w)
        assert len(png) < len(raw) / 4, "the PNG is not compressed"
    # identity and counts on the page agree with the trace
    info = json.loads(vgt("info", "--json", trace, check=0).stdout)
    assert f"<th>records</th><td>{info['records']}</td>" in dom
    assert info["identity"]["gpu_name"] in dom
    total = json.loads(vgt("census", "--json", "--total", trace, check=0).stdout)["total"]
    assert f"{total['methods']} methods." in dom
    assert f"{total['launches']} launches, {total['draws']} draws." in dom
    # and a screenshot of it, as a person would see it
    shot = tmp_path / f"{name}.png"
    browser("--window-size=1100,2600", f"--screenshot={shot}", page.as_uri())
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1100, 2600)


def test_report_no_replay_and_errors(vgt, tmp_path):
    page = report(vgt, REPO / "corpus" / "vadd.vgt", tmp_path, "--no-replay")
    html = page.read_text()
    assert 'id="plot-launches-draws"' in html and "Not replayed" in html and "<img" not in html
    bad = tmp_path / "bad.vgt"
    bad.write_bytes(b"\0" * 100)
    r = vgt("report", bad, "-o", tmp_path / "bad.html")
    assert r.returncode in (1, 2) and "vgt report:" in r.stderr and not (tmp_path / "bad.html").exists()
    r = vgt("report", REPO / "corpus" / "vadd.vgt", "-o", tmp_path / "x.html", "--backend", "nosuch")
    assert r.returncode == 2
