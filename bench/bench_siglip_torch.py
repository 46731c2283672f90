#!/usr/bin/python3
"""SigLIP image tower side by side: the PyTorch transcription (tests/fixtures/siglip_reference.py)
against winokit (bench_siglip), same weights, same pixels. Run by bench/run_siglip_bench.sh.

  bench_siglip_torch.py setup DIR IMAGES     google/siglip-base-patch16-224's shapes (config.json
                                             lists nothing: SigLIP's defaults), seeded random
                                             weights, IMAGES random [3, 224, 224] inputs
  bench_siglip_torch.py bench DIR IMAGES RUNS BATCH THREADS
                                             ms per image of get_image_features (median of RUNS
                                             after a warm-up) and the first features, as JSON
Needs Debian's python3-torch (with libopenblas0-pthread), python3-numpy.
"""
import json
import os
import resource
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
import siglip_reference as ref  # noqa: E402
from vilt_reference import load_safetensors, save_safetensors  # noqa: E402


def build(config):
    tc, vc = ref.complete_config(config)
    return ref.SiglipModel(tc, vc).eval(), vc


def setup(out_dir, images):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    config = {"model_type": "siglip", "architectures": ["SiglipModel"]}
    model, vc = build(config)
    with torch.no_grad():  # every parameter set (the pooling head's in_proj is torch.empty)
        for name, p in model.named_parameters():
            if name == "logit_scale":
                p.fill_(2.302585)  # log(10), SigLIP's initialisation
            elif name == "logit_bias":
                p.fill_(-10.0)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif p.dim() >= 2 or "probe" in name:
                p.normal_(0.0, 0.02)
            else:
                p.normal_(0.0, 0.01)
    save_safetensors(os.path.join(out_dir, "model.safetensors"), model.state_dict())
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_processor_type": "SiglipImageProcessor"}, f)
    gen = torch.Generator().manual_seed(1)
    px = torch.randn(images, 3, vc.image_size, vc.image_size, generator=gen)
    save_safetensors(os.path.join(out_dir, "inputs.safetensors"), {"pixels": px})


def bench(out_dir, images, runs, batch, threads):
    torch.set_num_threads(threads)
    with open(os.path.join(out_dir, "config.json")) as f:
        model, _ = build(json.load(f))
    model.load_state_dict(load_safetensors(os.path.join(out_dir, "model.safetensors")))
    px = load_safetensors(os.path.join(out_dir, "inputs.safetensors"))["pixels"][:images]

    def once():
        out = []
        with torch.no_grad():
            for b in range(0, images, batch):
                out.append(model.get_image_features(px[b:b + batch]))
        return torch.cat(out)

    feats = once()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        once()
        times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({
        "impl": "pytorch " + torch.__version__, "threads": threads, "batch": batch, "images": images,
        "runs": runs, "ms_per_image": 1000 * times[len(times) // 2] / images,
        "ms_per_image_min": 1000 * times[0] / images,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "features": feats.flatten().tolist()}))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "setup":
        setup(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 7 and sys.argv[1] == "bench":
        bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    else:
        print(__doc__)
        sys.exit(2)
