"""estimate, calibrate and lint: the loop from a planning figure to a measured one."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml
from conftest import CONTENT, ROOT, B, Built, build, make_content, run_cli

FIX = ROOT / "tests" / "fixtures" / "calibration"
P70 = 70_553_706_496


def test_estimate_matches_the_article(site):
    result = run_cli(
        "estimate",
        "--content",
        str(CONTENT),
        "--model",
        "llama-3.3-70b",
        "--method",
        "lora",
        "--tokens",
        "20M",
        "--setup",
        "nodus:b200x1",
        "--runs",
        "3",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    hours = 6 * P70 * 20e6 / (2250e12 * 0.3 * 3600)
    assert row["hours"] == pytest.approx(hours)
    assert row["cost_with_startup"] == pytest.approx((hours + 0.25) * 5.50)
    assert row["total"] == pytest.approx(3 * (hours + 0.25) * 5.50)
    page_row = next(r for r in site.table(B, "run-cost") if r[0] == "LoRA, 1 × B200")
    assert page_row[1:4] == ["3.5", "$19.16", "$20.54"]
    table = run_cli(
        "estimate",
        "--content",
        str(CONTENT),
        "--model",
        "llama-3.3-70b",
        "--method",
        "lora",
        "--tokens",
        "20_000_000",
        "--setup",
        "nodus:b200x1",
    )
    assert "$19.16" in table.output and "$20.54" in table.output


def test_estimate_names_each_setup_as_setup_takes_it_once():
    """The table's first column is what --setup takes (it printed "Nodus:b200x1", which --setup refused), and a
    setup named twice is one row."""
    base = ["estimate", "--content", str(CONTENT), "--model", "llama-3.3-70b", "--method", "lora", "--tokens", "20M"]
    for form in ("table", "markdown"):
        result = run_cli(*base, "--setup", "nodus:b200x1", "--setup", "nodus:b200x1", "--format", form)
        assert result.exit_code == 0, result.output
        rows = [line for line in result.output.splitlines() if "B200" in line]
        assert len(rows) == 1 and rows[0].lstrip("| ").startswith("nodus:b200x1 ")
        assert "Nodus:" not in result.output
    again = run_cli(*base, "--setup", rows[0].lstrip("| ").split()[0], "--format", "json")
    assert again.exit_code == 0 and [r["setup"] for r in json.loads(again.output)] == ["nodus:b200x1"]


def test_estimate_ranks_every_fitting_setup():
    result = run_cli(
        "estimate",
        "--content",
        str(CONTENT),
        "--model",
        "llama-3.3-70b",
        "--method",
        "full",
        "--tokens",
        "1.5B",
        "--format",
        "json",
    )
    rows = json.loads(result.output)
    costs = [r["cost_with_startup"] for r in rows]
    assert costs == sorted(costs) and rows
    assert all(r["fits"] for r in rows)
    # full AdamW state (1,189 GB) fits only on 8 × B200 among the snapshots
    assert {r["gpus"] for r in rows} == {"8 × B200"}
    assert rows[0]["tokens"] == 1.5e9


def test_estimate_ranks_by_the_runs_cost_not_the_hourly_price():
    """QLoRA of Llama 3.3 70B, 20 M tokens, on Nodus's one-GPU offers: the dearest hour (the B200's) makes the
    cheapest run, and the cheapest hour (the A100's) the dearest; each cost worked out here from the rule."""
    ops = 6 * 70_553_706_496 * 20e6
    cost = {
        key: (ops / (peak * 1e12 * 0.3 * 3600) + 0.25) * price
        for key, peak, price in (("b200x1", 2250, 5.50), ("h100x1", 989, 2.60), ("a100-80gbx1", 312, 1.09))
    }
    assert [f"{cost[k]:.2f}" for k in ("b200x1", "h100x1", "a100-80gbx1")] == ["20.54", "21.26", "27.66"]
    result = run_cli("estimate", "--content", str(CONTENT), "--model", "llama-3.3-70b", "--method", "qlora",
                     "--tokens", "20M", "--provider", "nodus", "--format", "json")  # fmt: skip
    rows = [(r["setup"], round(r["cost_with_startup"], 2)) for r in json.loads(result.output)]
    one_gpu = [row for row in rows if row[0].endswith("x1")]
    assert one_gpu == [(f"nodus:{k}", round(cost[k], 2)) for k in ("b200x1", "h100x1", "a100-80gbx1")]


def test_estimate_ranks_only_the_providers_and_gpus_named():
    """`--provider` and `--gpu` narrow the ranking to what a writer is choosing between; without them a user
    read 40 rows to find one provider's."""
    import yaml

    base = ["estimate", "--content", str(CONTENT), "--model", "llama-3.2-1b", "--method", "full", "--tokens", "1M"]
    picked = run_cli(*base, "--provider", "nodus", "--provider", "lambda", "--gpu", "h100", "--format", "json")
    assert picked.exit_code == 0, picked.output
    expected = set()
    for provider in ("nodus", "lambda"):
        newest = yaml.safe_load(sorted((CONTENT / "prices" / provider).glob("*.yaml"))[-1].read_text())
        expected |= {f"{provider}:h100x{o['count']}" for o in newest["offers"] if o["gpu"] == "h100"}
    rows = json.loads(picked.output)
    assert {r["setup"] for r in rows} == expected and len(expected) > 2
    everything = json.loads(run_cli(*base, "--format", "json").output)
    assert [r for r in everything if r["setup"] in expected] == rows  # the same figures, in the same order
    for args, line in (
        (["--provider", "nodu"], "error: --provider: unknown provider 'nodu'; known: aws, azure, gcp, lambda, "),
        (["--gpu", "h10"], "error: --gpu: unknown GPU 'h10'; known: a100-40gb, a100-80gb, b200, "),
        (["--gpu", "h100", "--setup", "nodus:h100x1"], "error: --gpu: not with --setup, which names the setups"),
        (["--provider", "nodus", "--gpu", "l40s"], "error: no offer of Nodus with L40S GPUs in the newest price"),
    ):
        result = run_cli(*base, *args)
        assert result.exit_code == 1 and result.output.startswith(line), result.output
        assert result.output.count("\n") == 1


def test_estimate_bad_input():
    result = run_cli("estimate", "--content", str(CONTENT), "--model", "gpt-9", "--method", "lora", "--tokens", "1M")
    assert result.exit_code == 1 and "--model: unknown model 'gpt-9'" in result.output


def test_a_job_no_offer_holds_is_answered_with_the_nearest_and_what_it_would_need():
    """It said "no offer holds the training state of this model and method on every GPU", and no more."""
    args = ["--content", str(CONTENT), "--model", "llama-3.1-405b", "--method", "full"]
    result = run_cli("estimate", *args, "--tokens", "1B")
    # the largest GPUs priced are B200s, 8 to an offer; Nebius's and Nodus's tie, and the first by name is named
    memory = run_cli("memory", *args, "--gpu", "b200", "--count", "8", "--format", "json")
    need = json.loads(memory.output)
    assert need["fits"] is False and need["gpu_memory_gb"] == 180
    assert result.exit_code == 1 and result.output == (
        "error: no offer we have prices for holds Llama 3.1 405B with full fine-tune, AdamW: the nearest, "
        f"nebius:b200x8 (8 × B200), would need {need['per_gpu_gb']:,.1f} GB on each GPU of 180 GB (costpress memory "
        "shows the parts; --setup prices a setup that does not hold it)\n"
    )
    # 405 B parameters with bf16 weights and gradients and fp32 Adam moments and master weights, 16 bytes each,
    # sharded 8 ways: at least 810 GB a GPU before activations
    assert need["per_gpu_gb"] > 405e9 * 16 / 8 / 1e9


def test_an_unknown_setup_is_answered_with_the_setups_that_exist():
    """`--setup runpod:l40sx1` said only "expected provider:gpuxcount, e.g. nodus:b200x1", which it was. The
    line now names the provider's offers and who offers that GPU, from the newest snapshots."""
    import yaml

    newest = {p.name: yaml.safe_load(sorted(p.glob("*.yaml"))[-1].read_text()) for p in (CONTENT / "prices").iterdir()}
    keys = {name: [f"{name}:{o['gpu']}x{o['count']}" for o in snap["offers"]] for name, snap in newest.items()}
    base = ["estimate", "--content", str(CONTENT), "--model", "qwen2.5-32b", "--method", "qlora", "--tokens", "1M"]
    result = run_cli(*base, "--setup", "runpod:l40sx1")
    l40s = sorted(k for name, ks in keys.items() if name != "runpod" for k in ks if k.split(":")[1].startswith("l40sx"))
    assert l40s and "l40s" not in " ".join(keys["runpod"])
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "Traceback" not in result.output
    assert result.output == (
        f"error: --setup: {newest['runpod']['name']} has no offer 'runpod:l40sx1'; its offers: "
        f"{', '.join(keys['runpod'])}; l40s elsewhere: {', '.join(l40s)}\n"
    )
    typo = run_cli(*base, "--setup", "rundpod:h100x1")
    assert typo.exit_code == 1 and "no provider 'rundpod'" in typo.output
    assert typo.output.rstrip().endswith(f"known: {', '.join(sorted(keys))}")


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--startup-hours", "nan", "'nan' is not a number"),
        ("--startup-hours", "inf", "inf is not in the range 0<=x<=10000"),
        ("--startup-hours", "1e308", "is not in the range 0<=x<=10000"),
        ("--utilization", "NaN", "'NaN' is not a number"),
        ("--utilization", "1e-300", "is not in the range 1e-06<=x<=1"),  # hours too large for a Decimal
        ("--runs", "1" + "0" * 400, "is not in the range 1<=x<=1000000"),
    ],
)
def test_estimate_refuses_numbers_it_cannot_print(option, value, words):
    """NaN passes click's range checks (every comparison with it is false) and inf or 1e308 passed an open
    range: each ended in a traceback when the table was formatted."""
    base = ["estimate", "--content", str(CONTENT), "--model", "llama-3.3-70b", "--method", "lora", "--tokens", "1M"]
    result = run_cli(*base, option, value)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"Invalid value for '{option}'" in result.output and words in result.output


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ("1,nan,5\n2,nan,5", "s.csv:2: seconds: expected a finite number of at least 0, got 'nan'"),
        ("1,1,5\n2,inf,5", "s.csv:3: seconds: expected a finite number"),
        ("1,-1,5\n2,3,5", "s.csv:2: seconds: expected a finite number of at least 0, got '-1'"),
        ("x,1,5", "s.csv:2: step: expected a whole number, got 'x'"),
        ("1,1,1e300", "tokens 1e+300; expected 1 to 1e+15 for a measured run"),
        ("1,1e300,5", "seconds 1e+300; expected 1e-06 to 1e+15"),
        ("1,1e-300,5", "seconds 1e-300; expected 1e-06 to 1e+15"),
        ("1,1,5\n2,1," + "5" * 200_000, "s.csv:3: expected a CSV with columns step, seconds, tokens (field larger"),
    ],
)
def test_calibrate_refuses_a_log_that_cannot_be_a_run(tmp_path, rows, words):
    """Each of these ended in a traceback (a NaN or an infinity formatted, or a number too long for a
    Decimal); now one line naming the file, and the row where one is to blame."""
    log = tmp_path / "s.csv"
    log.write_text("step,seconds,tokens\n" + rows + "\n")
    args = ["calibrate", "--csv", str(log), "--id", "x", "--model", "llama-3.3-70b", "--method", "lora"]
    result = run_cli(*args, "--gpu", "h100", "--out", "-", "--content", str(CONTENT))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert words in result.output, result.output


