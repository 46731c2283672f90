#!/usr/bin/python3
"""SmolVLM (Idefics3) VQAScore at HuggingFaceTB/SmolVLM-256M-Instruct's shapes (or
SmolVLM-500M-Instruct's), seeded random weights, Winoground-like inputs (JPEG photos of
1920x1280, 2 images and 2 captions per example, 4 pairs): the PyTorch side of
bench/run_smolvlm_bench.sh and the checkpoint both sides read.

  bench_smolvlm_torch.py setup DIR IMAGES [256m|500m] [bf16|f32]   checkpoint + inputs
  bench_smolvlm_torch.py bench DIR IMAGES split|no-split [RUNS]     time the transcription

The checkpoint is in the real layout (config.json, preprocessor_config.json,
processor_config.json, chat_template.json, tokenizer.json, model.safetensors) with the real
shapes: the text model's config and the vision tower's, the connector, the 49,280-entry
vocabulary with SmolVLM's added tokens at their ids (<image> 49190, <end_of_utterance> 49279).
The tokenizer's merges are learnt from the bench's own texts (a real tokenizer.json cannot be
downloaded here), so captions split into about as many tokens as with SmolLM2's.

The transcription is tests/fixtures/make_smolvlm_golden.py's (the processor, the SigLIP tower,
pixel shuffle and projection, the Llama decoder of llama_reference.py) in float32 with a KV cache,
doing the same work as winokit: each image decoded, preprocessed and encoded once, its prompt
prefix run once into the cache, and its 2 captions continued from it in one right-padded batch
(causal attention makes the padding invisible). Eager attention, as transformers runs on the
Debian 12 PyTorch (1.13, no scaled_dot_product_attention).
"""
import json
import math
import os
import resource
import struct
import sys
import time

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
from llama_reference import Tokenizer, byte_level, pre_tokenize, train_bpe  # noqa: E402

# HuggingFaceTB/SmolVLM-256M-Instruct and SmolVLM-500M-Instruct (config.json): the text models
# are SmolLM2-135M / 360M-shaped, the vision tower SigLIP base patch-16/512 without its head.
TEXT = {
    "256m": dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                 num_key_value_heads=3, head_dim=64),
    "500m": dict(hidden_size=960, intermediate_size=2560, num_hidden_layers=32, num_attention_heads=15,
                 num_key_value_heads=5, head_dim=64),
}
VISION = dict(model_type="idefics3_vision", hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
              num_attention_heads=12, image_size=512, patch_size=16, layer_norm_eps=1e-6,
              hidden_act="gelu_pytorch_tanh", num_channels=3)
SCALE_FACTOR = 4
VOCAB = 49280
IMAGE_TOKEN = 49190
QUESTION = 'Does this figure show "{}"? Please answer yes or no.'
CHAT_TEMPLATE = ("<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}"
                 "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
                 "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
                 "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}"
                 "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}")
# Winoground-like caption pairs (the same words in another order).
PAIRS = [("an old person kisses a young person", "a young person kisses an old person"),
         ("the dog chases the cat", "the cat chases the dog"),
         ("a red cup on a blue table", "a blue cup on a red table"),
         ("there is more water than sand", "there is more sand than water"),
         ("the person with the ponytail buys stuff from the other person",
          "the person buys stuff from the person with the ponytail"),
         ("a bird eats a snake", "a snake eats a bird"),
         ("the white wall will soon be painted green", "the green wall will soon be painted white"),
         ("some plants surrounding a lightbulb", "a lightbulb surrounding some plants")]


# ---- safetensors (F32 and BF16) ----
def write_safetensors(path, tensors):
    header, off = {}, 0
    names = sorted(tensors)
    for n in names:
        t = tensors[n]
        size = t.numel() * t.element_size()
        header[n] = {"dtype": {torch.float32: "F32", torch.bfloat16: "BF16"}[t.dtype],
                     "shape": list(t.shape), "data_offsets": [off, off + size]}
        off += size
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for n in names:
            f.write(tensors[n].contiguous().view(torch.uint8).numpy().tobytes())


