"""A model as its architecture: what a Hugging Face config.json says, and the parameter counts it implies.

The counts add up every weight tensor the transformers implementation of
each family creates (its `modeling_*.py`), so a count derived here equals
the sum over the model's safetensors files exactly:

- token embedding `vocab × hidden`, and an output layer of the same shape
  unless the embeddings are tied (then it is the same tensor, counted once);
- per layer, attention: q `hidden × heads·head_dim`, k and v
  `hidden × kv_heads·head_dim`, o `heads·head_dim × hidden`, plus biases on
  q, k and v where the family has them (Qwen2) and a norm of `head_dim` on
  q and k where it has those (Qwen3, Gemma 3);
- per layer, a gated MLP (gate, up, down) of `3 × hidden × mlp`, or for a
  mixture-of-experts layer `experts` such MLPs of the expert size, a router
  `hidden × experts`, and for Qwen2-MoE a shared expert with its one-output gate;
- RMSNorm weights of `hidden`: two a layer (four in Gemma 2 and 3) and one final.

A token passes through `experts_per_token` experts (and the shared one):
that is the count a mixture-of-experts model trains on per token.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# model_type -> what the family's modeling code adds beyond the config's numbers
FAMILIES = {
    "llama": {"norms_per_layer": 2},
    "mistral": {"norms_per_layer": 2},
    "mixtral": {"norms_per_layer": 2, "moe": "mixtral"},
    "qwen2": {"norms_per_layer": 2, "qkv_bias": True},
    "qwen2_moe": {"norms_per_layer": 2, "qkv_bias": True, "moe": "qwen2_moe"},
    "qwen3": {"norms_per_layer": 2, "qk_norm": True},
    "qwen3_moe": {"norms_per_layer": 2, "qk_norm": True, "moe": "qwen3_moe"},
    "gemma": {"norms_per_layer": 2, "tied": True},
    "gemma2": {"norms_per_layer": 4, "tied": True},
    "gemma3_text": {"norms_per_layer": 4, "tied": True, "qk_norm": True},
}


@dataclass(frozen=True)
class Architecture:
    """The architecture block of a model in models.yaml (every count a parameter total needs)."""

    family: str
    vocab_size: int
    hidden_size: int
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    mlp_size: int  # the dense MLP's inner size (0 when every layer is a mixture of experts)
    tied_embeddings: bool
    qkv_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    experts: int = 0  # 0: a dense model
    experts_per_token: int = 0
    expert_mlp_size: int = 0
    shared_expert_mlp_size: int = 0  # Qwen2-MoE's always-on expert
    moe_layers: int = 0  # layers whose MLP is a mixture of experts (the rest are dense)

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def dense_layers(self) -> int:
        return self.layers - self.moe_layers

    # --- per-layer pieces ------------------------------------------------------

    def attention(self) -> int:
        h, q, kv = self.hidden_size, self.attention_heads * self.head_dim, self.kv_heads * self.head_dim
        out = h * q + 2 * h * kv + q * h
        if self.qkv_bias:
            out += q + 2 * kv
        if self.qk_norm:
            out += 2 * self.head_dim
        return out

    def dense_mlp(self) -> int:
        return 3 * self.hidden_size * self.mlp_size

    def moe_mlp(self, active: bool) -> int:
        h = self.hidden_size
        used = self.experts_per_token if active else self.experts
        out = used * 3 * h * self.expert_mlp_size + h * self.experts  # experts and the router
        if self.shared_expert_mlp_size:
            out += 3 * h * self.shared_expert_mlp_size + h  # the shared expert and its gate
        return out

    def embeddings(self) -> int:
        return self.vocab_size * self.hidden_size

    def output_layer(self) -> int:
        """The output layer's own weights: none when it is the embedding matrix."""
        return 0 if self.tied_embeddings else self.vocab_size * self.hidden_size

    def layer(self, moe: bool = False, active: bool = False) -> int:
        norms = self.norms_per_layer * self.hidden_size
        return self.attention() + norms + (self.moe_mlp(active) if moe else self.dense_mlp())

    def parameters(self, active: bool = False) -> int:
        """Every parameter (or, with active=True, those one token passes through)."""
        body = self.dense_layers * self.layer() + self.moe_layers * self.layer(moe=True, active=active)
        return self.embeddings() + self.output_layer() + body + self.hidden_size  # + the final norm

    def linear_shapes(self) -> dict[str, tuple[int, int, int]]:
        """Per layer, each projection LoRA can target: (inputs, outputs, copies in one layer, averaged)."""
        h, q, kv = self.hidden_size, self.attention_heads * self.head_dim, self.kv_heads * self.head_dim
        shapes = {"q": (h, q, 1), "k": (h, kv, 1), "v": (h, kv, 1), "o": (q, h, 1)}
        if self.moe:
            # an expert MLP in each MoE layer, and the dense ones; LoRA on an MLP name adapts every expert
            copies = (self.moe_layers * self.experts + self.dense_layers) / self.layers
            inner = self.expert_mlp_size if self.moe_layers == self.layers else self.mlp_size
            shapes.update(gate=(h, inner, copies), up=(h, inner, copies), down=(inner, h, copies))
        else:
            shapes.update(gate=(h, self.mlp_size, 1), up=(h, self.mlp_size, 1), down=(self.mlp_size, h, 1))
        return shapes


