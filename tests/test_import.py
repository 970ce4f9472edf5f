"""Importing the SkyPilot catalog extracts in tests/fixtures/catalogs (real files, quirks kept)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import yaml
from conftest import CONTENT, TEMPLATES, make_content, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "catalogs"


def catalog(cloud: str) -> Path:
    return next(FIXTURES.glob(f"skypilot-catalog-{cloud}-*.csv"))


def run_import(tmp_path, path: Path, provider: str):
    out = tmp_path / "prices"
    result = run_cli(
        "import-prices",
        "skypilot",
        str(path),
        "--provider",
        provider,
        "--checked",
        "2026-11-29",
        "--out",
        str(out),
        "--content",
        str(CONTENT),
    )
    target = out / provider / "2026-11-29.yaml"
    return result, (yaml.safe_load(target.read_text()) if target.exists() else None)


def offers(doc) -> dict:
    return {(o["gpu"], o["count"]): o for o in doc["offers"]}


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp", "lambda", "nebius", "runpod"])
def test_every_extract_imports_and_builds(tmp_path, cloud):
    result, doc = run_import(tmp_path, catalog(cloud), cloud)
    assert result.exit_code == 0, result.output
    assert doc["provider"] == cloud and doc["checked"].isoformat() == "2026-11-29"
    content = make_content(
        tmp_path / "c",
        {f"prices/{cloud}/2026-11-29.yaml": (tmp_path / "prices" / cloud / "2026-11-29.yaml").read_text()},
    )
    built = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert built.exit_code == 0, built.output


def test_known_prices(tmp_path):
    _, gcp = run_import(tmp_path, catalog("gcp"), "gcp")
    g = offers(gcp)
    # host VM + GPU part in the same zone: a2-ultragpu-8g in us-central1
    assert g[("a100-80gb", 8)]["usd_per_hour"] == pytest.approx(23.57, abs=0.005)
    assert g[("h100", 8)]["usd_per_hour"] == pytest.approx(43.07, abs=0.005)  # the anomalous us-central1 row
    assert ("b200", 8) not in g  # GPU rows only, no a4 host VM: no full price
    _, lam = run_import(tmp_path, catalog("lambda"), "lambda")
    assert offers(lam)[("h100", 8)]["usd_per_hour"] == 23.92
    assert offers(lam)[("a100-80gb", 8)]["usd_per_hour"] == 14.32
    assert offers(lam)[("h100-pcie", 1)]["instance_type"] == "gpu_1x_h100_pcie"
    _, neb = run_import(tmp_path, catalog("nebius"), "nebius")
    assert offers(neb)[("b200", 8)]["usd_per_hour"] == 44.0
    assert offers(neb)[("h100", 8)]["spot_usd_per_hour"] == 10.0
    _, rp = run_import(tmp_path, catalog("runpod"), "runpod")
    assert offers(rp)[("h200", 8)]["usd_per_hour"] == 31.92
    assert not any(gpu == "l40s" for gpu, _ in offers(rp))  # spot above on-demand: columns not trusted


def test_aws_and_azure_quirks(tmp_path):
    result, aws = run_import(tmp_path, catalog("aws"), "aws")
    assert "no on-demand price" in result.output  # p5e rows carry only a spot price
    a = offers(aws)
    assert a[("a100-80gb", 8)]["usd_per_hour"] == pytest.approx(40.97, abs=0.01)
    assert a[("h200", 8)]["instance_type"] == "p5en.48xlarge"
    result, azure = run_import(tmp_path, catalog("azure"), "azure")
    assert "Standard_ND96isr_H100_v5: catalog says 12 GPUs, using 8" in result.output
    z = offers(azure)
    assert z[("h100", 8)]["usd_per_hour"] == 98.32
    assert ("h100", 12) not in z
    assert ("h100-nvl", 1) in z


def test_column_order_does_not_matter(tmp_path):
    rows = list(csv.DictReader(catalog("nebius").open()))
    header = list(reversed(list(rows[0])))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header)
    writer.writeheader()
    writer.writerows(rows)
    shuffled = tmp_path / "shuffled.csv"
    shuffled.write_text(buf.getvalue())
    _, one = run_import(tmp_path / "a", catalog("nebius"), "nebius")
    _, two = run_import(tmp_path / "b", shuffled, "nebius")
    assert one["offers"] == two["offers"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Name,Price\nx,1\n", "not a SkyPilot vms.csv: missing column 'InstanceType'"),
        ("InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n", "has a header but no rows"),
        (
            "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\nx,TPU-v5,8,r,1.0,\n",
            "no row maps to a GPU in hardware.yaml",
        ),
        # a traceback before (the csv module's field limit)
        (
            "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\nx,H100,8,r,1.0,\n"
            + "x,H100,8,"
            + "r" * 200_000
            + ",1.0,\n",
            "bad.csv:3: not a SkyPilot vms.csv (field larger than field limit (131072))",
        ),
        # written as it came before, for the build to refuse
        (
            "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\nx,H100,1e300,r,1.0,\n",
            "skipped 1 row: GPU count over 100,000",
        ),
    ],
)
def test_bad_catalogs_fail_clearly(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    result, doc = run_import(tmp_path, path, "x")
    assert result.exit_code == 1 and message in result.output and doc is None
    assert "Traceback" not in result.output


def test_rows_of_an_unmapped_accelerator_say_which_key_would_map_them(tmp_path):
    path = tmp_path / "vms.csv"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n"
        "a,H100,8,r,20.0,\nb,TPU-v5,8,r,9.0,\nc,TPU-v5,4,r,5.0,\n"
    )
    result, doc = run_import(tmp_path, path, "x")
    assert result.exit_code == 0 and [o["gpu"] for o in doc["offers"]] == ["h100"], result.output
    assert (
        "skipped 2 rows with accelerators hardware.yaml does not map (a GPU's catalog_names or "
        "catalog_instances would): TPU-v5 (2)\n"
    ) in result.output


def test_out_dash_prints_the_snapshot_it_would_write(tmp_path, monkeypatch):
    """`--out -` made a folder named '-' in the working folder; as calibrate's, it now prints the snapshot (the
    summary goes to stderr), the same bytes an import into a folder writes."""
    result, doc = run_import(tmp_path, catalog("lambda"), "lambda")
    assert result.exit_code == 0 and doc is not None
    monkeypatch.chdir(tmp_path)
    args = ["import-prices", "skypilot", str(catalog("lambda")), "--provider", "lambda", "--checked", "2026-11-29"]
    printed = run_cli(*args, "--out", "-", "--content", str(CONTENT))
    assert printed.exit_code == 0, printed.output
    # the name is the provider's latest snapshot's in --content (the folder import had none, so it took the id)
    written = (tmp_path / "prices" / "lambda" / "2026-11-29.yaml").read_text()
    assert "\nname: lambda\n" in written and "\nname: Lambda\n" in printed.stdout
    assert printed.stdout == written.replace("\nname: lambda\n", "\nname: Lambda\n")
    assert printed.stderr.startswith("read ") and "wrote" not in printed.stderr
    assert not (tmp_path / "-").exists()


def test_bad_provider_name(tmp_path):
    result = run_cli(
        "import-prices", "skypilot", str(catalog("nebius")), "--provider", "../x", "--checked", "2026-11-29"
    )
    assert result.exit_code == 1 and "--provider" in result.output
