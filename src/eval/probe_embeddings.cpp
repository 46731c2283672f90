// Embeddings to probe: from `winokit embed` files (safetensors) or a folder of .npy arrays, mapped
// onto a Winoground dataset's images, captions and caption variants.
#include <cmath>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/eval/probe.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTensorNames[] = {"image_embeds",     "text_embeds",       "image_hidden_cls",
                                        "text_hidden_eot",  "image_hidden_mean", "image_hidden_max",
                                        "text_hidden_mean", "text_hidden_max",   "pair_embeds",
                                        "pair_hidden"};

std::vector<std::string> ids_from_metadata(const SafeTensors& st, const std::string& key,
                                           const std::string& file) {
  const auto it = st.metadata().find(key);
  if (it == st.metadata().end()) return {};
  try {
    return nlohmann::json::parse(it->second).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file, 0, "__metadata__." + key}, "not a JSON list of strings");
  }
}

std::vector<std::string> ids_from_file(const fs::path& path) {
  if (!fs::exists(path)) return {};
  const std::string text = read_file(path);
  std::vector<std::string> ids;
  const auto lines = split_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string id(trim(lines[n]));
    if (id.empty()) {
      if (n + 1 == lines.size()) break;
      throw InputError({path.string(), n + 1, "id"}, "empty id");
    }
    ids.push_back(std::move(id));
  }
  return ids;
}

// Rows of `name` (last-but-one dimension for hidden states) must match the ids.
void check_rows(const EmbeddingTable& t, const std::string& name, std::size_t ids,
                const std::string& id_key) {
  const auto it = t.tensors.find(name);
  if (it == t.tensors.end()) return;
  const auto& shape = it->second.shape;
  const bool hidden = name.find("hidden") != std::string::npos;
  if (shape.size() != (hidden ? 3u : 2u)) {
    throw InputError({t.source, 0, name}, std::string("expected ") +
                                              (hidden ? "[layers, rows, width]" : "[rows, dim]") +
                                              ", found " + shape_text(shape));
  }
  const auto rows = static_cast<std::size_t>(shape[hidden ? 1 : 0]);
  if (rows != ids) {
    throw InputError({t.source, 0, name},
                     std::to_string(rows) + " rows but " + std::to_string(ids) + " " + id_key);
  }
}

}  // namespace

std::string caption_text_id(const WinogroundExample& example, std::size_t k) {
  return example.id + "_c" + std::to_string(k);
}

std::string variant_text_id(const WinogroundDataset& dataset, const CaptionVariant& variant,
                            std::size_t n) {
  return caption_text_id(dataset.examples[variant.example],
                         static_cast<std::size_t>(variant.caption)) +
         ":" + variant.augmentation + ":" + std::to_string(n);
}

EmbeddingTable load_embedding_table(const fs::path& path) {
  EmbeddingTable t;
  t.source = path.string();
  if (fs::is_directory(path)) {
    for (const char* name : kTensorNames) {
      const fs::path file = path / (std::string(name) + ".npy");
      if (fs::exists(file)) t.tensors[name] = read_npy(file);
    }
    t.image_ids = ids_from_file(path / "image_ids.txt");
    t.text_ids = ids_from_file(path / "text_ids.txt");
    t.pair_ids = ids_from_file(path / "pair_ids.txt");
  } else {
    if (!fs::exists(path)) throw IoError(path.string() + ": no such file or folder");
    SafeTensors st = SafeTensors::open(path);
    for (const char* name : kTensorNames) {
      if (const TensorView* v = st.find(name)) t.tensors[name] = {v->shape, st.to_float(name)};
    }
    t.image_ids = ids_from_metadata(st, "image_ids", t.source);
    t.text_ids = ids_from_metadata(st, "text_ids", t.source);
    t.pair_ids = ids_from_metadata(st, "pair_ids", t.source);
  }
  if (t.tensors.empty()) {
    throw InputError({t.source, 0, ""},
                     "holds none of image_embeds, text_embeds, image_hidden_cls, text_hidden_eot, "
                     "pair_embeds, pair_hidden");
  }
  check_rows(t, "image_embeds", t.image_ids.size(), "image ids");
  check_rows(t, "image_hidden_cls", t.image_ids.size(), "image ids");
  check_rows(t, "text_embeds", t.text_ids.size(), "text ids");
  check_rows(t, "text_hidden_eot", t.text_ids.size(), "text ids");
  check_rows(t, "pair_embeds", t.pair_ids.size(), "pair ids");
  check_rows(t, "pair_hidden", t.pair_ids.size(), "pair ids");
  check_rows(t, "image_hidden_mean", t.image_ids.size(), "image ids");
  check_rows(t, "image_hidden_max", t.image_ids.size(), "image ids");
  check_rows(t, "text_hidden_mean", t.text_ids.size(), "text ids");
  check_rows(t, "text_hidden_max", t.text_ids.size(), "text ids");
  return t;
}

