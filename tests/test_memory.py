"""The memory model against hand arithmetic, and `costpress memory` / `estimate` for every model in content."""

from __future__ import annotations

import json

import pytest
from conftest import CONTENT, make_content, run_cli

from generator.engine.architecture import Architecture
from generator.engine.memory import Job, breakdown

GB = 1e9
LLAMA_8B = Architecture("llama", 128256, 4096, 32, 32, 8, 128, 14336, False)
LLAMA_70B = Architecture("llama", 128256, 8192, 80, 64, 8, 128, 28672, False)


def test_qlora_on_one_gpu_by_hand():
    """Llama 3.1 8B, QLoRA rank 8 on q and v, one GPU, two sequences of 2,048 tokens, checkpointing on."""
    job = Job(LLAMA_8B, weights="nf4", trainable="lora", lora_rank=8, lora_targets=("q", "v"),
              sequence_length=2048, micro_batch=2)  # fmt: skip
    parts = breakdown(job, 24).parts
    total = 8_030_261_248
    embed = 128256 * 4096  # and an output layer of the same size
    norms = 32 * 2 * 4096 + 4096
    kept = 2 * embed + norms  # stays bf16
    nf4 = (4 + 8 / 64 + 32 / (64 * 256)) / 8  # bytes a weight, double quantization
    assert parts["weights"] == pytest.approx((kept * 2 + (total - kept) * nf4) / GB)
    lora = 32 * 8 * ((4096 + 4096) + (4096 + 1024))  # rank x (in + out), q and v, 32 layers
    assert lora == 3_407_872
    assert parts["adapters"] == pytest.approx(lora * 2 / GB)
    assert parts["gradients"] == pytest.approx(lora * 2 / GB)
    assert parts["optimizer"] == pytest.approx(lora * (8 + 4) / GB)  # two fp32 moments, fp32 master
    tokens = 4096
    per_layer = 4 * 4096 + 2 * 4096 + 2 * 1024 + 4 * 14336 + 8 * 2  # values kept per token, plus adapter middles
    assert parts["activations"] == pytest.approx((32 * 4096 * tokens * 2 + per_layer * tokens * 2) / GB)
    assert parts["logits"] == pytest.approx(tokens * 128256 * (2 + 8) / GB)
    assert parts["overhead"] == 1.0


def test_full_fine_tune_sharded_over_eight_gpus_by_hand():
    """Llama 3.3 70B, full fine-tune with AdamW and fp32 master weights, FSDP over 8 GPUs, one 4,096-token sequence."""
    b = breakdown(Job(LLAMA_70B, gpus=8), 180)
    total = 70_553_706_496
    gathered = 2 * total * 2 / 80  # two layers' worth of bf16 weights, unsharded
    assert b.parts["weights"] == pytest.approx((total * 2 / 8 + gathered) / GB)
    assert b.parts["gradients"] == pytest.approx(total * 2 / 8 / GB)
    assert b.parts["optimizer"] == pytest.approx(total * 12 / 8 / GB)
    assert b.parts["adapters"] == 0
    per_layer = 4 * 8192 + 2 * 8192 + 2 * 1024 + 4 * 28672
    assert b.parts["activations"] == pytest.approx((80 * 8192 * 4096 * 2 + per_layer * 4096 * 2) / GB)
    per_gpu = sum(b.parts.values())
    assert 150 < per_gpu < 160 and b.fits  # fits a 180 GB B200 with the 5% reserve
    assert not breakdown(Job(LLAMA_70B, gpus=8), 80).fits  # 8 x 80 GB holds 640 GB, but no GPU holds its share