def read_safetensors(path):
    """name -> float32 tensor (BF16 widened, as transformers does with torch_dtype=float32)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, h in header.items():
            if name == "__metadata__":
                continue
            a, b = h["data_offsets"]
            f.seek(base + a)
            raw = np.frombuffer(f.read(b - a), dtype=np.uint8)
            if h["dtype"] == "F32":
                t = torch.from_numpy(raw.view(np.float32).copy())
            else:
                t = torch.from_numpy((raw.view(np.uint16).astype(np.int32) << 16).view(np.float32).copy())
            out[name] = t.view(h["shape"])
    return out


# ---- the checkpoint ----
def tokenizer_json(texts):
    """A byte-level BPE tokenizer.json in SmolLM2's pipeline (Digits + ByteLevel), merges learnt
    from the texts, the vocabulary padded to 49,152, SmolVLM's added tokens above it."""
    corpus = " ".join(texts)
    merges = train_bpe(corpus, 3000)
    from llama_reference import BYTE_MAP
    vocab = {}
    for s in BYTE_MAP.values():
        vocab.setdefault(s, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    # SmolLM2 keeps its specials at ids 0-2: move them there.
    ordered = specials + [t for t in vocab if t not in specials]
    vocab = {t: i for i, t in enumerate(ordered)}
    while len(vocab) < 49152:
        vocab[f"<filler_{len(vocab)}>"] = len(vocab)
    added = [(0, "<|endoftext|>"), (1, "<|im_start|>"), (2, "<|im_end|>"), (49152, "<global-img>")]
    k = 49153
    for r in range(1, 7):
        for c in range(1, 7):
            added.append((k, f"<row_{r}_col_{c}>"))
            k += 1
    added += [(49189, "<fake_token_around_image>"), (49190, "<image>")]
    added += [(i, f"<unused_{i}>") for i in range(49191, 49279)] + [(49279, "<end_of_utterance>")]
    for i, c in added:
        vocab[c] = i
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, c in added],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }


