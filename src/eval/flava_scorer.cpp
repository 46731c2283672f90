// FLAVA as a pair scorer (ITM or contrastive head).
#include "winokit/eval/flava_scorer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/clip_model.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

FlavaRuntime FlavaRuntime::load(const fs::path& dir, std::optional<FlavaHead> head,
                                FlavaRunOptions options) {
  FlavaRuntime rt;
  rt.model = std::make_shared<FlavaModel>(FlavaModel::load(dir));
  rt.tokenizer = std::make_shared<WordPieceTokenizer>(WordPieceTokenizer::load(dir));
  if (rt.tokenizer->vocab_size() > static_cast<std::size_t>(rt.model->config().vocab_size)) {
    throw InputError({(dir / "vocab.txt").string(), 0, ""},
                     "the vocabulary has " + std::to_string(rt.tokenizer->vocab_size()) +
                         " tokens but the model's text_config.vocab_size is " +
                         std::to_string(rt.model->config().vocab_size));
  }
  if (head) {
    if (*head == FlavaHead::Itm && !rt.model->has_itm()) {
      throw UsageError(dir.string() + " is a " + rt.model->layout() +
                       " checkpoint without the ITM head (itm_head.*, saved by "
                       "FlavaForPreTraining): use --head contrastive");
    }
    rt.head = *head;
    rt.head_reason = "asked for (--head)";
  } else if (rt.model->has_itm()) {
    rt.head = FlavaHead::Itm;
    rt.head_reason =
        "default: the checkpoint has the ITM head, and ITM (a joint forward pass per pair) is "
        "the stronger of FLAVA's two scores on Winoground";
  } else {
    rt.head = FlavaHead::Contrastive;
    rt.head_reason = "default: the checkpoint (" + rt.model->layout() + ") has no ITM head";
  }
  rt.options = std::move(options);
  rt.source = dir.string();
  return rt;
}

std::vector<int> FlavaRuntime::encode(const std::string& caption) const {
  return tokenizer->encode(caption, model->config().max_text_len);
}

nlohmann::json FlavaRuntime::describe() const {
  const FlavaConfig& c = model->config();
  return {{"kind", "flava"},
          {"model", source},
          {"layout", model->layout()},
          {"weights_sha256", model->weights_id()},
          {"config", c.to_json()},
          {"head", to_string(head)},
          {"head_choice", head_reason},
          {"score", head == FlavaHead::Itm
                        ? "ITM head (itm_head on the multimodal encoder's [CLS]): softmax "
                          "probability of match"
                        : "contrastive: exp(logit_scale) * cosine of the projected [CLS] "
                          "embeddings (FlavaForPreTraining's contrastive_logits_per_image)"},
          {"logit_scale", model->logit_scale()},
          {"tokenizer",
           {{"kind", "BERT WordPiece"},
            {"vocab_sha256", tokenizer->vocab_sha256()},
            {"lower_case", tokenizer->options().lower_case},
            {"max_length", c.max_text_len}}},
          {"precision", "float32"},
          {"compute", compute_record()},
          {"threads", compute_threads()},
          {"batch_size", options.batch_size}};
}

