"""Parameter counts from architectures: every shared config against its published total, and by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from unittest.mock import ANY

import pytest
import yaml
from conftest import TEMPLATES, make_content, run_cli

from generator.engine.architecture import UnknownArchitecture, from_config

CONFIGS = Path(__file__).parent / "fixtures" / "model-configs"


def published() -> dict[str, tuple[int, int | None]]:
    """The totals in the configs' README (taken from each repository's safetensors files)."""
    out = {}
    for line in (CONFIGS / "README.md").read_text().splitlines():
        m = re.match(r"\| (\S+) \| ([\d,]+) \| ([\d,]+|same)", line)
        if m:
            active = None if m.group(3) == "same" else int(m.group(3).replace(",", ""))
            out[m.group(1)] = (int(m.group(2).replace(",", "")), active)
    return out


TOTALS = published()


def test_every_shared_config_is_listed():
    assert sorted(TOTALS) == sorted(p.stem for p in CONFIGS.glob("*.json")) and len(TOTALS) == 11


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_computed_count_equals_the_published_total(name):
    arch = from_config(json.loads((CONFIGS / f"{name}.json").read_text()))
    total, active = TOTALS[name]
    assert arch.parameters() == total
    assert arch.parameters(active=True) == (active or total)


def test_mixtral_counts_by_hand():
    h, v, layers, kv, i, experts = 4096, 32000, 32, 8 * 128, 14336, 8
    attention = h * h + 2 * h * kv + h * h  # q, k, v, o; no biases
    expert = 3 * h * i  # gate, up, down
    router = h * experts
    norms = 2 * h
    embeddings = 2 * v * h  # input embedding and a separate output layer
    total = embeddings + layers * (attention + experts * expert + router + norms) + h
    active = embeddings + layers * (attention + 2 * expert + router + norms) + h
    assert (total, active) == (46_702_792_704, 12_879_925_248)
    arch = from_config(json.loads((CONFIGS / "mistralai__Mixtral-8x7B-v0.1.json").read_text()))
    assert (arch.parameters(), arch.parameters(active=True)) == (total, active)


def test_qwen2_biases_and_tied_embeddings_by_hand():
    config = {"model_type": "qwen2", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
              "tie_word_embeddings": True}  # fmt: skip
    head = 16
    attention = 64 * 64 + 2 * 64 * (2 * head) + 64 * 64 + (64 + 2 * 2 * head)  # biases on q, k, v
    layer = attention + 3 * 64 * 128 + 2 * 64
    assert from_config(config).parameters() == 1000 * 64 + 2 * layer + 64


def test_qwen3_moe_and_gemma2_layouts():
    moe = {"model_type": "qwen3_moe", "vocab_size": 100, "hidden_size": 8, "num_hidden_layers": 2,
           "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "num_experts": 4,
           "num_experts_per_tok": 2, "moe_intermediate_size": 6, "intermediate_size": 12, "tie_word_embeddings": False,
           "decoder_sparse_step": 1, "mlp_only_layers": [0]}  # fmt: skip
    attention = 8 * 8 + 2 * 8 * 4 + 8 * 8 + 2 * 4  # q (2 heads x 4), k, v (1 x 4), o, q/k norms
    dense = attention + 3 * 8 * 12 + 2 * 8
    sparse = attention + 4 * 3 * 8 * 6 + 8 * 4 + 2 * 8
    assert from_config(moe).parameters() == 2 * 100 * 8 + dense + sparse + 8
    gemma = {"model_type": "gemma2", "vocab_size": 100, "hidden_size": 8, "num_hidden_layers": 1,
             "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 12}  # fmt: skip
    layer = 8 * 8 + 2 * 8 * 4 + 8 * 8 + 3 * 8 * 12 + 4 * 8  # four norms a layer, tied embeddings
    assert from_config(gemma).parameters() == 100 * 8 + layer + 8


LLAMA = {"model_type": "llama", "vocab_size": 100, "hidden_size": 8, "num_hidden_layers": 1,
         "num_attention_heads": 4, "intermediate_size": 12}  # fmt: skip
QWEN_MOE = {"model_type": "qwen2_moe", "vocab_size": 100, "hidden_size": 8, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 6,
            "intermediate_size": 12}  # fmt: skip


def test_optional_keys_left_out_or_null_take_their_defaults():
    assert from_config(LLAMA) == from_config({**LLAMA, "num_key_value_heads": None, "head_dim": None})
    assert from_config(LLAMA).kv_heads == 4 and from_config(LLAMA).head_dim == 2


def test_a_config_nested_thousands_deep_is_a_clean_error(tmp_path):
    deep = tmp_path / "config.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = run_cli("import-model", str(deep), "--id", "x", "--name", "X", "--content", str(make_content(tmp_path)))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "config.json: expected a JSON config.json (nested too deeply to read)" in result.output


@pytest.mark.parametrize(
    "config, words",
    [
        ({"model_type": "gpt2"}, "model_type 'gpt2' is not a supported architecture"),
        ({"architectures": ["FooForCausalLM"], "hidden_size": 10}, "no model_type: expected a Hugging Face config"),
        ({"model_type": "llama", "vocab_size": 10}, "hidden_size: expected a whole number"),
        ([1, 2], "expected a JSON object"),
        # optional keys are checked as the required ones are (each of these ended in a traceback or a
        # parameter count such as 5,949,886,464.0 before)
        ({**LLAMA, "num_key_value_heads": "8"}, "num_key_value_heads: expected a whole number of 1 or more"),
        ({**LLAMA, "num_key_value_heads": 8.5}, "num_key_value_heads: expected a whole number of 1 or more"),
        ({**LLAMA, "num_key_value_heads": 0}, "num_key_value_heads: expected a whole number of 1 or more"),
        ({**LLAMA, "num_key_value_heads": 3}, "num_key_value_heads: expected a number that divides num_attention"),
        ({**LLAMA, "head_dim": 1.5}, "head_dim: expected a whole number of 1 or more"),
        ({**LLAMA, "tie_word_embeddings": "false"}, "tie_word_embeddings: expected true or false, got 'false'"),
        ({**QWEN_MOE, "decoder_sparse_step": "2"}, "decoder_sparse_step: expected a whole number of 1 or more"),
        ({**QWEN_MOE, "mlp_only_layers": [[1]]}, "mlp_only_layers: expected a list of layer numbers from 0 to 1"),
        ({**QWEN_MOE, "mlp_only_layers": [2]}, "mlp_only_layers: expected a list of layer numbers from 0 to 1"),
        ({**QWEN_MOE, "shared_expert_intermediate_size": "x"}, "shared_expert_intermediate_size: expected a whole"),
        # more experts per token than there are: the active count came out above the total
        ({**QWEN_MOE, "num_experts_per_tok": 5}, "num_experts_per_tok: expected at most num_experts (4), got 5"),
    ],
)
def test_an_unknown_or_incomplete_config_is_an_error(config, words):
    with pytest.raises(UnknownArchitecture, match=re.escape(words)):
        from_config(config)


def test_import_model_writes_an_entry_the_build_checks(tmp_path):
    content = make_content(tmp_path)
    config = CONFIGS / "Qwen__Qwen2.5-32B.json"
    result = run_cli("import-model", str(config), "--id", "qwen2.5-32b", "--name", "Qwen2.5 32B",
                     "--published", "32763876352", "--content", str(content), "--replace")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "32,763,876,352 parameters" in result.output
    models = {m["id"]: m for m in yaml.safe_load((content / "models.yaml").read_text())["models"]}
    assert models["qwen2.5-32b"]["architecture"]["qkv_bias"] is True
    assert models["llama-3.3-70b"]["weights_gb"] == 141  # other entries untouched
    build = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert build.exit_code == 0, build.output


def test_an_id_typed_for_another_model_is_refused_and_replace_is_checked_by_the_build(tmp_path):
    """The 8B's config under the 70B's id would put one model's architecture over another's entry."""
    content = make_content(tmp_path)
    wrong = ("import-model", str(CONFIGS / "meta-llama__Llama-3.1-8B.json"), "--id", "llama-3.3-70b",
             "--content", str(content))  # fmt: skip
    before = (content / "models.yaml").read_bytes()
    refused = run_cli(*wrong)
    assert refused.exit_code == 1 and (content / "models.yaml").read_bytes() == before
    assert refused.output == (
        f"error: {content}/models.yaml: model 'llama-3.3-70b' is already there and says something else; --replace "
        "updates its entry (its other keys and comments stay), or choose another --id\n"
    )
    again = run_cli(*wrong, "--replace")
    assert again.exit_code == 0 and "replaced llama-3.3-70b" in again.output
    models = {m["id"]: m for m in yaml.safe_load((content / "models.yaml").read_text())["models"]}
    assert models["llama-3.3-70b"]["weights_gb"] == 141  # keys import-model does not write are kept
    assert models["llama-3.3-70b"]["architecture"]["hidden_size"] == 4096
    # the entry kept its published total, which the 8B's architecture does not give
    build = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert build.exit_code == 1
    assert "parameters: the architecture gives 8,030,261,248 parameters, the published total is" in build.output


QWEN_7B = """  - id: qwen2.5-7b
    name: Qwen2.5 7B
    parameters: 7615616512
    # bf16 weights, summed by hand from the safetensors index
    weights_gb: 15.2
    architecture: {ARCH}
    source: >-
      Hugging Face config.json of Qwen/Qwen2.5-7B;
      total summed from its safetensors files

    url: https://huggingface.co/Qwen/Qwen2.5-7B
