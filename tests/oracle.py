"""Llama 3.3 70B's memory per GPU, written out term by term from the memory model's stated rules.

Independent of generator/engine/memory.py: the tests that decide which setups
fit use this, so a change to the engine's arithmetic shows up as a failure.
Terms (README, "Memory per GPU"): bf16 weights (NF4 with double quantization,
4.127 bits, for QLoRA's layers; embeddings, output layer and norms stay bf16);
LoRA rank 16 on q, k, v, o, gate, up, down with bf16 weights and gradients,
fp32 moments and master copy; full fine-tuning with bf16 weights and
gradients, fp32 or 8-bit moments and an fp32 master copy; the state sharded
over n GPUs, plus two gathered layers; checkpointed activations of one
4,096-token sequence; bf16 logits with an fp32 copy and log-softmax; 1 GB of
CUDA context; a GPU holds its share when it stays within 95% of its memory.
"""

from __future__ import annotations

P70 = 70_553_706_496
H, LAYERS, KV, MLP, VOCAB, TOKENS = 8192, 80, 1024, 28672, 128256, 4096


def per_gpu_gb(method: str, n: int) -> float:
    lora = LAYERS * 16 * ((H + H) + 2 * (H + KV) + (H + H) + 3 * (H + MLP))
    kept = 4 * H + 2 * H + 2 * KV + 4 * MLP
    bf16_params = 2 * VOCAB * H + LAYERS * 2 * H + H
    nf4 = (4 + 8 / 64 + 32 / (64 * 256)) / 8
    if method in ("qlora", "lora"):
        weights = P70 * 2 if method == "lora" else bf16_params * 2 + (P70 - bf16_params) * nf4
        state = weights + lora * (2 + 2 + 8 + 4)
        kept += 16 * 7
    elif method == "full-8bit":
        weights = P70 * 2
        state = P70 * (2 + 2 + (2 + 8 / 2048) + 4)
    else:
        weights = P70 * 2
        state = P70 * (2 + 2 + 8 + 4)
    gathered = 2 * weights / LAYERS if n > 1 else 0
    activations = LAYERS * H * TOKENS * 2 + kept * TOKENS * 2
    logits = TOKENS * VOCAB * 10
    return (state / n + gathered + activations + logits) / 1e9 + 1.0


def fits(method: str, gpu_memory_gb: float, n: int) -> bool:
    return per_gpu_gb(method, n) <= gpu_memory_gb * 0.95
