#!/usr/bin/env python3
"""openai/CLIP's RN50 under Debian's PyTorch, for bench/run_resnet_side_by_side.sh.

  export CLIP_MODEL_PY OUT_DIR        seeded random RN50 weights (BatchNorm statistics perturbed)
                                      as an OpenCLIP folder winokit reads
  time CLIP_MODEL_PY OUT_DIR THREADS BATCH RUNS
                                      the image tower on random pixels: ms/image (median of
                                      RUNS after a warm-up), as one JSON line

The model is openai/CLIP's own code (clip/model.py, unmodified) built by its build_model from
the exported state dict and run in float32, as clip.load does on a CPU.
"""
import importlib.util
import json
import os
import statistics
import sys
import time

import torch


def reference(path):
    spec = importlib.util.spec_from_file_location("clip_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export(ref, out_dir):
    torch.manual_seed(50)
    model = ref.CLIP(embed_dim=1024, image_resolution=224, vision_layers=(3, 4, 6, 3),
                     vision_width=64, vision_patch_size=None, context_length=77, vocab_size=49408,
                     transformer_width=512, transformer_heads=8, transformer_layers=12)
    gen = torch.Generator().manual_seed(51)
    with torch.no_grad():
        for name, p in model.state_dict().items():
            if name.endswith("running_var"):
                p.copy_(0.5 + torch.rand(p.shape, generator=gen))
            elif name.endswith("running_mean"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith("bn3.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=gen))
    os.makedirs(out_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(out_dir, "open_clip_pytorch_model.bin"))
    with open(os.path.join(out_dir, "open_clip_config.json"), "w") as f:
        json.dump({"model_cfg": {"embed_dim": 1024, "quick_gelu": True,
                                 "vision_cfg": {"image_size": 224, "layers": [3, 4, 6, 3],
                                                "width": 64},
                                 "text_cfg": {"context_length": 77, "vocab_size": 49408,
                                              "width": 512, "heads": 8, "layers": 12}}}, f)


def time_tower(ref, out_dir, threads, batch, runs):
    torch.set_num_threads(threads)
    state = torch.load(os.path.join(out_dir, "open_clip_pytorch_model.bin"), map_location="cpu")
    model = ref.build_model(state).float().eval()
    pixels = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        model.encode_image(pixels)  # warm-up
        per_image = []
        for _ in range(runs):
            t0 = time.perf_counter()
            model.encode_image(pixels)
            per_image.append((time.perf_counter() - t0) * 1000 / batch)
    print(json.dumps({"impl": "pytorch", "torch": torch.__version__, "threads": threads,
                      "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", ""),
                      "batch": batch, "runs": runs,
                      "ms_per_image_median": statistics.median(per_image),
                      "ms_per_image_runs": per_image}))


def main():
    mode, ref_path, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    ref = reference(ref_path)
    if mode == "export":
        export(ref, out_dir)
    else:
        time_tower(ref, out_dir, int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))


if __name__ == "__main__":
    main()
