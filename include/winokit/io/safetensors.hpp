// Memory-mapped safetensors files (single or sharded through model.safetensors.index.json).
// Tensors are read in place; F32, F16 and BF16 convert to float32 on request.
//
//   winokit::SafeTensors st = winokit::SafeTensors::open("model.safetensors");
//   const winokit::TensorView* t = st.find("logit_scale");
//   std::vector<float> w = st.to_float("visual.proj", {768, 512});  // checks the shape
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };
const char* to_string(DType dtype);
std::size_t dtype_size(DType dtype);

struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  const std::uint8_t* data = nullptr;  // inside the mapping
  std::size_t bytes = 0;
  std::string file;
  std::int64_t numel() const;
};

std::string shape_text(const std::vector<std::int64_t>& shape);

class SafeTensors {
 public:
  // `path` is a .safetensors file or a model.safetensors.index.json (shards are opened).
  static SafeTensors open(const std::filesystem::path& path);
  // A PyTorch zip checkpoint (torch.save since 1.6: pytorch_model.bin, *.pt), read through a
  // restricted unpickler that only rebuilds tensors: the only callables it accepts are
  // collections.OrderedDict, torch._utils._rebuild_tensor_v2 and _rebuild_parameter, and
  // storages of float32, float16 and bfloat16; anything else is refused by name and no pickle
  // code is ever executed. A {"state_dict": {...}} wrapper and "module." prefixes are unwrapped.
  // TorchScript archives (torch.jit.save, OpenAI's RN50.pt and ViT-B-32.pt) are read the same
  // way: their `__torch__.*` module classes are only instantiated as empty attribute holders,
  // and the tensors are named by their attribute path; metadata()["format"] is "torchscript".
  // Double, int64 and int32 storages are read too (BatchNorm's num_batches_tracked).
  static SafeTensors open_torch(const std::filesystem::path& path);
  SafeTensors(SafeTensors&&) noexcept;
  SafeTensors& operator=(SafeTensors&&) noexcept;
  ~SafeTensors();

  const TensorView* find(const std::string& name) const;
  // Throws InputError naming the tensor (and the files) when it is absent, or naming the tensor
  // and both shapes when `expected` is given and differs. Empty `expected` accepts any shape.
  const TensorView& get(const std::string& name,
                        const std::vector<std::int64_t>& expected = {}) const;
  std::vector<float> to_float(const std::string& name,
                              const std::vector<std::int64_t>& expected = {}) const;
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::vector<std::string>& files() const { return files_; }
  // The string pairs of the header's "__metadata__" (all shards merged).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // SHA-256 over the files' bytes in name order: identifies the weights for caches. The files
  // are streamed through read(), not the mapping, so hashing leaves no pages resident. With
  // `index_dir`, each file's digest is remembered there (remembered_sha256_file) and not
  // recomputed while the file is unchanged.
  std::string content_hash(const std::filesystem::path& index_dir = {}) const;
  // Gives back the resident pages of the tensor's bytes in the mapping (madvise MADV_DONTNEED on
  // the read-only private mapping; the data is read again from the file if it is used again).
  // Called once a tensor has been converted or packed, so the mapped file and the packed copies
  // are not both resident. No effect on tensors read from a PyTorch zip.
  void release(const std::string& name) const;

 private:
  SafeTensors();
  struct Mapping;
  std::vector<std::unique_ptr<Mapping>> mappings_;
  std::vector<std::unique_ptr<std::string>> owned_;  // tensor bytes read from a zip checkpoint
  std::map<std::string, TensorView> tensors_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> metadata_;
};

// SHA-256 of a file, streamed (nothing stays resident).
std::string stream_sha256_file(const std::filesystem::path& path);

// SHA-256 of a file, remembered in `index_dir` (one small JSON file per path) against the file's
// path, size, modification and change times (ns), inode and device: while all of them match,
// the remembered digest is returned without reading the file; on any mismatch, or a missing or
// unreadable entry, the file is hashed again and the entry rewritten (best effort: an index
// folder that cannot be written only costs the re-hash next time). Empty `index_dir`: always
// hashed.
std::string remembered_sha256_file(const std::filesystem::path& path,
                                   const std::filesystem::path& index_dir);

// float16 / bfloat16 bit patterns to float32 (exact).
float half_to_float(std::uint16_t h);
float bfloat16_to_float(std::uint16_t b);

// Reads a safetensors file's tensors as float32 from bytes in memory (used for small files such
// as expected outputs); same checks as SafeTensors.
std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>>
read_safetensors_f32(const std::filesystem::path& path);

// Writes float32 tensors as a safetensors file (header sorted by name, 8-byte aligned) with
// optional string metadata.
std::string encode_safetensors_f32(
    const std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>>& tensors,
    const std::map<std::string, std::string>& metadata = {});

}  // namespace winokit