def test_calibrate_refuses_running_totals_and_takes_steady_steps(tmp_path):
    """A log of elapsed seconds and tokens seen so far was summed as if each row were one step: 10, 20, 30, 40 s
    and 40k..160k tokens gave 4,000 tokens/s by luck, and 10, 20, 30 s with 40k, 100k, 130k tokens gave
    2,700 where the run made 4,333. Running totals are refused; per-step rows that vary are taken."""
    args = ["--id", "x", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h100", "--out", "-"]
    log = tmp_path / "totals.csv"
    log.write_text("step,seconds,tokens\n1,10,40000\n2,20,100000\n3,30,130000\n")
    result = run_cli("calibrate", "--csv", str(log), *args, "--content", str(CONTENT))
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output == (
        f"error: {log}: seconds and tokens grow on every row (10.0 to 30.0 s, 40,000 to 130,000 tokens), as "
        "running totals do; expected each step's own seconds and tokens (the differences between consecutive rows)\n"
    )
    steps = tmp_path / "steps.csv"  # the same run, step by step (two rows that each grow stay steps)
    steps.write_text("step,seconds,tokens\n1,10,40000\n2,10,60000\n3,10,30000\n")
    taken = run_cli("calibrate", "--csv", str(steps), *args, "--content", str(CONTENT))
    assert taken.exit_code == 0 and f"tokens_per_second: {130_000 / 30:.2f}" in taken.output, taken.output
    two = tmp_path / "two.csv"
    two.write_text("step,seconds,tokens\n1,10,40000\n2,25,90000\n")
    assert run_cli("calibrate", "--csv", str(two), *args, "--content", str(CONTENT)).exit_code == 0


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ("[]", "trainer_state.json: expected a JSON object, as the Trainer writes, got a list"),
        ('{"log_history": [1, 2]}', "trainer_state.json: log_history: expected a list of log entries (objects)"),
        ('{"log_history": "x"}', "trainer_state.json: log_history: expected a list of log entries (objects)"),
        ("[" * 100_000 + "]" * 100_000, "trainer_state.json: cannot read as JSON (nested too deeply)"),
    ],
)
def test_calibrate_refuses_a_trainer_log_of_another_shape(tmp_path, state, words):
    """The first, second and last of these ended in a traceback (a list has no .get, an int is not iterable,
    the JSON decoder's recursion); the third was read letter by letter."""
    (tmp_path / "trainer_state.json").write_text(state)
    args = ["calibrate", "--trainer", str(tmp_path), "--id", "x", "--model", "llama-3.3-70b", "--method", "lora"]
    result = run_cli(*args, "--gpu", "h100", "--out", "-", "--content", str(CONTENT))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert words in result.output, result.output