"""


def test_import_model_updates_an_entry_in_place(tmp_path):
    """--replace rewrote a whole entry: a comment inside it was lost, a source written over several lines became
    "config.json (<file>)" when --source was not given, and a key it did not write moved below the others. Now
    it changes only the keys it is given or computes, where they stand, and a new model needs --name."""
    content = make_content(tmp_path)
    models = content / "models.yaml"
    text = models.read_text()
    old = re.search(r"  - id: qwen2\.5-7b\n(    .*\n)+", text).group(0)
    arch = re.search(r"architecture: (.*)", old).group(1)
    mine = QWEN_7B.replace("{ARCH}", arch)
    models.write_text(text.replace(old, mine))
    before = models.read_text()
    config = CONFIGS / "Qwen__Qwen2.5-7B.json"
    same = run_cli("import-model", str(config), "--id", "qwen2.5-7b", "--content", str(content))
    assert same.exit_code == 0 and same.output.startswith("unchanged qwen2.5-7b in "), same.output
    assert models.read_text() == before
    url = "https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json"
    moved = run_cli("import-model", str(config), "--id", "qwen2.5-7b", "--url", url, "--content", str(content),
                    "--replace")  # fmt: skip
    assert moved.exit_code == 0 and moved.output.startswith("replaced qwen2.5-7b in "), moved.output
    assert models.read_text() == before.replace("url: https://huggingface.co/Qwen/Qwen2.5-7B\n", f"url: {url}\n")
    models.write_text(before.replace("    url: https://huggingface.co/Qwen/Qwen2.5-7B\n", ""))
    run_cli("import-model", str(config), "--id", "qwen2.5-7b", "--url", url, "--name", "Qwen 2.5 7B",
            "--content", str(content), "--replace")  # fmt: skip
    expected = before.replace("name: Qwen2.5 7B", "name: Qwen 2.5 7B")
    expected = expected.replace("    url: https://huggingface.co/Qwen/Qwen2.5-7B\n", "").replace(
        "files\n\n", f"files\n    url: {url}\n\n"
    )
    assert models.read_text() == expected  # a key the entry lacked goes after those before it in the entry
    nameless = run_cli("import-model", str(config), "--id", "qwen-new", "--content", str(content))
    assert nameless.exit_code == 1 and models.read_text() == expected
    assert nameless.output == (
        f"error: --name: needed for a model that is not in {content}/models.yaml yet, e.g. --name 'My Model'\n"
    )


def test_a_published_total_that_disagrees_fails(tmp_path):
    content = make_content(tmp_path)
    wrong = run_cli("import-model", str(CONFIGS / "Qwen__Qwen2.5-7B.json"), "--id", "q", "--name", "Q",
                    "--published", "7615616513", "--content", str(content))  # fmt: skip
    assert wrong.exit_code == 1 and "the architecture gives 7,615,616,512 parameters" in wrong.output
    text = (content / "models.yaml").read_text().replace("parameters: 8030261248", "parameters: 8030261249")
    (content / "models.yaml").write_text(text)
    build = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert build.exit_code == 1
    assert (
        "models[2].parameters: the architecture gives 8,030,261,248 parameters, the published total is" in build.output
    )
    gpt = tmp_path / "gpt2.json"
    gpt.write_text('{"model_type": "gpt2"}')
    unknown = run_cli("import-model", str(gpt), "--id", "g", "--name", "G", "--content", str(content))
    assert unknown.exit_code == 1 and "not a supported architecture" in unknown.output


MIXTRAL_BLOCK = "experts: 8, experts_per_token: 2, expert_mlp_size: 14336, moe_layers: 32}"
LLAMA_8B_HEADS = "vocab_size: 128256, hidden_size: 4096, layers: 32, attention_heads: 32, kv_heads: 8"


@pytest.mark.parametrize(
    "old, new, words",
    [
        (MIXTRAL_BLOCK, MIXTRAL_BLOCK.replace("per_token: 2", "per_token: 9"),
         "models[10].architecture.experts_per_token: expected at most experts (8), got 9"),
        (MIXTRAL_BLOCK, MIXTRAL_BLOCK.replace("moe_layers: 32", "moe_layers: 33"),
         "models[10].architecture.moe_layers: expected at most layers (32), got 33"),
        (LLAMA_8B_HEADS, LLAMA_8B_HEADS.replace("kv_heads: 8", "kv_heads: 12"),
         "models[2].architecture.kv_heads: expected a number that divides attention_heads (32), got 12"),
    ],
)  # fmt: skip
def test_an_architecture_that_cannot_be_is_refused_where_it_is_written(tmp_path, old, new, words):
    """Mixtral with 9 of its 8 experts per token built (its total does not depend on it, so the published
    total agreed) and priced more active parameters than it has; 33 MoE layers of 32 was reported as a missing
    MLP size; 12 key/value heads for 32 query heads was caught only where a published total disagreed."""
    content = make_content(tmp_path)
    text = (content / "models.yaml").read_text()
    assert text.count(old) == 1
    (content / "models.yaml").write_text(text.replace(old, new))
    build = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert build.exit_code == 1
    errors = [line for line in build.output.splitlines() if line.startswith("error: ")]
    assert errors[0].endswith(words), errors
    # only the cause: the measurements of Llama 3.1 8B each said it "has no architecture to predict from",
    # in lines listed before this one
    assert len(errors) == 1, errors
    assert not (tmp_path / "site").exists()


def test_every_model_in_content_is_what_import_model_writes(tmp_path):
    """Run again with the arguments each entry was written with, import-model leaves models.yaml as it is and
    says so: the eleven entries are its own output, so --replace is needed only when one would change."""
    content = make_content(tmp_path)
    before = (content / "models.yaml").read_bytes()
    for m in yaml.safe_load(before)["models"]:
        repo = re.match(r"Hugging Face config\.json of (\S+);", m["source"]).group(1)
        config = CONFIGS / f"{repo.replace('/', '__')}.json"
        args = ["import-model", str(config), "--id", m["id"], "--name", m["name"], "--source", m["source"]]
        args += ["--published", str(m["parameters"]), "--url", m["url"], "--content", str(content)]
        result = run_cli(*args)
        assert result.exit_code == 0 and result.output.startswith(f"unchanged {m['id']} in "), result.output
    assert (content / "models.yaml").read_bytes() == before


def test_import_model_follows_the_files_own_indentation(tmp_path):
    """An entry was found only as "  - id: ID"; in a models.yaml indented otherwise (valid YAML, which the build
    read) an existing model was not found and a new one was added with the wrong indentation: the next build
    failed with a YAML syntax error in a file the user had not touched."""
    content = make_content(tmp_path)
    models = content / "models.yaml"
    flat = re.sub(r"(?m)^    ", "  ", re.sub(r"(?m)^  - ", "- ", models.read_text())) + "# end of the list\n"
    models.write_text(flat)
    config = CONFIGS / "Qwen__Qwen2.5-7B.json"
    same = run_cli("import-model", str(config), "--id", "qwen2.5-7b", "--content", str(content))
    assert same.exit_code == 0 and same.output.startswith("unchanged qwen2.5-7b in "), same.output
    added = run_cli("import-model", str(config), "--id", "qwen-copy", "--name", "Qwen copy", "--content", str(content))
    assert added.exit_code == 0, added.output
    arch = re.search(r"(?m)^- id: qwen2\.5-7b\n(?:  .*\n)*?  architecture: (.*)$", flat).group(1)
    assert models.read_text() == flat.replace(
        "# end of the list\n",
        f"- id: qwen-copy\n  name: Qwen copy\n  architecture: {arch}\n  source: config.json (Qwen__Qwen2.5-7B.json)\n"
        "# end of the list\n",
    )
    build = run_cli("build", "--content", str(content), "--out", str(tmp_path / "site"), "--templates", str(TEMPLATES))
    assert build.exit_code == 0, build.output


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda t: t.replace("  - id: qwen2.5-7b\n    name: Qwen2.5 7B\n",
                             "  - {id: qwen2.5-7b, name: Qwen2.5 7B}\n  - x: 1\n"),
         "the entry of 'qwen2.5-7b' is written in braces; write it one key a line"),
        (lambda t: "models: []\n", "expected a `models:` list with one entry a line or more"),
        (lambda t: t + "x: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply to read; fix it, then import again"),
        (lambda t: t + "x: " + "[" * 30 + "]" * 30 + "\n", "YAML nested more than 20 levels deep"),
        (lambda t: t + "x: &a [1, 2]\ny: [*a, *a]\n", "YAML alias *a is not allowed in content"),
        (lambda t: t + "  - id: [\n", "not valid YAML (line"),
    ],
)  # fmt: skip
def test_a_models_file_import_model_cannot_edit_is_left_as_it_is(tmp_path, edit, words):
    content = make_content(tmp_path)
    models = content / "models.yaml"
    models.write_text(edit(models.read_text()))
    before = models.read_bytes()
    result = run_cli("import-model", str(CONFIGS / "Qwen__Qwen2.5-7B.json"), "--id", "qwen2.5-7b", "--name", "Q",
                     "--replace", "--content", str(content))  # fmt: skip
    assert result.exit_code == 1 and words in result.output.splitlines()[-1], result.output
    assert models.read_bytes() == before


def test_an_edit_that_would_change_another_model_is_not_written(tmp_path, monkeypatch):
    """The file is read back before it is written: should an edit ever touch another entry (here, made to), the
    command names the entry to add by hand and leaves the file as it was."""
    from generator import models_file

    content = make_content(tmp_path)
    models = content / "models.yaml"
    before = models.read_bytes()
    monkeypatch.setattr(models_file, "_updated", lambda lines, item, keys: "".join(lines).replace("141", "142"))
    result = run_cli("import-model", str(CONFIGS / "Qwen__Qwen2.5-7B.json"), "--id", "qwen2.5-7b",
                     "--url", "https://example.org/q", "--replace", "--content", str(content))  # fmt: skip
    assert result.exit_code == 1 and models.read_bytes() == before
    entry = yaml.safe_load(result.output.split("error: ")[0])
    assert entry == [{"id": "qwen2.5-7b", "architecture": ANY, "url": "https://example.org/q"}], result.output
    assert result.output.endswith(
        f"\nerror: {content}/models.yaml: its layout is not one import-model can edit safely; nothing written; "
        "the lines above are what it would write\n"
    ), result.output
