"""The memory of one training job, per GPU, part by part, from how each tensor is stored.

Sizes are in bytes until `Breakdown` reports them in GB (10^9 bytes, the unit
GPU makers print). Each term and its source:

- **weights**: bf16, 2 bytes a parameter. 8-bit (LLM.int8, bitsandbytes):
  1 byte plus an fp32 scale per output row. 4-bit NF4 with double
  quantization (QLoRA, Dettmers et al. 2023, section 3): 4 bits plus an 8-bit
  constant per block of 64 weights plus an fp32 constant per 256 blocks,
  4.127 bits. Quantization applies to the linear layers inside the
  transformer blocks; bitsandbytes leaves the embedding, the output layer and
  the norms in bf16.
- **adapters**: LoRA of rank r on a `d_in × d_out` projection adds
  `r × (d_in + d_out)` weights (Hu et al. 2021), for each targeted
  projection of each layer (each expert, in a mixture-of-experts layer).
- **gradients**: 2 bytes per trainable parameter (bf16); with the optimizer
  step fused into the backward pass only the largest tensor's gradient exists at once.
- **optimizer**: AdamW keeps two fp32 moments, 8 bytes per trainable
  parameter; 8-bit Adam (Dettmers et al. 2022) keeps them in 8 bits with an
  fp32 scale per block of 2,048, about 2.004 bytes. With mixed precision an
  fp32 master copy adds 4 bytes (ZeRO, Rajbhandari et al. 2020, section 3).
- **activations**: per layer and token, what a Llama-style block keeps for
  its backward pass, in bf16: the two norm inputs and outputs, q (heads ×
  head_dim), k and v (kv_heads × head_dim), the attention output, and the
  MLP's gate, up, activated gate and product (4 × its inner size; the
  experts a token visits in a mixture-of-experts layer). Without
  FlashAttention the softmax input and output add 2 × heads × sequence
  length. With activation checkpointing only each layer's input (hidden
  size) is kept, and one layer's full set is rebuilt at a time.
- **logits**: the loss over the vocabulary: bf16 logits (2 bytes), their
  fp32 copy and fp32 log-softmax (8 bytes), per token and vocabulary entry,
  as the transformers models compute it; a chunked loss (torchtune) keeps the
  bf16 logits and one chunk of the fp32 pair (8 chunks).
- **sharding**: on one GPU everything is local; data parallel (DDP) copies
  every part to every GPU; fully sharded (FSDP, ZeRO-3) divides weights,
  gradients and optimizer state by the GPU count and adds the unsharded
  weights of two layers (the one computing and the one being fetched).
- **overhead**: 1 GB per GPU for the CUDA context and library workspaces,
  which PyTorch's own memory counters do not include.

A job fits when every GPU's total stays within its memory less a 5% reserve
(allocator fragmentation, spikes the model does not see).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from generator.engine.architecture import Architecture

GB = 1e9
BF16 = 2.0
NF4 = (4 + 8 / 64 + 32 / (64 * 256)) / 8  # bytes per weight, QLoRA's double quantization
INT8 = 1.0
ADAM_FP32 = 8.0  # two fp32 moments
ADAM_8BIT = 2.0 + 2 * 4 / 2048  # two 8-bit moments, an fp32 scale per 2,048 values each
MASTER = 4.0  # an fp32 copy of each trainable weight
OVERHEAD_GB = 1.0
RESERVE = 0.05
LOSS_CHUNKS = 8
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")

WEIGHT_BYTES = {"bf16": BF16, "int8": INT8, "nf4": NF4}
OPTIMIZER_BYTES = {"adamw": ADAM_FP32, "adamw-8bit": ADAM_8BIT}
PARTS = ("weights", "adapters", "gradients", "optimizer", "activations", "logits", "overhead")


@dataclass(frozen=True)
class Job:
    """One training job: the model, how it is trained, and how it is spread over GPUs."""

    arch: Architecture
    weights: str = "bf16"  # how the base weights are stored: bf16, int8, nf4
    trainable: str = "all"  # all (full fine-tuning) or lora
    optimizer: str = "adamw"  # adamw or adamw-8bit
    master_weights: bool = True  # an fp32 copy of the trainable weights
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = LORA_TARGETS
    sequence_length: int = 4096
    micro_batch: int = 1
    checkpointing: bool = True
    flash_attention: bool = True
    chunked_loss: bool = False
    gpus: int = 1
    sharding: str = "auto"  # single, ddp, fsdp; auto: fsdp on more than one GPU
    optimizer_on_gpu: str = "yes"  # yes; cpu (offloaded); paged (on the GPU while it fits, else in CPU memory)
    weights_on_cpu: bool = False  # FSDP CPU offload of weights, gradients and optimizer state
    optimizer_in_backward: bool = False  # each gradient applied and freed as soon as it is made

    @property
    def layout(self) -> str:
        if self.sharding != "auto":
            return self.sharding
        return "fsdp" if self.gpus > 1 else "single"


@dataclass(frozen=True)
class Breakdown:
    """Per-GPU memory of a job, in GB, by part; and whether it fits a GPU."""

    parts: dict[str, float]
    gpu_memory_gb: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def per_gpu_gb(self) -> float:
        return sum(self.parts.values())

    @property
    def measured_gb(self) -> float:
        """What PyTorch's peak-memory counters would show: everything but the CUDA context."""
        return self.per_gpu_gb - self.parts["overhead"]

    @property
    def usable_gb(self) -> float | None:
        return None if self.gpu_memory_gb is None else self.gpu_memory_gb * (1 - RESERVE)

    @property
    def fits(self) -> bool | None:
        return None if self.gpu_memory_gb is None else self.per_gpu_gb <= self.usable_gb