def test_calibrate_refuses_a_time_that_is_not_a_number(tmp_path):
    args = ["calibrate", "--tokens", "2M", "--id", "x", "--model", "llama-3.3-70b", "--method", "lora"]
    result = run_cli(*args, "--gpu", "h100", "--seconds", "nan", "--out", "-")
    assert result.exit_code == 2 and "'nan' is not a number" in result.output, result.output


@pytest.mark.parametrize(
    ("args", "tokens", "seconds"),
    [
        (["--trainer", str(FIX / "hf-trainer"), "--sequence-length", "2048"], 320 * 1 * 2048, 128.0),
        (["--trainer", str(FIX / "hf-trainer-tokens")], 1_200_000, 400.0),
        (["--csv", str(FIX / "steps.csv"), "--skip-steps", "2"], 8 * 16384, 8 * 4.0),
        (["--tokens", "2M", "--seconds", "1000"], 2_000_000, 1000.0),
    ],
)
def test_calibrate_makes_a_record_an_article_uses(tmp_path, args, tokens, seconds):
    content = make_content(tmp_path)
    result = run_cli(
        "calibrate",
        "--content",
        str(content),
        *args,
        "--id",
        "measured-8b-lora",
        "--model",
        "llama-3.1-8b",
        "--method",
        "lora",
        "--gpu",
        "h100",
        "--count",
        "1",
    )
    assert result.exit_code == 0, result.output
    tps = tokens / seconds
    util = 6 * 8_030_261_248 * tps / 989e12
    assert f"{tps:,.2f} tokens/s, {util:.1%} of dense peak" in result.output
    record = yaml.safe_load((content / "benchmarks" / "measured-8b-lora.yaml").read_text())["benchmarks"][0]
    assert record["tokens_per_second"] == round(tps, 2)
    article = (content / "articles" / "dgx-spark-70b-qlora-cost.md").read_text()
    article = (
        article.replace("slug: dgx-spark-70b-qlora-cost", "slug: measured-run")
        .replace("benchmark: spark-llama-3.3-70b-qlora", "benchmark: measured-8b-lora")
        .replace("offer: spark-rental:dgx-sparkx1", 'offer: "nodus:h100x1"')
        .replace("compare_benchmarks: [spark-llama-3.2-3b-full, spark-llama-3.1-8b-lora]", "compare_benchmarks: []")
    )
    article = article.split("\n---\n")[0] + '\n---\n{{ table("estimates") }}\n'
    (content / "articles" / "measured-run.md").write_text(article)
    built, out = build(tmp_path, content)
    assert built.exit_code == 0, built.output
    hours = 100e6 / round(tps, 2) / 3600
    assert ["100 M", f"{hours:,.1f}", f"${hours * 2.60:,.2f}"] in Built(out).table("measured-run", "estimates")