def test_eight_bit_adam_and_cpu_offload_by_hand():
    """The two terms no other test wrote out: 8-bit Adam's scales, and FSDP's CPU offload (nothing but two
    gathered layers on the GPU). Each could change with only the committed site's comparison noticing."""
    total_8b = 8_030_261_248
    eight_bit = breakdown(Job(LLAMA_8B, optimizer="adamw-8bit"), 80).parts
    # two 1-byte moments per weight, plus an fp32 (4-byte) scale per block of 2,048 values for each; fp32 master
    assert eight_bit["optimizer"] == pytest.approx(total_8b * (2 * 1 + 2 * 4 / 2048 + 4) / GB)
    assert eight_bit["gradients"] == pytest.approx(total_8b * 2 / GB)
    total_70b = 70_553_706_496
    offload = breakdown(Job(LLAMA_70B, gpus=8, weights_on_cpu=True), 80)
    # weights, gradients and optimizer state live in CPU memory; the GPU holds two layers' bf16 weights
    assert offload.parts["weights"] == pytest.approx(2 * (total_70b * 2 / 80) / GB)
    assert offload.parts["gradients"] == offload.parts["optimizer"] == offload.parts["adapters"] == 0
    assert any("offloaded to CPU memory" in note for note in offload.notes)


def test_sharding_divides_and_data_parallel_copies():
    one = breakdown(Job(LLAMA_70B, trainable="lora"), 80).parts
    ddp = breakdown(Job(LLAMA_70B, trainable="lora", gpus=4, sharding="ddp"), 80).parts
    fsdp = breakdown(Job(LLAMA_70B, trainable="lora", gpus=4), 80).parts
    assert ddp == one
    assert fsdp["optimizer"] == pytest.approx(one["optimizer"] / 4)
    assert fsdp["activations"] == one["activations"]  # each GPU runs its own micro-batch


def test_memory_command_answers_for_every_model_and_method():
    import yaml

    models = [m["id"] for m in yaml.safe_load((CONTENT / "models.yaml").read_text())["models"]]
    assert len(models) >= 11
    for model in models:
        for method in ("qlora", "lora", "full", "full-8bit"):
            result = run_cli("memory", "--content", str(CONTENT), "--model", model, "--method", method,
                             "--gpu", "h100", "--count", "8", "--format", "json")  # fmt: skip
            assert result.exit_code == 0, result.output
            doc = json.loads(result.output)
            assert doc["per_gpu_gb"] == pytest.approx(sum(doc["parts"].values()))
            assert doc["fits"] == (doc["per_gpu_gb"] <= doc["gpu_memory_gb"] * 0.95)
            assert (doc["gpu_memory_gb"], doc["usable_gb"]) == (80, pytest.approx(80 * 0.95))  # an H100 less 5%


def test_estimate_answers_for_every_model():
    import yaml

    for m in yaml.safe_load((CONTENT / "models.yaml").read_text())["models"]:
        result = run_cli("estimate", "--content", str(CONTENT), "--model", m["id"], "--method", "qlora",
                         "--tokens", "20M", "--format", "json")  # fmt: skip
        assert result.exit_code == 0, result.output
        rows = json.loads(result.output)
        assert rows and all(r["fits"] for r in rows)


def test_the_question_the_issue_asks():
    """QLoRA of Qwen2.5 32B on one L40S: does it fit, and what does it cost?"""
    text = run_cli("memory", "--content", str(CONTENT), "--model", "qwen2.5-32b", "--method", "qlora", "--gpu", "l40s")
    assert text.exit_code == 0 and "fits: L40S has 48 GB" in text.output
    est = run_cli("estimate", "--content", str(CONTENT), "--model", "qwen2.5-32b", "--method", "qlora",
                  "--tokens", "20M", "--format", "json")  # fmt: skip
    rows = json.loads(est.output)
    assert rows and all(r["fits"] and r["per_gpu_gb"] <= r["gpu_memory_gb"] * 0.95 for r in rows)
    lora = run_cli("estimate", "--content", str(CONTENT), "--model", "llama-3.3-70b", "--method", "lora",
                   "--tokens", "20M", "--setup", "lambda:a100-40gbx4")  # fmt: skip
    assert lora.exit_code == 0 and "does not fit" in lora.output  # memory does not pool across GPUs


def _full_70b_on_eight_by_hand(tokens: int) -> float:
    """GB per GPU of Llama 3.3 70B, full fine-tune (AdamW, fp32 master weights, checkpointing), FSDP over 8
    GPUs, `tokens` tokens per GPU per step: the terms of test_full_fine_tune_sharded_over_eight_gpus_by_hand."""
    total = 70_553_706_496
    state = total * 2 / 8 + 2 * total * 2 / 80 + total * 2 / 8 + total * 12 / 8  # weights, gradients, optimizer
    per_layer = 4 * 8192 + 2 * 8192 + 2 * 1024 + 4 * 28672
    activations = 80 * 8192 * tokens * 2 + per_layer * tokens * 2
    logits = tokens * 128256 * (2 + 8)
    return (state + activations + logits) / GB + 1.0  # and the CUDA context


