#!/usr/bin/env python3
"""Write a tiny llama-architecture GGUF model with random weights.

It is meant only for exercising an OpenAI-compatible llama.cpp server in CI
(llama-cpp-python's `python -m llama_cpp.server`, or llama.cpp's own server):
the output is gibberish, but every code path (chat template, grammar /
JSON-schema constrained sampling, streaming) runs for real.

Vocabulary: SentencePiece-style ("llama" tokenizer model) made only of
  0 <unk>, 1 <s>, 2 </s>, 3..258 the byte tokens <0x00>..<0xFF>,
  259 <|im_start|>, 260 <|im_end|>
so any UTF-8 text tokenizes through byte fallback, and every string (and so
every grammar) can be generated.  <|im_end|> is the EOS token, matching the
chatml chat template stored in tokenizer.chat_template.

Output bias: llama has no output bias tensor, so embedding dimension 0 is
kept as a constant channel (token_embd[:, 0] = 1, and no layer writes to it:
row 0 of attn_output/ffn_down is zero).  After the final RMSNorm it is a
positive constant, so output.weight[:, 0] acts as a per-token logit bias.
By default it makes <unk>, <s>, <|im_start|>, control bytes 0x00-0x1F, 0x7F,
backslash 0x5C and all bytes >= 0x80 practically impossible (bias around -70)
wherever a grammar allows anything else, so the model only ever emits
printable ASCII without backslashes (plus EOS): no JSON escapes, so one
token per character of output.  That matters because
llama-cpp-python's JSON grammar lets raw control characters into JSON
strings, which strict JSON parsers (Python json, serde_json) reject.
--any-bytes turns the bias off.

Needs: pip install gguf numpy.  Deterministic: same arguments -> same bytes.

Usage: python tiny_model.py [OUT.gguf] [--embd 32] [--layers 1] [--heads 2]
                            [--kv-heads 2] [--ff 64] [--ctx 2048] [--f16]
                            [--seed 1234] [--any-bytes]
"""
import argparse

import numpy as np
from gguf import GGUFWriter, TokenType

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_vocab():
    tokens = ["<unk>", "<s>", "</s>"]
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(TokenType.BYTE)
    tokens += ["<|im_start|>", "<|im_end|>"]
    types += [TokenType.CONTROL, TokenType.CONTROL]
    scores = [0.0] * len(tokens)
    return tokens, scores, [int(t) for t in types]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default="tiny.gguf")
    ap.add_argument("--embd", type=int, default=32)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ff", type=int, default=64)
    ap.add_argument("--ctx", type=int, default=2048, help="llama.context_length (training context)")
    ap.add_argument("--f16", action="store_true", help="store 2-D weights as float16 instead of float32")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--any-bytes", action="store_true",
                    help="no output bias: allow control/non-ASCII bytes and all special tokens")
    a = ap.parse_args()

    assert a.embd % a.heads == 0 and a.heads % a.kv_heads == 0
    head_dim = a.embd // a.heads
    tokens, scores, types = build_vocab()
    n_vocab = len(tokens)
    eos_id = tokens.index("<|im_end|>")

    w = GGUFWriter(a.out, "llama")  # writes general.architecture = "llama"
    w.add_name("tiny-random-llama")
    w.add_file_type(1 if a.f16 else 0)  # LLAMA_FTYPE_MOSTLY_F16 / ALL_F32
    w.add_vocab_size(n_vocab)
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)

    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(eos_id)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    # SPM would otherwise put a space ("\u2581", here 3 byte tokens) after every special
    # token; llama.cpp's llama-server then fails to prefill "<|im_start|>assistant\n"
    # into JSON-schema grammars ("Failed to initialize samplers").
    w.add_add_space_prefix(False)
    w.add_chat_template(CHATML_TEMPLATE)

    rng = np.random.default_rng(a.seed)
    wdt = np.float16 if a.f16 else np.float32

    def mat(rows, cols):
        # numpy shape (rows, cols) == ggml ne {cols, rows}; GGUFWriter reverses the shape.
        return (rng.standard_normal((rows, cols)) * 0.1).astype(wdt)

    def ones(n):
        return np.ones(n, dtype=np.float32)  # norms stay f32

    E, F, Hq, Hkv = a.embd, a.ff, a.heads * head_dim, a.kv_heads * head_dim
    # Dimension 0 is the constant "bias" channel described in the module docstring.
    embd = mat(n_vocab, E)
    embd[:, 0] = 1.0

    def no_write_dim0(m):
        m[0, :] = 0.0  # output rows of attn_output/ffn_down: never touch dim 0
        return m

    w.add_tensor("token_embd.weight", embd)
    for i in range(a.layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", ones(E))
        w.add_tensor(p + "attn_q.weight", mat(Hq, E))
        w.add_tensor(p + "attn_k.weight", mat(Hkv, E))
        w.add_tensor(p + "attn_v.weight", mat(Hkv, E))
        w.add_tensor(p + "attn_output.weight", no_write_dim0(mat(E, Hq)))
        w.add_tensor(p + "ffn_norm.weight", ones(E))
        w.add_tensor(p + "ffn_gate.weight", mat(F, E))
        w.add_tensor(p + "ffn_up.weight", mat(F, E))
        w.add_tensor(p + "ffn_down.weight", no_write_dim0(mat(E, F)))
    w.add_tensor("output_norm.weight", ones(E))
    out = mat(n_vocab, E)
    out[:, 0] = 0.0
    if not a.any_bytes:
        banned = [tokens.index(t) for t in ("<unk>", "<s>", "<|im_start|>")]
        # 0x5C backslash too: JSON escapes (\\uXXXX = 6 tokens per char) would make the
        # length of grammar-constrained JSON output unbounded in practice.
        for b in list(range(0x20)) + [0x5C] + list(range(0x7F, 0x100)):
            banned.append(tokens.index(f"<0x{b:02X}>"))
        # hidden[0] after RMSNorm is >= ~1 here, other logits are O(1): -30 per unit is decisive.
        out[banned, 0] = -30.0
    w.add_tensor("output.weight", out)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