def test_lint_reports_implied_utilization():
    result = run_cli("lint", "--content", str(CONTENT))
    assert result.exit_code == 0
    rate = 6 * P70 * 759.79 / 1e12
    assert (
        f"759.79 tokens/s × 6 operations × 70.55 B parameters = {rate:,.1f} TFLOPS, {rate / 125:.0%}" in result.output
    )
    assert "0 not acknowledged" in result.output
    # the Nebius catalog states host memory as GPU memory; the importer acknowledges it in the snapshot
    assert (
        "nebius:h100x1: the catalog says 200 GB per GPU, but an H100 SXM has 80 GB; costpress uses 80" in result.output
    )
    assert ": ok: " not in result.output  # checks that passed are printed with --verbose only
    newest = max(dt.date.fromisoformat(p.stem) for p in (CONTENT / "prices").glob("*/*.yaml"))
    age = (newest - dt.date(2026, 11, 5)).days
    verbose = run_cli("lint", "--verbose", "--content", str(CONTENT)).output
    line = f"content/prices/nodus/2026-11-05.yaml: ok: {age} days older than the newest snapshot (limit 180 days)"
    assert line in verbose
    assert set(result.output.splitlines()) < set(verbose.splitlines())
    assert result.output.splitlines()[-1] == verbose.splitlines()[-1]  # the same summary