def test_estimate_takes_the_memory_settings_memory_takes():
    """Which offers hold a job depends on its sequences: at 8,192 tokens a 70B full fine-tune still fits
    8 x B200 (169.6 GB of the 171 usable), two such sequences a step do not (193.6 GB)."""
    assert _full_70b_on_eight_by_hand(8192) == pytest.approx(169.6, abs=0.05)
    assert _full_70b_on_eight_by_hand(16384) == pytest.approx(193.6, abs=0.05)
    base = ["estimate", "--content", str(CONTENT), "--model", "llama-3.3-70b", "--method", "full", "--tokens", "20M"]
    one = run_cli(*base, "--setup", "nebius:b200x8", "--sequence-length", "8192", "--format", "json")
    assert one.exit_code == 0, one.output
    row = json.loads(one.output)[0]
    assert row["per_gpu_gb"] == pytest.approx(_full_70b_on_eight_by_hand(8192))
    assert row["fits"] is True and (row["sequence_length"], row["micro_batch"], row["checkpointing"]) == (8192, 1, True)
    two = run_cli(
        *base, "--setup", "nebius:b200x8", "--sequence-length", "8192", "--micro-batch", "2", "--format", "json"
    )
    row = json.loads(two.output)[0]
    assert row["per_gpu_gb"] == pytest.approx(_full_70b_on_eight_by_hand(16384)) and row["fits"] is False
    ranked = run_cli(*base, "--sequence-length", "8192", "--micro-batch", "2")
    assert ranked.exit_code == 1 and ranked.output.count("\n") == 1
    assert ranked.output.startswith(
        "error: no offer we have prices for holds Llama 3.3 70B with full fine-tune, AdamW (8,192-token sequences, "
        "micro-batch 2, activation checkpointing on): the nearest, nebius:b200x8 (8 × B200), would need 193.6 GB"
    )
    table = run_cli(*base, "--setup", "nebius:b200x8", "--sequence-length", "8192")
    assert table.output.endswith("\nmemory: 8,192-token sequences, micro-batch 1, activation checkpointing on\n")
    assert "  169.6  " in table.output
    same = run_cli("memory", "--content", str(CONTENT), "--model", "llama-3.3-70b", "--method", "full", "--gpu", "b200",
                   "--count", "8", "--sequence-length", "8192", "--format", "json")  # fmt: skip
    assert json.loads(same.output)["per_gpu_gb"] == pytest.approx(_full_70b_on_eight_by_hand(8192), abs=1e-6)


def test_estimate_refuses_memory_settings_the_job_cannot_take():
    base = ["estimate", "--content", str(CONTENT), "--tokens", "20M"]
    for args, words in (
        (["--model", "llama-3.3-70b", "--method", "full", "--lora-rank", "8"], "--lora-rank: method full trains every"),
        (["--model", "llama-3.3-70b", "--method", "lora", "--lora-targets", "q,zz"], "unknown LoRA target 'zz'"),
        (["--model", "llama-3.3-70b", "--method", "lora", "--lora-targets", ","], "--lora-targets: expected some of"),
    ):
        result = run_cli(*base, *args)
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert result.output.startswith("error: ") and words in result.output, result.output


def test_memory_command_errors_are_one_line():
    bad = run_cli("memory", "--content", str(CONTENT), "--model", "nope", "--method", "qlora", "--gpu", "h100")
    assert bad.exit_code == 1 and "--model: unknown model 'nope'" in bad.output
    targets = run_cli("memory", "--content", str(CONTENT), "--model", "llama-3.1-8b", "--method", "lora",
                      "--gpu", "h100", "--lora-targets", "q,zz")  # fmt: skip
    assert targets.exit_code == 1 and "unknown LoRA target 'zz'" in targets.output
    for given in ("", ",,"):  # an empty list gave the method's own targets, as if the option were not there
        none = run_cli("memory", "--content", str(CONTENT), "--model", "llama-3.1-8b", "--method", "lora",
                       "--gpu", "h100", "--lora-targets", given)  # fmt: skip
        assert none.exit_code == 1 and "--lora-targets: expected some of q, k, v, o, gate, up, down" in none.output