def lora_parameters(arch: Architecture, rank: int, targets: tuple[str, ...]) -> float:
    shapes = arch.linear_shapes()
    unknown = [t for t in targets if t not in shapes]
    if unknown:
        raise ValueError(f"unknown LoRA target {unknown[0]!r}; expected some of {', '.join(shapes)}")
    per_layer = sum(rank * (shapes[t][0] + shapes[t][1]) * shapes[t][2] for t in targets)
    return per_layer * arch.layers


def _bf16_parameters(arch: Architecture) -> int:
    """Parameters bitsandbytes leaves unquantized: embedding, output layer and norms."""
    norms = arch.layers * arch.norms_per_layer * arch.hidden_size + arch.hidden_size
    return arch.embeddings() + arch.output_layer() + norms


def _layer_activation_elements(arch: Architecture, job: Job) -> float:
    """bf16 values one layer keeps per token for its backward pass (see the module's text)."""
    q, kv = arch.attention_heads * arch.head_dim, arch.kv_heads * arch.head_dim
    if arch.moe:
        inner = arch.experts_per_token * arch.expert_mlp_size + arch.shared_expert_mlp_size
    else:
        inner = arch.mlp_size
    elements = 4 * arch.hidden_size + 2 * q + 2 * kv + 4 * inner
    if not job.flash_attention:
        elements += 2 * arch.attention_heads * job.sequence_length
    if job.trainable == "lora":
        elements += job.lora_rank * len(job.lora_targets)  # each adapter's rank-r middle
    return elements


def breakdown(job: Job, gpu_memory_gb: float | None = None) -> Breakdown:
    """The job's memory on each GPU, part by part."""
    arch = job.arch
    total = arch.parameters()
    n = max(1, job.gpus)
    shard = n if job.layout == "fsdp" else 1
    notes: list[str] = []
    # weights
    if job.weights == "bf16":
        weights = total * BF16
    else:
        kept = _bf16_parameters(arch)
        weights = kept * BF16 + (total - kept) * WEIGHT_BYTES[job.weights]
    layer_weights = weights / max(1, arch.layers)  # roughly one layer's share, for the FSDP gather
    # trainable parameters
    if job.trainable == "lora":
        trainable = lora_parameters(arch, job.lora_rank, job.lora_targets)
        adapters = trainable * BF16
    else:
        trainable, adapters = float(total), 0.0
    gradients = trainable * BF16
    if job.optimizer_in_backward:
        largest = max(arch.embeddings(), arch.output_layer()) if job.trainable == "all" else trainable / arch.layers
        gradients = largest * BF16
        notes.append("optimizer step fused into the backward pass: one tensor's gradient at a time")
    optimizer = trainable * (OPTIMIZER_BYTES[job.optimizer] + (MASTER if job.master_weights else 0.0))
    # activations and logits: per GPU, for its own micro-batch
    tokens = job.sequence_length * job.micro_batch
    per_layer = _layer_activation_elements(arch, job) * tokens * BF16
    if job.checkpointing:
        activations = arch.layers * arch.hidden_size * tokens * BF16 + per_layer
    else:
        activations = arch.layers * per_layer
    logit_bytes = BF16 + 8.0 / (LOSS_CHUNKS if job.chunked_loss else 1)
    logits = tokens * arch.vocab_size * logit_bytes
    # spread over the GPUs
    gather = 0.0
    if job.weights_on_cpu:
        gather = 2 * layer_weights
        weights = adapters = gradients = optimizer = 0.0
        notes.append("weights, gradients and optimizer state offloaded to CPU memory; two layers on the GPU at a time")
    elif shard > 1:
        weights, adapters, gradients, optimizer = (x / shard for x in (weights, adapters, gradients, optimizer))
        gather = 2 * layer_weights
    if job.optimizer_on_gpu == "cpu":
        optimizer = 0.0
        notes.append("optimizer state offloaded to CPU memory")
    parts = {
        "weights": (weights + gather) / GB,
        "adapters": adapters / GB,
        "gradients": gradients / GB,
        "optimizer": optimizer / GB,
        "activations": activations / GB,
        "logits": logits / GB,
        "overhead": OVERHEAD_GB,
    }
    if job.optimizer_on_gpu == "paged" and gpu_memory_gb is not None and optimizer:
        if sum(parts.values()) > gpu_memory_gb * (1 - RESERVE):
            parts["optimizer"] = 0.0
            notes.append("paged optimizer state does not fit beside the rest: it lives in CPU memory")
    return Breakdown(parts, gpu_memory_gb, tuple(notes))


def with_gpus(job: Job, count: int) -> Job:
    return replace(job, gpus=count)
