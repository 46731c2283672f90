#!/usr/bin/python3
"""BLIP ITM at Salesforce/blip-itm-base-coco's shapes (ViT-B/16 at 384, BERT-base text with
cross-attention), seeded random weights, Winoground-like inputs; the PyTorch side of
bench/run_blip_bench.sh (tests/fixtures/blip_reference.py, transformers' modeling_blip transcribed).

  bench_blip_torch.py setup DIR EXAMPLES       weights (HF layout), config, inputs
  bench_blip_torch.py bench DIR EXAMPLES RUNS  time the reference: pairs/s, peak RSS, first scores

Each example has 2 images and 2 captions (4 pairs). The reference encodes each image once
(vision tower), then one padded batch of the example's 4 pairs through the text encoder with
cross-attention (as BlipForImageTextRetrieval.forward does after its vision call).
"""
import json
import os
import resource
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
from blip_reference import BlipForImageTextRetrieval, complete_config, pad_batch  # noqa: E402
from vilt_reference import load_safetensors, save_safetensors  # noqa: E402

CONFIG = {
    "architectures": ["BlipForImageTextRetrieval"], "model_type": "blip", "image_text_hidden_size": 256,
    "text_config": {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                    "num_attention_heads": 12, "max_position_embeddings": 512, "vocab_size": 30524},
    "vision_config": {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                      "num_attention_heads": 12, "image_size": 384, "patch_size": 16},
}
LENGTHS = (9, 14, 11, 12, 10)  # caption lengths in tokens, [CLS] and [SEP] included


def build():
    tc, vc, top = complete_config(CONFIG)
    return BlipForImageTextRetrieval(tc, vc, top).eval()


def setup(out_dir, examples):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = build()
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name or "layer_norm" in name or "layernorm" in name:
                p.copy_((1 if name.endswith("weight") else 0) + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))
    save_safetensors(os.path.join(out_dir, "model.safetensors"), dict(model.state_dict()))
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=1)
    # Two 384 x 384 images per example (distinct content does not change the work: 4 reused).
    pixels = torch.rand((4, 3, 384, 384), generator=gen) * 2 - 1
    ids = []
    for e in range(examples):
        for k in range(2):
            L = LENGTHS[(2 * e + k) % len(LENGTHS)]
            ids.append([101] + torch.randint(1000, 30000, (L - 2,), generator=gen).tolist() + [102])
    save_safetensors(os.path.join(out_dir, "inputs.safetensors"), {"pixels": pixels})
    with open(os.path.join(out_dir, "captions.json"), "w") as f:
        json.dump(ids, f)
    print("wrote", out_dir)


def bench(out_dir, examples, runs):
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    model = build()
    model.load_state_dict(load_safetensors(os.path.join(out_dir, "model.safetensors")))
    pixels = load_safetensors(os.path.join(out_dir, "inputs.safetensors"))["pixels"]
    with open(os.path.join(out_dir, "captions.json")) as f:
        ids = json.load(f)[:2 * examples]

    def example(e):
        pv = torch.stack([pixels[(2 * e) % 4], pixels[(2 * e + 1) % 4]])
        emb = model.image_embeds(pv)  # each image once
        tok, am = pad_batch([ids[2 * e], ids[2 * e], ids[2 * e + 1], ids[2 * e + 1]], 0)
        logits = model.itm_logits(tok, am, emb[[0, 1, 0, 1]])
        return torch.softmax(logits, dim=-1)[:, 1]  # c0i0, c0i1, c1i0, c1i1

    scores = []
    with torch.no_grad():
        example(0)  # warm-up
        times, cpu = [], []
        for r in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            for e in range(examples):
                s = example(e)
                if r == 0:
                    scores += s.tolist()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    times.sort()
    cpu.sort()
    med = times[len(times) // 2]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"impl": "reference (transformers modeling_blip transcribed, torch %s)" % torch.__version__,
                      "pairs": 4 * examples, "images": 2 * examples, "runs": runs, "median_seconds": med,
                      "pairs_per_s": 4 * examples / med,
                      "cpu_seconds_per_pair": cpu[len(cpu) // 2] / (4 * examples), "peak_rss_mb": rss,
                      "threads": torch.get_num_threads(), "scores_c0_i0_c0_i1_c1_i0_c1_i1": scores[:8]}))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "setup":
        setup(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "bench":
        bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        print(__doc__)
        sys.exit(2)