def test_lora_options_on_a_full_fine_tune_are_refused_and_its_text_has_no_adapter_line():
    """A full fine-tune has no adapters: --lora-rank or --lora-targets with it was silently ignored."""
    for option, value in (("--lora-rank", "8"), ("--lora-targets", "q,v")):
        for method in ("full", "full-8bit"):
            result = run_cli("memory", "--content", str(CONTENT), "--model", "llama-3.1-8b", "--method", method,
                             "--gpu", "h100", option, value)  # fmt: skip
            assert result.exit_code == 1, result.output
            assert result.output.startswith(f"error: {option}: method {method} trains every parameter")
            assert "apply to lora, lora-no-recompute, qlora" in result.output and result.output.count("\n") == 1
    full = run_cli("memory", "--content", str(CONTENT), "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h100")
    assert full.exit_code == 0 and "gradients" in full.output and "LoRA adapters" not in full.output
    lora = run_cli("memory", "--content", str(CONTENT), "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h100",
                   "--lora-rank", "8")  # fmt: skip
    assert lora.exit_code == 0 and "LoRA adapters" in lora.output


def _hours(args: list[str]) -> float:
    result = run_cli("estimate", "--content", str(CONTENT), "--tokens", "20M", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)[0]["hours"]


def test_attention_term_and_active_parameters_by_hand():
    peak = 989e12 * 0.3 * 3600  # one H100 SXM at 30%, per hour
    n8 = 8_030_261_248
    plain = _hours(["--model", "llama-3.1-8b", "--method", "lora", "--setup", "nodus:h100x1"])
    assert plain == pytest.approx(6 * n8 * 20e6 / peak, rel=1e-12)
    # QK^T and AV: 2 x 2 operations x 32 heads x 128 x 4,096 positions x 32 layers, in forward, recompute
    # and a backward pass of twice the forward: 4 forward-pass equivalents for LoRA with checkpointing
    attention = 2 * 2 * 32 * 128 * 4096 * 32 * 4
    with_attention = _hours(["--model", "llama-3.1-8b", "--method", "lora", "--setup", "nodus:h100x1",
                             "--attention-sequence-length", "4096"])  # fmt: skip
    assert with_attention == pytest.approx((6 * n8 + attention) * 20e6 / peak, rel=1e-12)
    # a mixture of experts trains on the parameters a token passes through: 2 of Mixtral's 8 experts
    active = 12_879_925_248
    moe = _hours(["--model", "mixtral-8x7b", "--method", "qlora", "--setup", "nodus:h100x1"])
    assert moe == pytest.approx(6 * active * 20e6 / peak, rel=1e-12)


def test_a_model_known_by_its_parameters_and_a_recorded_total_fits_where_the_setup_holds_the_total(tmp_path):
    """Without an architecture the memory model cannot split the job, so a setup holds it when its GPUs
    together hold the recorded training state, and each GPU is said to hold its even share. With 100 GB of
    state, Nodus's one A100 80 GB and one H100 (80 GB) cannot; one B200 (180 GB) holds 100 GB, and eight
    B200s or eight H200s hold 12.5 GB each."""
    model = "  - {id: house-13b, name: House 13B, parameters: 13000000000, source: a writer's note}\n"
    record = '  - {model: house-13b, method: lora, gb: 100, sequence_length: 4096, source: "a writer\'s note"}\n'
    content = make_content(
        tmp_path, {"models.yaml": lambda t: t + model, "methods.yaml": lambda t: t + record}, families=False
    )
    est = run_cli("estimate", "--content", str(content), "--model", "house-13b", "--method", "lora",
                  "--tokens", "10M", "--provider", "nodus", "--format", "json")  # fmt: skip
    assert est.exit_code == 0, est.output
    rows = {r["setup"]: (r["fits"], r["per_gpu_gb"]) for r in json.loads(est.output)}
    assert rows == {"nodus:b200x1": (True, 100.0), "nodus:b200x8": (True, 12.5), "nodus:h200x8": (True, 12.5)}
    named = run_cli("estimate", "--content", str(content), "--model", "house-13b", "--method", "lora",
                    "--tokens", "10M", "--setup", "nodus:h100x1", "--format", "json")  # fmt: skip
    assert [(r["fits"], r["per_gpu_gb"]) for r in json.loads(named.output)] == [(False, 100.0)]
    # `memory` breaks a job down by its architecture: without one it says so in a line
    mem = run_cli("memory", "--content", str(content), "--model", "house-13b", "--method", "lora", "--gpu", "h100")
    assert mem.exit_code == 1 and "Traceback" not in mem.output
    assert mem.output == "error: --model: house-13b has no architecture in models.yaml; add one with import-model\n"
    # with no recorded total for a method either, nothing says what the job needs: every offer is priced
    unknown = run_cli("estimate", "--content", str(content), "--model", "house-13b", "--method", "qlora",
                      "--tokens", "10M", "--provider", "nodus", "--format", "json")  # fmt: skip
    assert unknown.exit_code == 0, unknown.output
    assert sorted((r["setup"], r["fits"], r["per_gpu_gb"]) for r in json.loads(unknown.output)) == [
        (f"nodus:{offer}", True, None) for offer in ("a100-80gbx1", "b200x1", "b200x8", "h100x1", "h200x8")
    ]


