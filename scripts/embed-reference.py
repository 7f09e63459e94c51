#!/usr/bin/env python3
"""Reference embeddings for echo-embed's tests (crates/echo-embed/tests/data/reference.json).

An independent forward pass of all-MiniLM-L6-v2: BERT written out in numpy (float64), the
weights read with `safetensors`, the text tokenised with the `tokenizers` package, then what
sentence-transformers does for this model (modules.json: Transformer -> Pooling -> Normalize;
1_Pooling/config.json: mean over tokens; sentence_bert_config.json: max_seq_length 256) --
mask-aware mean pooling over the last hidden state, then L2 normalisation. Each sentence runs
alone, unpadded, so batching in the Rust code is checked against something that never batched.

Needs only numpy, safetensors and tokenizers (no torch, no sentence-transformers):

    python3 -m venv /tmp/embed-ref && /tmp/embed-ref/bin/pip install numpy safetensors tokenizers
    bash scripts/fetch-embed-model.sh
    /tmp/embed-ref/bin/python scripts/embed-reference.py \
        --out crates/echo-embed/tests/data/reference.json
"""

import argparse
import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MAX_SEQ_LENGTH = 256
LONG_SENTENCE = " ".join(
    f"Paragraph {i}: the assistant remembers what the user said about gardening, "
    f"travel plans and the book club, and recalls it when it matters."
    for i in range(1, 13)
)
SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "A man is riding a horse.",
    "我今天在公园里散步，天气非常好。",
    "Échos d'été: a NAÏVE café owner counts 3,141 beans!",
    "",
    LONG_SENTENCE,
]

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x):
    # BERT's "gelu" is the exact erf form.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def linear(x, w, prefix):
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


def encode(w, cfg, ids):
    """Last hidden state (seq, hidden) for one unpadded sequence."""
    eps = cfg["layer_norm_eps"]
    heads = cfg["num_attention_heads"]
    hidden = cfg["hidden_size"]
    head_dim = hidden // heads
    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{layer}"
        q = linear(x, w, p + ".attention.self.query").reshape(n, heads, head_dim).transpose(1, 0, 2)
        k = linear(x, w, p + ".attention.self.key").reshape(n, heads, head_dim).transpose(1, 0, 2)
        v = linear(x, w, p + ".attention.self.value").reshape(n, heads, head_dim).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
        attn = linear(ctx, w, p + ".attention.output.dense")
        x = layer_norm(
            attn + x,
            w[p + ".attention.output.LayerNorm.weight"],
            w[p + ".attention.output.LayerNorm.bias"],
            eps,
        )
        inter = gelu(linear(x, w, p + ".intermediate.dense"))
        out = linear(inter, w, p + ".output.dense")
        x = layer_norm(out + x, w[p + ".output.LayerNorm.weight"], w[p + ".output.LayerNorm.bias"], eps)
    return x


def main():
    default_dir = os.environ.get("ECHO_EMBED_MODEL_DIR") or os.path.expanduser(
        "~/.cache/echo-desk-models/all-MiniLM-L6-v2"
    )
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", default=default_dir)
    ap.add_argument("--out", help="write JSON here instead of stdout")
    args = ap.parse_args()

    with open(os.path.join(args.model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    weights = {k: v.astype(np.float64) for k, v in load_file(os.path.join(args.model_dir, "model.safetensors")).items()}
    tok = Tokenizer.from_file(os.path.join(args.model_dir, "tokenizer.json"))
    # tokenizer.json ships with truncation at 128 and fixed padding to 128; sentence-transformers
    # overrides both (truncate at max_seq_length, pad to the longest of the batch).
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_SEQ_LENGTH)

    entries = []
    for text in SENTENCES:
        ids = tok.encode(text).ids
        hidden = encode(weights, cfg, np.array(ids))
        pooled = hidden.mean(axis=0)  # every token is real: the mask is all ones
        emb = pooled / max(np.linalg.norm(pooled), 1e-12)
        entries.append({"text": text, "input_ids": ids, "embedding": emb})

    embs = np.stack([e["embedding"] for e in entries])
    cosine = embs @ embs.T
    out = {
        "model": "all-MiniLM-L6-v2",
        "generator": "scripts/embed-reference.py (numpy float64 forward pass)",
        "max_seq_length": MAX_SEQ_LENGTH,
        "dim": int(embs.shape[1]),
        "sentences": [
            {
                "text": e["text"],
                "input_ids": [int(i) for i in e["input_ids"]],
                "norm": round(float(np.linalg.norm(e["embedding"])), 9),
                "embedding": [round(float(v), 8) for v in e["embedding"]],
            }
            for e in entries
        ],
        "cosine": [[round(float(v), 8) for v in row] for row in cosine],
    }
    text = json.dumps(out, ensure_ascii=False, indent=1) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
