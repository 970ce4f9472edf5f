"""The Markdown pages build inside a throwaway Hugo site with their tables and charts intact."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from bs4 import BeautifulSoup
from conftest import A, B
from tools import HUGO, need

SLUGS = [A, B, "70b-fine-tune-across-clouds", "mlperf-llama2-70b-lora-cost"]


@pytest.fixture(scope="module")
def hugo_site(site, tmp_path_factory):
    need(HUGO, "Hugo (Debian package hugo)")
    root = tmp_path_factory.mktemp("hugo")
    (root / "hugo.toml").write_text('baseURL = "https://example.org/"\ntitle = "test"\n')
    layouts = root / "layouts" / "_default"
    layouts.mkdir(parents=True)
    (layouts / "single.html").write_text("<html><body><h1>{{ .Title }}</h1>{{ .Content }}</body></html>\n")
    (layouts / "list.html").write_text("<html><body>{{ range .Pages }}{{ .Title }}{{ end }}</body></html>\n")
    for slug in SLUGS:
        bundle = root / "content" / "posts" / slug
        bundle.mkdir(parents=True)
        for path in (site.out / slug).iterdir():
            if path.suffix in (".md", ".svg", ".csv"):
                shutil.copy(path, bundle / path.name)
    done = subprocess.run(
        [HUGO, "--quiet", "-s", str(root), "-d", str(root / "public")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return root / "public"


@pytest.mark.parametrize("slug", SLUGS)
def test_tables_and_charts_survive_hugo(site, hugo_site, slug):
    md = site.md(slug)
    page = hugo_site / "posts" / slug / "index.html"
    soup = BeautifulSoup(page.read_text(), "html.parser")
    assert soup.find("h1").get_text() == re.search(r'^title: "(.*)"$', md, re.M).group(1).replace('\\"', '"')
    assert len(soup.find_all("table")) == md.count("\nTable: ")
    images = [img["src"] for img in soup.find_all("img")]
    assert len(images) == md.count("\n![") > 0
    for src in images:
        assert src.endswith(".svg") and (hugo_site / "posts" / slug / src).is_file()
    assert "raw HTML omitted" not in page.read_text()
    if "```" in md:
        assert soup.find("code", class_=re.compile("language-")), "fenced code lost its language"


def test_a_listing_survives_hugo(site, tmp_path):
    """A family's listing, copied in as a page bundle, becomes a Hugo page with its table and its links."""
    need(HUGO, "Hugo (Debian package hugo)")
    slug = "fine-tune-70b-every-setup"
    (tmp_path / "hugo.toml").write_text('baseURL = "https://example.org/"\ntitle = "test"\n')
    layouts = tmp_path / "layouts" / "_default"
    layouts.mkdir(parents=True)
    (layouts / "single.html").write_text("<html><body><h1>{{ .Title }}</h1>{{ .Content }}</body></html>\n")
    (layouts / "list.html").write_text("<html><body></body></html>\n")
    bundle = tmp_path / "content" / "posts" / slug
    bundle.mkdir(parents=True)
    for name in ("index.md", "combinations.csv"):
        shutil.copy(site.out / slug / name, bundle / name)
    done = subprocess.run([HUGO, "--quiet", "-s", str(tmp_path), "-d", str(tmp_path / "public")], capture_output=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "public" / "posts" / slug / "index.html").read_text()
    soup = BeautifulSoup(page, "html.parser")
    assert soup.find("h1").get_text() == site.html(slug).find("h1").get_text()
    assert len(soup.find_all("table")) == site.md(slug).count("\nTable: ") == 1
    rows = soup.find("table").find_all("tr")
    assert len(rows) == len(site.table(slug, "fits-llama-3-3-70b"))
    assert all(tr.a["href"].startswith("../llama-3-3-70b-") for tr in rows[1:])
    assert "raw HTML omitted" not in page
