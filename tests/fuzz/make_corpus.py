#!/usr/bin/python3
"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/<name>/) from small fixtures: hand-made
inputs in every format the readers accept, plus the synthetic dataset `winokit synth` writes.
Run by hand when a reader learns a new format; the outputs are committed.

Usage: make_corpus.py PATH/TO/winokit
Needs only the Python standard library, except for the JPEG seed (python3-torchvision) and the
WebP seed (libwebp through ctypes); those are skipped when absent.
"""
import ctypes
import ctypes.util
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
FIXTURES = HERE.parent / "fixtures"


FAMILY_CONFIG_SEEDS = [  # (fuzz_config.cpp's family byte, name, fixture folder)
    (2, "vilt", FIXTURES / "vilt" / "tiny-rank"),
    (3, "flava", FIXTURES / "flava" / "tiny-pretraining"),
    (4, "siglip", FIXTURES / "siglip" / "tiny-a"),
    (5, "blip", FIXTURES / "blip" / "tiny-itm"),
    (6, "gpt2", HERE.parent / "golden" / "gpt2_tiny" / "f32"),
    (7, "llama", HERE.parent / "golden" / "llama_tiny" / "llama"),
    (8, "smolvlm", HERE.parent / "golden" / "smolvlm_tiny" / "model"),
    (9, "llava", FIXTURES / "llava_onevision" / "model"),
]


def write_family_config_seeds():
    for byte, name, folder in FAMILY_CONFIG_SEEDS:
        data = bytes([byte]) + (folder / "config.json").read_bytes()
        pp = folder / "preprocessor_config.json"
        if pp.exists():
            data += b"\x00" + pp.read_bytes()
        write("config", name + ".json", data)


def write(name, file, data):
    d = CORPUS / name
    d.mkdir(parents=True, exist_ok=True)
    (d / file).write_bytes(data if isinstance(data, bytes) else data.encode())


def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, b"", 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs += raw
        offset += len(raw)
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + blobs


def byte_symbols():
    """GPT-2's bytes_to_unicode: the 256 symbols every byte-level vocabulary holds."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def tokenizer_json_seeds():
    """tokenizer.json seeds: the golden fixtures (GPT-2-style Digits + ByteLevel with a template,
    Qwen2's and Llama 3's Split with NFC, SmolVLM's added tokens), compacted, and a minimal one
    with merge pairs, ignore_merges, nested Sequences and lstrip / rstrip added tokens."""
    golden = HERE.parent / "golden"
    for src, name in ((golden / "llama_tiny" / "tokenizer.json", "gpt2_digits_template.json"),
                      (golden / "llama_tiny" / "tokenizer_qwen2.json", "qwen2_split_nfc.json"),
                      (golden / "llama_tiny" / "tokenizer_llama3.json", "llama3_split.json"),
                      (golden / "smolvlm_tiny" / "model" / "tokenizer.json", "smolvlm.json")):
        j = json.loads(src.read_text(encoding="utf-8"))
        write("tokenizer_json", name, json.dumps(j, ensure_ascii=False, separators=(",", ":")))
    symbols = byte_symbols()
    vocab = {s: i for i, s in enumerate(symbols)}
    merges = []
    for a, b in (("Ġ", "a"), ("Ġa", "n"), ("i", "t"), ("'", "s"), ("Y", "e"), ("Ye", "s")):
        vocab[a + b] = len(vocab)
        merges.append([a, b])
    added = [{"id": len(vocab) + k, "content": c, "single_word": False, "lstrip": k == 1,
              "rstrip": k == 2, "normalized": False, "special": True}
             for k, c in enumerate(("<|im_start|>", "<image>", "<end_of_utterance>"))]
    minimal = {
        "version": "1.0", "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": False}]},
            {"type": "ByteLevel", "add_prefix_space": True, "use_regex": True}]},
        "post_processor": {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "trim_offsets": False},
            {"type": "TemplateProcessing", "single": [
                {"SpecialToken": {"id": "<|im_start|>", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "<end_of_utterance>", "type_id": 0}}]}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "byte_fallback": False,
                  "ignore_merges": True, "vocab": vocab, "merges": merges},
    }
    write("tokenizer_json", "minimal_pairs_ignore_merges.json",
          json.dumps(minimal, ensure_ascii=False, separators=(",", ":")))