def test_unacknowledged_lint_flag_is_a_build_warning(tmp_path):
    content = make_content(
        tmp_path,
        {
            "benchmarks.yaml": lambda t: t.replace(
                "    acknowledged: Kept to show what the Chinese edition implies; no article uses it.\n", "", 1
            )
        },
    )
    result, _ = build(tmp_path, content)
    assert result.exit_code == 0
    assert "warning: " in result.output and "spark-llama-3.2-3b-full-zh: flag: 82,739.20 tokens/s" in result.output
    strict = run_cli("lint", "--strict", "--content", str(content))
    assert strict.exit_code == 1


def test_sensitivity_range(site):
    text = site.text(B)
    lo = (6 * P70 * 20e6 / (2250e12 * 0.5 * 3600) + 0.25) * 5.50
    hi = (6 * P70 * 20e6 / (2250e12 * 0.15 * 3600) + 0.25) * 5.50
    assert (f"{lo:.2f}", f"{hi:.2f}") == ("12.87", "39.70")
    assert f"the LoRA, 1 × B200 run costs from ${lo:.2f} to ${hi:.2f}, startup included" in text
    assert f"a factor of {hi / lo:.1f}×" in text
    row = next(r for r in site.table(B, "run-cost") if r[0] == "LoRA, 1 × B200")
    assert row[4:] == [f"${lo:.2f}", f"${hi:.2f}"]