FIELDS = [f.name for f in dataclasses.fields(Architecture)]


class UnknownArchitecture(ValueError):
    """A config this module cannot count: an unknown family, or a key its family needs is missing."""


def from_config(config: dict) -> Architecture:
    """The architecture a Hugging Face config.json describes; UnknownArchitecture when it cannot tell."""
    if not isinstance(config, dict):
        raise UnknownArchitecture("expected a JSON object")
    family = config.get("model_type")
    if family == "gemma3":  # a multimodal Gemma 3: its text model is what is fine-tuned here
        raise UnknownArchitecture(
            "model_type 'gemma3' (with a vision tower) is not supported; use its text model's gemma3_text config"
        )
    if family not in FAMILIES:
        known = ", ".join(sorted(FAMILIES))
        if family is None:
            raise UnknownArchitecture(f"no model_type: expected a Hugging Face config.json naming one of {known}")
        raise UnknownArchitecture(f"model_type {family!r} is not a supported architecture; supported: {known}")
    facts = FAMILIES[family]

    def need(key: str) -> int:
        value = config.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UnknownArchitecture(f"{key}: expected a whole number of 1 or more for {family}, got {value!r}")
        return value

    def optional(key: str, default: int, least: int = 1) -> int:
        """A key a family may leave out (or write as null): `default` then, else a whole number of `least`
        or more, as transformers reads it."""
        value = config.get(key)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise UnknownArchitecture(f"{key}: expected a whole number of {least} or more for {family}, got {value!r}")
        return value

    def flag(key: str) -> bool:
        value = config.get(key, False)
        if not isinstance(value, bool):
            raise UnknownArchitecture(f"{key}: expected true or false, got {value!r}")
        return value

    hidden, heads = need("hidden_size"), need("num_attention_heads")
    kv_heads = optional("num_key_value_heads", heads)
    if heads % kv_heads:  # each key/value head serves the same number of query heads
        raise UnknownArchitecture(
            f"num_key_value_heads: expected a number that divides num_attention_heads ({heads}), got {kv_heads}"
        )
    head_dim = optional("head_dim", hidden // heads)
    layers = need("num_hidden_layers")
    tied = facts.get("tied", flag("tie_word_embeddings"))
    if flag("attention_bias") and not facts.get("qkv_bias"):
        raise UnknownArchitecture("attention_bias: true is not supported for this family (o_proj would carry one too)")
    if flag("mlp_bias"):
        raise UnknownArchitecture("mlp_bias: true is not supported")
    arch = dict(
        family=family,
        vocab_size=need("vocab_size"),
        hidden_size=hidden,
        layers=layers,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        mlp_size=optional("intermediate_size", 0, least=0),
        tied_embeddings=tied,
        qkv_bias=bool(facts.get("qkv_bias", False)),
        qk_norm=bool(facts.get("qk_norm", False)),
        norms_per_layer=facts["norms_per_layer"],
    )
    moe = facts.get("moe")
    if moe == "mixtral":
        arch.update(
            experts=need("num_local_experts"),
            experts_per_token=need("num_experts_per_tok"),
            expert_mlp_size=need("intermediate_size"),
            mlp_size=0,
            moe_layers=layers,
        )
    elif moe in ("qwen2_moe", "qwen3_moe"):
        step = optional("decoder_sparse_step", 1)
        dense = config.get("mlp_only_layers") or []
        if not isinstance(dense, list) or not all(type(i) is int and 0 <= i < layers for i in dense):
            raise UnknownArchitecture(f"mlp_only_layers: expected a list of layer numbers from 0 to {layers - 1}")
        dense = set(dense)
        moe_layers = sum(1 for i in range(layers) if i not in dense and (i + 1) % step == 0)
        arch.update(
            experts=need("num_experts"),
            experts_per_token=need("num_experts_per_tok"),
            expert_mlp_size=need("moe_intermediate_size"),
            shared_expert_mlp_size=optional("shared_expert_intermediate_size", 0, least=0) if moe == "qwen2_moe" else 0,
            moe_layers=moe_layers,
        )
        if moe_layers < layers:
            need("intermediate_size")
    else:
        need("intermediate_size")
    if arch.get("experts_per_token", 0) > arch.get("experts", 0):  # a token cannot pass through more than there are
        total = "num_local_experts" if moe == "mixtral" else "num_experts"
        raise UnknownArchitecture(
            f"num_experts_per_tok: expected at most {total} ({arch['experts']}), got {arch['experts_per_token']}"
        )
    return Architecture(**arch)