def test_a_setup_states_the_jobs_whole_state_and_its_gpus_share():
    """A setup row's training state is the job on one GPU (what a page says the state "takes"), its GB per GPU
    the job spread over the setup's GPUs; with a recorded total, the state is the record. Both come from the
    memory model, whose arithmetic the tests above do by hand: this checks which of its figures each is."""
    from generator.load import load_content
    from generator.scenarios import memory_need, setup_row

    cat = load_content(CONTENT)
    model, method = cat.models["llama-3.1-8b"], cat.methods["lora"]
    (offer,) = [o for o in cat.snapshots["nodus"][-1].offers if o.key == "nodus:b200x8"]
    row = setup_row(cat, model, method, offer)
    whole, share = (memory_need(model, method, 180.0, n).per_gpu_gb for n in (1, 8))
    assert share < whole
    assert (row["state_gb"], row["per_gpu_gb"]) == (whole, share)
    recorded = setup_row(cat, cat.models["llama-3.3-70b"], method, offer)
    assert recorded["state_gb"] == 152  # methods.yaml's memory record


def test_estimate_prices_each_provider_at_its_newest_snapshot(tmp_path):
    """A provider keeps its older snapshots (pages of an article pinned to a date read them); estimate
    answers at today's prices: Nodus's H100 at $2.40 from a later snapshot, not the first one's $2.60."""
    first = (CONTENT / "prices/nodus/2026-11-05.yaml").read_text()
    later = first.replace("checked: 2026-11-05", "checked: 2026-11-20").replace(
        "{gpu: h100, count: 1, usd_per_hour: 2.60}", "{gpu: h100, count: 1, usd_per_hour: 2.40}"
    )
    assert later.count("2.40") == 1 and "2026-11-20" in later
    content = make_content(tmp_path, {"prices/nodus/2026-11-20.yaml": later})
    est = run_cli("estimate", "--content", str(content), "--model", "llama-3.3-70b", "--method", "qlora",
                  "--tokens", "20M", "--provider", "nodus", "--gpu", "h100", "--format", "json")  # fmt: skip
    assert est.exit_code == 0, est.output
    assert [(r["setup"], r["usd_per_hour"], r["checked"]) for r in json.loads(est.output)] == [
        ("nodus:h100x1", 2.40, "2026-11-20")
    ]


def test_memory_text_says_a_sharded_gpu_holds_its_shard_and_one_gpu_holds_it_all():
    shard = "note: weights, gradients and optimizer state are this GPU's shard; weights add two gathered layers"
    for count, layout in ((8, "fully sharded, FSDP"), (1, "one GPU")):
        text = run_cli("memory", "--content", str(CONTENT), "--model", "llama-3.1-8b", "--method", "full",
                       "--gpu", "h100", "--count", str(count)).output  # fmt: skip
        assert f"Llama 3.1 8B, full fine-tune, AdamW, {count} × H100 SXM ({layout});" in text
        assert (shard in text.splitlines()) is (count > 1)