def random_weights(text, gen, dtype):
    """Seeded random weights in the Hugging Face layout, scaled as trained ones roughly are."""
    def rnd(*shape, scale=0.02, mean=0.0):
        return (torch.randn(*shape, generator=gen) * scale + mean).to(dtype)
    H, I, nh, kv, d = (text[k] for k in ("hidden_size", "intermediate_size", "num_attention_heads",
                                         "num_key_value_heads", "head_dim"))
    W = {}
    t = "model.text_model."
    W[t + "embed_tokens.weight"] = rnd(VOCAB, H)
    W[t + "norm.weight"] = rnd(H, scale=0.1, mean=1.0)
    for i in range(text["num_hidden_layers"]):
        p = f"{t}layers.{i}."
        W[p + "input_layernorm.weight"] = rnd(H, scale=0.1, mean=1.0)
        W[p + "post_attention_layernorm.weight"] = rnd(H, scale=0.1, mean=1.0)
        W[p + "self_attn.q_proj.weight"] = rnd(nh * d, H)
        W[p + "self_attn.k_proj.weight"] = rnd(kv * d, H)
        W[p + "self_attn.v_proj.weight"] = rnd(kv * d, H)
        W[p + "self_attn.o_proj.weight"] = rnd(H, nh * d)
        W[p + "mlp.gate_proj.weight"] = rnd(I, H)
        W[p + "mlp.up_proj.weight"] = rnd(I, H)
        W[p + "mlp.down_proj.weight"] = rnd(H, I)
    W["lm_head.weight"] = rnd(VOCAB, H)
    D, M, P = VISION["hidden_size"], VISION["intermediate_size"], VISION["patch_size"]
    e = "model.vision_model.embeddings."
    W[e + "patch_embedding.weight"] = rnd(D, 3, P, P)
    W[e + "patch_embedding.bias"] = rnd(D)
    W[e + "position_embedding.weight"] = rnd((VISION["image_size"] // P) ** 2, D)
    for i in range(VISION["num_hidden_layers"]):
        p = f"model.vision_model.encoder.layers.{i}."
        for n in ("layer_norm1", "layer_norm2"):
            W[p + n + ".weight"] = rnd(D, scale=0.1, mean=1.0)
            W[p + n + ".bias"] = rnd(D)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            W[p + f"self_attn.{n}.weight"] = rnd(D, D)
            W[p + f"self_attn.{n}.bias"] = rnd(D)
        W[p + "mlp.fc1.weight"] = rnd(M, D)
        W[p + "mlp.fc1.bias"] = rnd(M)
        W[p + "mlp.fc2.weight"] = rnd(D, M)
        W[p + "mlp.fc2.bias"] = rnd(D)
    W["model.vision_model.post_layernorm.weight"] = rnd(D, scale=0.1, mean=1.0)
    W["model.vision_model.post_layernorm.bias"] = rnd(D)
    W["model.connector.modality_projection.proj.weight"] = rnd(H, D * SCALE_FACTOR ** 2)
    return W


def captions(images):
    out = []
    for e in range(images // 2):
        out += list(PAIRS[e % len(PAIRS)])
    return out


def setup(out, images, size="256m", dtype="bf16"):
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    text = dict(model_type="llama", vocab_size=VOCAB, max_position_embeddings=8192, rms_norm_eps=1e-5,
                rope_theta=100000.0, tie_word_embeddings=False, hidden_act="silu", **TEXT[size])
    cfg = dict(architectures=["Idefics3ForConditionalGeneration"], model_type="idefics3",
               image_token_id=IMAGE_TOKEN, scale_factor=SCALE_FACTOR, tie_word_embeddings=False,
               vocab_size=VOCAB, text_config=text, vision_config=VISION)
    pp = {"do_convert_rgb": True, "do_image_splitting": True, "do_normalize": True, "do_pad": True,
          "do_rescale": True, "do_resize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
          "image_processor_type": "Idefics3ImageProcessor", "max_image_size": {"longest_edge": 512},
          "processor_class": "Idefics3Processor", "resample": 1, "rescale_factor": 1 / 255,
          "size": {"longest_edge": 2048}}
    for name, obj in (("config.json", cfg), ("preprocessor_config.json", pp),
                      ("processor_config.json", {"image_seq_len": 64, "processor_class": "Idefics3Processor"}),
                      ("chat_template.json", {"chat_template": CHAT_TEMPLATE})):
        with open(os.path.join(out, name), "w") as f:
            json.dump(obj, f, indent=1)
    texts = [QUESTION.format(c) + "\nAssistant: Yes No User:" for p in PAIRS for c in p]
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(texts), f, ensure_ascii=False)
    gen = torch.Generator().manual_seed(26)
    W = random_weights(text, gen, {"bf16": torch.bfloat16, "f32": torch.float32}[dtype])
    write_safetensors(os.path.join(out, "model.safetensors"), W)
    print(json.dumps({"parameters": sum(t.numel() for t in W.values()), "dtype": dtype, "shape": size}))
    del W
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[0:1280, 0:1920]
    for i in range(images):
        base = np.stack([(xx * (1 + i % 3) // 8 + 40 * i), (yy // 5 + 17 * i), ((xx + yy) // 13)], -1) % 256
        noise = rng.integers(0, 48, (1280, 1920, 3))
        Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)).save(
            os.path.join(out, "images", f"img_{i:04d}.jpg"), quality=90)
    with open(os.path.join(out, "captions.json"), "w") as f:
        json.dump(captions(images), f, indent=0)


# ---- the transcription (float32) ----
# The processor is make_smolvlm_golden.py's (preprocess with winokit's cap `upper`: 1820 for
# model_type idefics3; the tiles come out the same for 1920x1280 photos).
from make_smolvlm_golden import image_prompt, preprocess  # noqa: E402


class Model:
    def __init__(self, out):
        self.cfg = json.load(open(os.path.join(out, "config.json")))
        self.pp = json.load(open(os.path.join(out, "preprocessor_config.json")))
        self.tok = Tokenizer(json.load(open(os.path.join(out, "tokenizer.json"), encoding="utf-8")))
        self.W = read_safetensors(os.path.join(out, "model.safetensors"))
        self.text = self.cfg["text_config"]
        self.yes = self.tok.encode("Yes")[0]
        d, theta = self.text["head_dim"], self.text["rope_theta"]
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))

    def vision(self, pixels):
        W, vc = self.W, self.cfg["vision_config"]
        D, nh, P, eps = vc["hidden_size"], vc["num_attention_heads"], vc["patch_size"], vc["layer_norm_eps"]
        e = "model.vision_model.embeddings."
        x = torch.nn.functional.conv2d(pixels, W[e + "patch_embedding.weight"], W[e + "patch_embedding.bias"],
                                       stride=P).flatten(2).transpose(1, 2)
        B, N, _ = x.shape
        x = x + W[e + "position_embedding.weight"][:N]
        d = D // nh
        ln = torch.nn.functional.layer_norm
        for i in range(vc["num_hidden_layers"]):
            p = f"model.vision_model.encoder.layers.{i}."
            def lin(name, t):
                return torch.nn.functional.linear(t, W[p + name + ".weight"], W[p + name + ".bias"])
            h = ln(x, (D,), W[p + "layer_norm1.weight"], W[p + "layer_norm1.bias"], eps)
            q = lin("self_attn.q_proj", h).view(B, N, nh, d).transpose(1, 2)
            k = lin("self_attn.k_proj", h).view(B, N, nh, d).transpose(1, 2)
            v = lin("self_attn.v_proj", h).view(B, N, nh, d).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-1, -2) * d ** -0.5, -1) @ v
            x = x + lin("self_attn.out_proj", a.transpose(1, 2).reshape(B, N, D))
            h = ln(x, (D,), W[p + "layer_norm2.weight"], W[p + "layer_norm2.bias"], eps)
            x = x + lin("mlp.fc2", torch.nn.functional.gelu(lin("mlp.fc1", h), approximate="tanh"))
        x = ln(x, (D,), W["model.vision_model.post_layernorm.weight"], W["model.vision_model.post_layernorm.bias"],
               eps)
        s = self.cfg["scale_factor"]  # Idefics3Connector.pixel_shuffle, as written there
        bsz, seq, dim = x.size()
        hgt = wid = int(seq ** 0.5)
        x = x.view(bsz, hgt, wid, dim).view(bsz, hgt, int(wid / s), dim * s).permute(0, 2, 1, 3)
        x = x.reshape(bsz, int(wid / s), int(hgt / s), dim * s * s).permute(0, 2, 1, 3)
        x = x.reshape(bsz, int(seq / (s * s)), dim * s * s)
        return x @ W["model.connector.modality_projection.proj.weight"].T

    def decoder(self, x, start, cache):
        """x [B, T, H] at positions start..start+T-1 over the cache (per layer (k, v), [1 or B,
        kv, start, d]); returns the final normed states and the new cache."""
        W, c = self.W, self.text
        H, nh, kv, d, eps = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"],
                             c["head_dim"], c["rms_norm_eps"])
        B, T, _ = x.shape
        freqs = torch.arange(start, start + T, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat([freqs, freqs], -1)
        cos, sin = emb.cos(), emb.sin()

        def rot(t):
            return torch.cat([-t[..., d // 2:], t[..., :d // 2]], -1)

        def rms(t, w):
            return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * w

        mask = torch.full((T, start + T), float("-inf")).triu(start + 1)
        new_cache = []
        t = "model.text_model."
        for i in range(c["num_hidden_layers"]):
            p = f"{t}layers.{i}."
            h = rms(x, W[p + "input_layernorm.weight"])
            q = (h @ W[p + "self_attn.q_proj.weight"].T).view(B, T, nh, d).transpose(1, 2)
            k = (h @ W[p + "self_attn.k_proj.weight"].T).view(B, T, kv, d).transpose(1, 2)
            v = (h @ W[p + "self_attn.v_proj.weight"].T).view(B, T, kv, d).transpose(1, 2)
            q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
            if cache is not None:
                pk, pv = cache[i]
                k = torch.cat([pk.expand(B, -1, -1, -1), k], 2)
                v = torch.cat([pv.expand(B, -1, -1, -1), v], 2)
            new_cache.append((k, v))
            kk, vv = k.repeat_interleave(nh // kv, 1), v.repeat_interleave(nh // kv, 1)
            a = torch.softmax(q @ kk.transpose(-1, -2) / d ** 0.5 + mask, -1) @ vv
            x = x + a.transpose(1, 2).reshape(B, T, nh * d) @ W[p + "self_attn.o_proj.weight"].T
            h = rms(x, W[p + "post_attention_layernorm.weight"])
            g = h @ W[p + "mlp.gate_proj.weight"].T
            x = x + (torch.nn.functional.silu(g) * (h @ W[p + "mlp.up_proj.weight"].T)) @ W[p + "mlp.down_proj.weight"].T
        return rms(x, W[t + "norm.weight"]), new_cache

    def embed(self, ids):
        return self.W["model.text_model.embed_tokens.weight"][torch.tensor(ids)]


def bench(out, images, split, runs):
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    m = Model(out)
    upper = 1820 if m.cfg["model_type"] == "idefics3" else 4096
    caps = json.load(open(os.path.join(out, "captions.json")))
    seq = json.load(open(os.path.join(out, "processor_config.json")))["image_seq_len"]

    def one_image(i, phases):
        t0 = time.perf_counter()
        pil = Image.open(os.path.join(out, "images", f"img_{i:04d}.jpg"))
        pixels, rows, cols = preprocess(pil, m.pp, split, upper)
        t1 = time.perf_counter()
        feats = m.vision(pixels).reshape(-1, m.text["hidden_size"])
        t2 = time.perf_counter()
        ids = m.tok.encode("<|im_start|>User:" + image_prompt(rows, cols, seq))
        x = m.embed(ids)
        x[torch.tensor(ids) == IMAGE_TOKEN] = feats
        _, cache = m.decoder(x[None], 0, None)
        t3 = time.perf_counter()
        e = i // 2  # the example's 2 captions, right-padded into one batch
        qs = [m.tok.encode(QUESTION.format(c) + "<end_of_utterance>\nAssistant:") for c in caps[2 * e:2 * e + 2]]
        L = max(len(q) for q in qs)
        xb = torch.stack([m.embed(q + [0] * (L - len(q))) for q in qs])
        hs, _ = m.decoder(xb, len(ids), cache)
        last = torch.stack([hs[b, len(q) - 1] for b, q in enumerate(qs)])
        probs = torch.softmax(last @ m.W["lm_head.weight"].T, -1)[:, m.yes]
        t4 = time.perf_counter()
        for k, dt in zip(("preprocess", "vision", "prefix", "suffix"), (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            phases[k] += dt
        return probs.tolist(), pixels.shape[0], len(ids), [len(q) for q in qs]

    with torch.no_grad():
        one_image(0, dict.fromkeys(("preprocess", "vision", "prefix", "suffix"), 0.0))  # warm-up
        times, cpu, all_phases = [], [], []
        scores, tiles, prefix_len, q_lens = [], 0, 0, []
        for r in range(runs):
            phases = dict.fromkeys(("preprocess", "vision", "prefix", "suffix"), 0.0)
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(images):
                s, tiles, prefix_len, ql = one_image(i, phases)
                if r == 0:
                    scores += s
                    q_lens += ql
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            all_phases.append(phases)
    order = sorted(range(runs), key=lambda k: times[k])
    med = order[runs // 2]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"impl": "PyTorch transcription (float32, torch %s)" % torch.__version__,
                      "split": split, "images": images, "pairs": 2 * images, "runs": runs,
                      "median_seconds": times[med], "seconds_per_run": times,
                      "phase_seconds": all_phases[med], "pairs_per_s": 2 * images / times[med],
                      "cpu_seconds_per_pair": sorted(cpu)[runs // 2] / (2 * images),
                      "tiles_per_image": tiles, "prefix_tokens": prefix_len,
                      "question_tokens": q_lens[:4], "peak_rss_mb": rss, "threads": torch.get_num_threads(),
                      "first_scores": scores[:8]}))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "setup":
        setup(sys.argv[2], int(sys.argv[3]), *sys.argv[4:6])
    elif len(sys.argv) >= 5 and sys.argv[1] == "bench":
        bench(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "split", int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    else:
        print(__doc__)
        sys.exit(2)