const char* to_string(ProbePooling pooling) {
  switch (pooling) {
    case ProbePooling::Mean:
      return "mean";
    case ProbePooling::Max:
      return "max";
    default:
      return "cls";
  }
}

std::pair<std::string, std::string> pooled_tensor_names(ProbePooling pooling) {
  switch (pooling) {
    case ProbePooling::Mean:
      return {"image_hidden_mean", "text_hidden_mean"};
    case ProbePooling::Max:
      return {"image_hidden_max", "text_hidden_max"};
    default:
      return {"image_hidden_cls", "text_hidden_eot"};
  }
}

namespace {

// The dataset's joint pair rows (4 per example) into each layer of the same name: "final" from
// pair_embeds, "l" from pair_hidden[l]; layers that only pairs have are added.
void attach_pairs(const WinogroundDataset& dataset, const EmbeddingTable& table,
                  ProbeEmbeddings& out) {
  const auto pe = table.tensors.find("pair_embeds");
  const auto ph = table.tensors.find("pair_hidden");
  if (pe == table.tensors.end() && ph == table.tensors.end()) return;
  std::unordered_map<std::string, std::size_t> pair_row;
  for (std::size_t r = 0; r < table.pair_ids.size(); ++r)
    pair_row.emplace(table.pair_ids[r], r);
  std::vector<std::size_t> rows;
  for (const WinogroundExample& ex : dataset.examples) {
    for (int c = 0; c < 2; ++c) {
      for (int k = 0; k < 2; ++k) {
        const std::string id = ex.id + "_c" + std::to_string(c) + "_i" + std::to_string(k);
        const auto it = pair_row.find(id);
        if (it == pair_row.end()) {
          throw InputError({table.source, 0, "pair_ids"},
                           "no row for pair '" + id + "' (ids are <example id>_c<k>_i<j>)");
        }
        rows.push_back(it->second);
      }
    }
  }
  auto layer_named = [&](const std::string& name) -> ProbeLayer& {
    for (auto& l : out.layers)
      if (l.name == name) return l;
    ProbeLayer l;
    l.name = name;
    out.layers.push_back(std::move(l));
    return out.layers.back();
  };
  auto fill = [&](ProbeLayer& l, const float* m, std::size_t d) {
    l.pair_dim = static_cast<int>(d);
    l.pairs.clear();
    for (std::size_t r : rows)
      l.pairs.insert(l.pairs.end(), m + r * d, m + (r + 1) * d);
  };
  if (ph != table.tensors.end()) {
    const auto layers = static_cast<std::size_t>(ph->second.shape[0]);
    const auto w = static_cast<std::size_t>(ph->second.shape[2]);
    for (std::size_t l = 0; l < layers; ++l)
      fill(layer_named(std::to_string(l)), &ph->second.values[l * table.pair_ids.size() * w], w);
  }
  if (pe != table.tensors.end()) {
    fill(layer_named("final"), pe->second.values.data(),
         static_cast<std::size_t>(pe->second.shape[1]));
  }
}

}  // namespace