def test_sources_block_lists_every_input(site):
    for slug, expected in [
        (B, "Hourly price, 1 × B200: $5.50"),
        (B, "Dense BF16 peak, B200: 2,250 TFLOPS"),
        (B, "Utilization, planning figure: 30%"),
        (B, "Parameters, Llama 3.3 70B: 70,553,706,496"),
    ]:
        items = [" ".join(li.get_text(" ").split()) for li in site.html(slug).select("section.sources li")]
        assert any(i.startswith(expected) for i in items), expected
    # a price's date as its snapshot gives it, in the source's own words: read on a day, or imported
    items = [" ".join(li.get_text(" ").split()) for li in site.html(B).select("section.sources li")]
    assert "Hourly price, 1 × B200: $5.50 . Nodus: Nodus pricing page (checked 2026‑11‑05)" in items


def test_figures_json_entry_is_what_json_dumps_writes(monkeypatch):
    """Each figure line is built by hand for speed; it must be exactly json.dumps of the figure."""
    from generator import figures_json
    from generator.claims import claim_line_once
    from generator.model import Figure

    def figures_chunk(*args) -> str:
        return b"".join(figures_json.figures_entry(*args)).decode("utf-8")

    hostile = 'q"uote \\ back\\slash </script> \u2028 \x01 ünï 🙂'
    figures = [
        Figure("table.b.10M tokens.hours", 0.1 + 0.2, "hours"),
        Figure(hostile, -0.0, hostile, (hostile, "input.a")),
        Figure("input.tiny", 5e-324, "USD"),
        Figure("input.huge", 1.7976931348623157e308, "USD"),
        Figure("count", 7, "number"),
        Figure("a.first", 1e16, "USD", ("x",)),
    ]
    chunk = figures_chunk("a-slug", hostile, figures, [dt.date(2026, 11, 30)])
    lines = chunk.split("\n")
    expected = [
        json.dumps(
            {"id": f.id, "inputs": list(f.inputs), "unit": f.unit, "value": f.value},
            sort_keys=True,
            ensure_ascii=False,
            allow_nan=False,
        )
        for f in sorted(figures, key=lambda f: f.id)
    ]
    start = lines.index('  "figures": [') + 1
    assert [line.strip().rstrip(",") for line in lines[start : start + len(figures)]] == expected
    assert lines[start + len(figures)] == "  ],"
    assert json.loads("{" + chunk + "}")["a-slug"]["title"] == hostile
    stated = figures_chunk("s", "t", figures, [], [("best.label", hostile), ("rank", "4")])
    assert json.loads("{" + stated + "}")["s"]["claims"] == [
        {"id": "best.label", "subject": hostile},
        {"id": "rank", "subject": "4"},
    ]
    # a large listing's entry is made in pieces of a few thousand lines: the same bytes
    many = [Figure(f"row{i % 7}.{i}", i / 3, "USD") for i in range(23)]
    claims = [(f"c{i}", f"{hostile} {i}") for i in range(9)]
    cases = ((many, claims), (many, []), ([], claims), ([], []))
    wholes = [figures_chunk("s", hostile, figs, [dt.date(2026, 11, 30)], stated).encode() for figs, stated in cases]
    for size in (1, 4, 100):
        monkeypatch.setattr(figures_json, "PIECE_LINES", size)
        for (figs, stated_claims), whole in zip(cases, wholes, strict=True):
            day = [dt.date(2026, 11, 30)]
            pieces = figures_json.figures_entry("s", hostile, figs, day, stated_claims, claim_line_once)
            assert b"".join(pieces) == whole
            assert len(pieces) >= 3 + (len(figs) + size - 1) // size
    with pytest.raises(ValueError):
        figures_chunk("s", "t", [Figure("nan", float("nan"), "USD")], [])
    with pytest.raises(ValueError):
        figures_chunk("s", "t", [Figure("inf", float("inf"), "USD")], [])


def test_a_command_that_writes_nothing_does_not_say_nothing_was_written(tmp_path):
    """Only where the command would have written something does the summary say that nothing was."""
    content = make_content(tmp_path)
    (content / "hardware.yaml").unlink()
    lint = run_cli("lint", "--content", str(content))
    assert lint.exit_code == 1 and lint.output.rstrip().endswith("1 problem found."), lint.output
    built = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"))
    assert built.exit_code == 1 and built.output.rstrip().endswith("1 problem found; nothing was written.")