def main():
    winokit = pathlib.Path(sys.argv[1]).resolve()
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        subprocess.run([winokit, "synth", "--out", tmp / "syn", "--count", "3", "--seed", "1",
                        "--image-size", "64"], check=True, capture_output=True)
        subprocess.run([winokit, "eval", "--data", tmp / "syn", "--scorer", "random", "--quiet",
                        "--bootstrap", "20", "--scores-out", tmp / "s.jsonl",
                        "--per-example", tmp / "p.jsonl"], check=True, capture_output=True)
        examples = (tmp / "syn" / "examples.jsonl").read_text()
        write("examples", "synth.jsonl", examples)
        write("examples", "published.jsonl",
              '{"id": 0, "caption_0": "an old person kisses a young person", "caption_1": '
              '"a young person kisses an old person", "image_0": "ex_0_img_0", "image_1": '
              '"ex_0_img_1", "tag": "Object", "secondary_tag": "Symbolic, Series", '
              '"num_main_preds": 1, "collapsed_tag": "Object"}\n'
              '{"id": "x1", "caption_0": "a", "caption_1": "b", "image_0": "sub/./b", '
              '"image_1": "c", "secondary_tag": ["Pragmatics"], "extra": {"k": [1, 2.5]}}\n')
        # The scores fuzzer's dataset has the ids 0, 1 and x2.
        ids = ["0", "1", "x2"]
        pairs = ["c0_i0", "c0_i1", "c1_i0", "c1_i1"]
        official = "".join(json.dumps({"label": f"{i}_{p}", "score": 0.25 * k})
                           + "\n" for i in ids for k, p in enumerate(pairs))
        write("scores", "official.jsonl", official)
        write("scores", "official-bom-crlf.jsonl", "\ufeff" + official.replace("\n", "\r\n"))
        write("scores", "per-example.jsonl", "".join(
            json.dumps({"id": int(i) if i.isdigit() else i,
                        "scores": {p: 0.5 - 0.1 * k for k, p in enumerate(pairs)}}) + "\n"
            for i in ids))
        csv = "id,c0_i0,c0_i1,c1_i0,c1_i1\n" + "".join(f"{i},0.5,1e-3,-2,.5\n" for i in ids)
        write("scores", "table.csv", csv)
        write("scores", "table.txt", "ID\u00a0model C0I0 C0I1 C1I0 C1I1\n"
              + "".join(f"{i} m 1 2 3 4\n" for i in ids))
        write("scores", "nan.jsonl", '{"label": "0_c0_i0", "score": NaN}\n')
        write("table", "quoted.csv", 'a,"b ""x""",c\n1,"multi\nline",3\n\n4,5,"6"\n')
        write("table", "whitespace.txt", "\ufeffid\tc0_i0  c0_i1\n1 2\u00a0 3\n")
        write("table", "scores.csv", csv)
        # WinoGAViL: the published column set, lists as JSON and as Python literals.
        wg = ('ID,cue,candidates,associations,num_associations,num_candidates,'
              'solvers_jaccard_mean,solvers_jaccard_std,score_fool_the_ai,annotations_label,'
              'clip_predictions\n'
              '7,sky,"[\'sun\', \'moon\', \'star\', \'sea\']","[\'sun\', \'moon\']",2,4,0.5,0.1,'
              '40,"{""sun"": ""Visual"", ""moon"": ""Abstract, General""}","[\'sun\', \'sea\']"\n'
              '8,beach,"[""sea"", ""sand"", ""tree""]","[""sea""]",1,3,,,,,"[""sea""]"\n')
        write("winogavil", "instances.csv", wg)
        write("winogavil", "minimal.csv", 'cue,candidates,associations\nx,"[""a"",""b""]","[""b""]"\n')
        # Safetensors: every dtype, metadata, an empty tensor.
        f32 = struct.pack("<16f", *[0.5 * k for k in range(16)])
        st = safetensors({
            "a.weight": ("F32", [4, 4], f32),
            "b": ("F16", [2, 2], struct.pack("<4e", 1.0, -2.0, 0.5, 65504.0)),
            "c": ("BF16", [3], bytes([0x80, 0x3f, 0x00, 0x40, 0x80, 0xbf])),
            "ids": ("I64", [2], struct.pack("<2q", 1, -1)),
            "empty": ("F32", [0, 3], b""),
        }, {"format": "pt"})
        write("safetensors", "dtypes.safetensors", st)
        single = safetensors({"logit_scale": ("F32", [], struct.pack("<f", 4.6))})
        write("safetensors", "scalar.safetensors", single)
        # A torch zip checkpoint through tests/fixtures/make_torch_checkpoint.py; the pickle
        # fuzzer gets its data.pkl (its storages, 1 KiB each, are supplied by the target).
        t256 = struct.pack("<256f", *[k / 256 for k in range(256)])
        (tmp / "t.safetensors").write_bytes(safetensors(
            {"visual.proj": ("F32", [16, 16], t256), "logit_scale": ("F32", [], t256[:4])}))
        subprocess.run([sys.executable, FIXTURES / "make_torch_checkpoint.py",
                        tmp / "t.safetensors", tmp / "t.bin"], check=True, capture_output=True)
        with zipfile.ZipFile(tmp / "t.bin") as z:
            pkl = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
            write("pickle", "state_dict.pkl", z.read(pkl))
        # Configs: first byte 0 = Hugging Face config.json, 1 = OpenCLIP open_clip_config.json.
        hf = {"model_type": "clip", "projection_dim": 8, "logit_scale_init_value": 2.6592,
              "text_config": {"hidden_act": "quick_gelu", "hidden_size": 16,
                              "intermediate_size": 64, "layer_norm_eps": 1e-05,
                              "max_position_embeddings": 77, "num_attention_heads": 2,
                              "num_hidden_layers": 1, "vocab_size": 49408},
              "vision_config": {"hidden_act": "gelu", "hidden_size": 16,
                                "intermediate_size": 64, "image_size": 32,
                                "layer_norm_eps": 1e-05, "num_attention_heads": 2,
                                "num_hidden_layers": 1, "patch_size": 8}}
        write("config", "hf.json", b"\x00" + json.dumps(hf, indent=1).encode())
        oc = {"model_cfg": {"embed_dim": 8, "quick_gelu": True,
                            "vision_cfg": {"image_size": 32, "layers": 1, "width": 16,
                                           "patch_size": 8, "head_width": 8},
                            "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 16,
                                         "heads": 2, "layers": 1}},
              "preprocess_cfg": {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25],
                                 "interpolation": "bicubic", "resize_mode": "shortest"}}
        write("config", "openclip.json", b"\x01" + json.dumps(oc).encode())
        # The other families (fuzz_config.cpp's byte): config.json, a NUL and
        # preprocessor_config.json, from each family's tiny fixture.
        write_family_config_seeds()
        # Images: a synthetic PNG; a JPEG and a WebP when the encoders are at hand.
        write("image", "synth.png", (tmp / "syn" / "images" / "ex_0_img_0.png").read_bytes())
        try:
            import torch
            import torchvision.io
            img = (torch.arange(3 * 12 * 10) % 251).to(torch.uint8).reshape(3, 12, 10)
            write("image", "rgb.jpg", bytes(torchvision.io.encode_jpeg(img, quality=80).tolist()))
            write("image", "gray.jpg",
                  bytes(torchvision.io.encode_jpeg(img[:1], quality=50).tolist()))
            write("image", "rgb.png", bytes(torchvision.io.encode_png(img).tolist()))
        except ImportError:
            print("make_corpus: no torchvision, JPEG seeds skipped", file=sys.stderr)
        lib = ctypes.util.find_library("webp")
        if lib:
            webp = ctypes.CDLL(lib)
            w, h = 6, 5
            rgba = bytes((x * 40 + y * 7 + c * 60) % 256 for y in range(h) for x in range(w)
                         for c in range(4))
            out = ctypes.POINTER(ctypes.c_uint8)()
            for fn, name in ((webp.WebPEncodeLosslessRGBA, "lossless.webp"),):
                fn.restype = ctypes.c_size_t
                n = fn(rgba, w, h, w * 4, ctypes.byref(out))
                write("image", name, ctypes.string_at(out, n))
            webp.WebPEncodeRGB.restype = ctypes.c_size_t
            rgb = bytes(b for k, b in enumerate(rgba) if k % 4 != 3)
            n = webp.WebPEncodeRGB(rgb, w, h, w * 3, ctypes.c_float(75), ctypes.byref(out))
            write("image", "lossy.webp", ctypes.string_at(out, n))
        else:
            print("make_corpus: no libwebp, WebP seeds skipped", file=sys.stderr)
    tokenizer_json_seeds()
    for d in sorted(CORPUS.iterdir()):
        files = list(d.iterdir())
        print(f"{d.name}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