ProbeEmbeddings probe_embeddings(const WinogroundDataset& dataset, const EmbeddingTable& table,
                                 ProbePooling pooling) {
  if (table.image_ids.empty() && table.text_ids.empty() && !table.pair_ids.empty()) {
    ProbeEmbeddings pairs_only;  // joint per-pair embeddings alone: the pair probes only
    attach_pairs(dataset, table, pairs_only);
    if (pairs_only.layers.empty()) {
      throw InputError({table.source, 0, ""}, "pair_ids without pair_embeds or pair_hidden");
    }
    pairs_only.vision_layer_note = "joint per-pair embeddings";
    return pairs_only;
  }
  std::unordered_map<std::string, std::size_t> image_row, text_row;
  for (std::size_t r = 0; r < table.image_ids.size(); ++r)
    image_row.emplace(table.image_ids[r], r);
  for (std::size_t r = 0; r < table.text_ids.size(); ++r)
    text_row.emplace(table.text_ids[r], r);
  const std::size_t n = dataset.examples.size();
  std::vector<std::size_t> images(2 * n), captions(2 * n);
  std::unordered_map<std::string, std::size_t> caption_owner;
  for (std::size_t i = 0; i < n; ++i) {
    const WinogroundExample& ex = dataset.examples[i];
    for (std::size_t k = 0; k < 2; ++k) {
      const auto im = image_row.find(ex.images[k]);
      if (im == image_row.end()) {
        throw InputError({table.source, 0, "image_ids"},
                         "no row for image '" + ex.images[k] + "' of example " + ex.id);
      }
      images[2 * i + k] = im->second;
      const std::string cid = caption_text_id(ex, k);
      const auto tx = text_row.find(cid);
      if (tx == text_row.end()) {
        throw InputError({table.source, 0, "text_ids"},
                         "no row for caption '" + cid + "' (ids are <example id>_c<k>)");
      }
      captions[2 * i + k] = tx->second;
      caption_owner.emplace(cid, 2 * i + k);
    }
  }
  ProbeEmbeddings out;
  std::vector<std::size_t> variant_rows;
  for (std::size_t r = 0; r < table.text_ids.size(); ++r) {
    const std::string& id = table.text_ids[r];
    for (std::size_t colon = id.find(':'); colon != std::string::npos;
         colon = id.find(':', colon + 1)) {
      const auto owner = caption_owner.find(id.substr(0, colon));
      if (owner != caption_owner.end()) {
        out.variant_owner.push_back(owner->second);
        variant_rows.push_back(r);
        break;
      }
    }
  }
  // One probe layer from an image matrix and a text matrix (rows x width, row-major).
  auto make_layer = [&](const std::string& name, const float* img, int di, const float* txt,
                        int dt) {
    ProbeLayer l;
    l.name = name;
    l.image_dim = di;
    l.text_dim = dt;
    for (std::size_t r : images)
      l.image.insert(l.image.end(), img + r * di, img + (r + 1) * di);
    for (std::size_t r : captions)
      l.text.insert(l.text.end(), txt + r * dt, txt + (r + 1) * dt);
    for (std::size_t r : variant_rows)
      l.variants.insert(l.variants.end(), txt + r * dt, txt + (r + 1) * dt);
    return l;
  };
  const auto [image_name, text_name] = pooled_tensor_names(pooling);
  const auto hi = table.tensors.find(image_name);
  const auto ht = table.tensors.find(text_name);
  if (pooling != ProbePooling::Token && (hi == table.tensors.end() || ht == table.tensors.end())) {
    throw InputError({table.source, 0, hi == table.tensors.end() ? image_name : text_name},
                     std::string("no ") + to_string(pooling) + "-pooled states (" + image_name +
                         " and " + text_name + ")",
                     "`winokit embed --hidden-states` writes them");
  }
  if (hi != table.tensors.end() && ht != table.tensors.end()) {
    const auto lv = static_cast<int>(hi->second.shape[0]) - 1;
    const auto lt = static_cast<int>(ht->second.shape[0]) - 1;
    const auto wv = static_cast<int>(hi->second.shape[2]);
    const auto wt = static_cast<int>(ht->second.shape[2]);
    const std::size_t img_rows = table.image_ids.size(), txt_rows = table.text_ids.size();
    for (int l = 0; l <= lt; ++l) {
      const int v = lt == 0 ? 0
                            : static_cast<int>(std::lround(static_cast<double>(l) * lv /
                                                           static_cast<double>(lt)));
      out.layers.push_back(make_layer(
          std::to_string(l), &hi->second.values[static_cast<std::size_t>(v) * img_rows * wv], wv,
          &ht->second.values[static_cast<std::size_t>(l) * txt_rows * wt], wt));
    }
    out.vision_layer_note = lv == lt ? "text and vision states of the same layer index are paired"
                                     : "text layer l is paired with vision layer round(l * " +
                                           std::to_string(lv) + " / " + std::to_string(lt) + ")";
  }
  const auto ei = table.tensors.find("image_embeds");
  const auto et = table.tensors.find("text_embeds");
  if (ei != table.tensors.end() && et != table.tensors.end()) {
    out.layers.push_back(make_layer("final", ei->second.values.data(),
                                    static_cast<int>(ei->second.shape[1]), et->second.values.data(),
                                    static_cast<int>(et->second.shape[1])));
  }
  if (out.layers.empty()) {
    throw InputError({table.source, 0, ""},
                     "needs image_embeds and text_embeds, or image_hidden_cls and "
                     "text_hidden_eot");
  }
  attach_pairs(dataset, table, out);
  return out;
}

}  // namespace winokit