std::vector<double> flava_score_pairs(
    const FlavaRuntime& rt, const std::vector<std::function<ImageBytes()>>& images,
    const std::vector<std::string>& captions,
    const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  const FlavaModel& model = *rt.model;
  std::map<std::size_t, std::vector<std::size_t>> by_image;
  std::set<std::size_t> used_captions;
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    if (pairs[p].first >= captions.size() || pairs[p].second >= images.size()) {
      throw UsageError("FLAVA: pair index out of range");
    }
    by_image[pairs[p].second].push_back(p);
    used_captions.insert(pairs[p].first);
  }
  // Captions: every one used is encoded once, in batches.
  std::map<std::size_t, FlavaEmbeds> text;
  {
    const std::size_t batch = static_cast<std::size_t>(std::max(1, rt.options.batch_size));
    std::vector<std::size_t> order(used_captions.begin(), used_captions.end());
    for (std::size_t b = 0; b < order.size(); b += batch) {
      std::vector<std::vector<int>> ids;
      const std::size_t end = std::min(order.size(), b + batch);
      for (std::size_t k = b; k < end; ++k)
        ids.push_back(rt.encode(captions[order[k]]));
      std::vector<FlavaEmbeds> e = model.embed_texts(ids);
      for (std::size_t k = b; k < end; ++k)
        text.emplace(order[k], std::move(e[k - b]));
    }
  }
  std::vector<double> out(pairs.size());
  const std::size_t pair_batch = static_cast<std::size_t>(std::max(1, rt.options.batch_size));
  const std::size_t image_batch = static_cast<std::size_t>(std::max(1, rt.options.image_batch));
  std::size_t done = 0;
  std::vector<std::size_t> image_order;
  for (const auto& kv : by_image)
    image_order.push_back(kv.first);
  // Images in chunks: each chunk is read, preprocessed and encoded once, its pairs scored, and
  // its encoder outputs dropped.
  for (std::size_t b = 0; b < image_order.size(); b += image_batch) {
    const std::size_t end = std::min(image_order.size(), b + image_batch);
    std::vector<FlavaImage> pixels;
    for (std::size_t k = b; k < end; ++k)
      pixels.push_back(flava_preprocess(decode_image(images[image_order[k]]()), model.config()));
    std::vector<const FlavaImage*> ptrs;
    for (const auto& px : pixels)
      ptrs.push_back(&px);
    const std::vector<FlavaEmbeds> emb = model.embed_images(ptrs);
    std::vector<std::size_t> queue;
    std::vector<const FlavaEmbeds*> qi;
    auto flush = [&] {
      if (queue.empty()) return;
      std::vector<const FlavaEmbeds*> qt;
      for (std::size_t p : queue)
        qt.push_back(&text.at(pairs[p].first));
      const FlavaItmOutput o = model.itm(qt, qi);
      for (std::size_t k = 0; k < queue.size(); ++k)
        out[queue[k]] = o.probabilities[k];
      done += queue.size();
      queue.clear();
      qi.clear();
      if (rt.options.on_progress) rt.options.on_progress("pairs", done, pairs.size());
    };
    for (std::size_t k = b; k < end; ++k) {
      const FlavaEmbeds& im = emb[k - b];
      for (std::size_t p : by_image[image_order[k]]) {
        if (rt.head == FlavaHead::Contrastive) {
          out[p] = model.contrastive(im, text.at(pairs[p].first));
          ++done;
          continue;
        }
        queue.push_back(p);
        qi.push_back(&im);
        if (queue.size() >= pair_batch) flush();
      }
    }
    flush();
    if (rt.head == FlavaHead::Contrastive && rt.options.on_progress) {
      rt.options.on_progress("pairs", done, pairs.size());
    }
  }
  return out;
}

namespace {

class FlavaScorer final : public Scorer {
 public:
  FlavaScorer(FlavaRuntime rt, std::string name) : rt_(std::move(rt)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  nlohmann::json describe() const override {
    nlohmann::json d = rt_.describe();
    d["embeddings"] = {{"images_computed", images_},     {"images_cached", 0},
                       {"captions_computed", captions_}, {"captions_cached", 0},
                       {"pairs_scored", pairs_},         {"seconds", seconds_}};
    return d;
  }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    const auto start = std::chrono::steady_clock::now();
    ImageStore store = ImageStore::open(dataset.root, dataset.images);
    std::vector<std::string> image_names, captions;
    std::map<std::string, std::size_t> image_index, caption_index;
    for (const auto& ex : dataset.examples) {
      for (std::size_t k = 0; k < 2; ++k) {
        if (image_index.emplace(ex.images[k], image_names.size()).second) {
          image_names.push_back(ex.images[k]);
        }
        if (caption_index.emplace(ex.captions[k], captions.size()).second) {
          captions.push_back(ex.captions[k]);
        }
      }
    }
    std::vector<std::function<ImageBytes()>> images;
    for (const auto& n : image_names)
      images.emplace_back([&store, n] { return store.read(n); });
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> pair_slot;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (const auto& ex : dataset.examples) {
      for (std::size_t c = 0; c < 2; ++c) {
        for (std::size_t i = 0; i < 2; ++i) {
          const std::pair<std::size_t, std::size_t> key = {caption_index[ex.captions[c]],
                                                           image_index[ex.images[i]]};
          if (pair_slot.emplace(key, pairs.size()).second) pairs.push_back(key);
        }
      }
    }
    const std::vector<double> s = flava_score_pairs(rt_, images, captions, pairs);
    std::vector<WinogroundScores> out(dataset.examples.size());
    for (std::size_t e = 0; e < dataset.examples.size(); ++e) {
      const auto& ex = dataset.examples[e];
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < 2; ++i) {
          const std::size_t p = pair_slot[{caption_index[ex.captions[static_cast<std::size_t>(c)]],
                                           image_index[ex.images[static_cast<std::size_t>(i)]]}];
          out[e].s[pair_index(c, i)] = s[p];
        }
      }
    }
    images_ = image_names.size();
    captions_ = captions.size();
    pairs_ = pairs.size();
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

 private:
  FlavaRuntime rt_;
  std::string name_;
  std::size_t images_ = 0, captions_ = 0, pairs_ = 0;
  double seconds_ = 0;
};

}  // namespace

std::unique_ptr<Scorer> make_flava_scorer(const FlavaRuntime& runtime, std::string name) {
  return std::make_unique<FlavaScorer>(runtime, std::move(name));
}

SolveResult flava_solve_with_images(const FlavaRuntime& rt, const AssociationDataset& ds,
                                    const std::map<std::string, fs::path>& images,
                                    const AssociationSolveOptions& options) {
  std::vector<std::function<ImageBytes()>> readers;
  std::map<std::string, std::size_t> image_index;
  for (const auto& [name, path] : images) {
    image_index[name] = readers.size();
    readers.emplace_back([name = name, path = path] {
      ImageBytes b;
      b.name = name;
      b.source = path.string();
      b.bytes = read_file(path);
      return b;
    });
  }
  std::vector<std::string> prompts;
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t q = 0; q < ds.instances.size(); ++q) {
    const auto& inst = ds.instances[q];
    prompts.push_back(cue_prompt(inst.cue, options.prompt_template));
    for (const auto& c : inst.candidates) {
      auto it = image_index.find(c);
      if (it == image_index.end()) throw UsageError("candidate '" + c + "' has no image");
      pairs.emplace_back(q, it->second);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> s = flava_score_pairs(rt, readers, prompts, pairs);
  SolveResult r;
  std::size_t p = 0;
  for (const auto& inst : ds.instances) {
    std::vector<double> scores(s.begin() + static_cast<std::ptrdiff_t>(p),
                               s.begin() + static_cast<std::ptrdiff_t>(p + inst.candidates.size()));
    p += inst.candidates.size();
    r.predictions.push_back(select_top_k(inst.candidates, scores, inst.k()));
    r.scores.push_back(std::move(scores));
  }
  r.stats.images_computed = images.size();
  r.stats.texts_computed = prompts.size();
  r.stats.image_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

ScoreMatrix flava_score_matrix(const FlavaRuntime& rt, const WinogroundDataset& dataset) {
  ImageStore store = ImageStore::open(dataset.root, dataset.images);
  std::vector<std::function<ImageBytes()>> images;
  std::vector<std::string> captions;
  for (const auto& ex : dataset.examples) {
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string n = ex.images[k];
      images.emplace_back([&store, n] { return store.read(n); });
      captions.push_back(ex.captions[k]);
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t c = 0; c < captions.size(); ++c)
    for (std::size_t i = 0; i < images.size(); ++i)
      pairs.emplace_back(c, i);
  const std::vector<double> s = flava_score_pairs(rt, images, captions, pairs);
  ScoreMatrix m;
  m.captions = static_cast<int>(captions.size());
  m.images = static_cast<int>(images.size());
  m.scores.assign(s.begin(), s.end());
  return m;
}

}  // namespace winokit
