// The cross-encoder runtime: everything between a family that scores (caption, image) pairs
// with a joint forward (BLIP, ViLT, FLAVA) and the model interface. A family supplies its
// encodings of an image and of a caption and its scorer (CrossTowers); the runtime does the rest
// the same way for every family:
//   - the pair cache (cached_pair_scores: keyed by the family's signature, the image's SHA-256
//     and preprocessing, the caption);
//   - the missing pairs grouped by image: each image read and encoded once, image_group() at a
//     time, held until its last pair has been through a forward, never more than
//     max_live_images() at once; each caption encoded once; pairs scored pair_batch() at a time;
//   - progress ("pairs"), statistics (images, captions, their seconds);
//   - PreparedImages (the game's rival): the pool's encodings kept, captions encoded per call.
// Which pairs share a forward never changes a score's bits (kernels.hpp).
//
//   class MyTowers final : public detail::CrossTowers<MyImage, MyText> { ... };
//   class MyVlModel final : public detail::CrossEncoderModel<MyImage, MyText> { ... };
//
// Internal to src/model.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "model/runtime/run_checks.hpp"
#include "winokit/core/error.hpp"
#include "winokit/model/vl_model.hpp"

namespace winokit::detail {

template <typename ImageCode, typename TextCode>
class CrossTowers {
 public:
  virtual ~CrossTowers() = default;
  // Read, decode, preprocess and encode the images (at most image_group() of them).
  virtual std::vector<ImageCode> encode_images(
      const std::vector<std::function<ImageBytes()>>& images) const = 0;
  // Tokenise (and, where the text side has a tower of its own, encode) the captions.
  virtual std::vector<TextCode> encode_texts(
      const std::vector<const std::string*>& captions) const = 0;
  // s(texts[k], images[k]) for each k (at most pair_batch() pairs).
  virtual std::vector<double> score(const std::vector<const TextCode*>& texts,
                                    const std::vector<const ImageCode*>& images) const = 0;
  virtual std::size_t image_group() const = 0;      // images encoded together
  virtual std::size_t max_live_images() const = 0;  // images held while their pairs wait
  virtual std::size_t pair_batch() const = 0;       // pairs per forward
  virtual std::size_t text_batch() const = 0;       // captions per encode_texts call
};

// The captions `which` (indices into `captions`), encoded text_batch() at a time.
template <typename I, typename T>
std::map<std::size_t, T> encode_caption_set(const CrossTowers<I, T>& towers,
                                            const std::vector<std::string>& captions,
                                            const std::vector<std::size_t>& which) {
  std::map<std::size_t, T> out;
  const std::size_t batch = std::max<std::size_t>(1, towers.text_batch());
  for (std::size_t b = 0; b < which.size(); b += batch) {
    const std::size_t e = std::min(which.size(), b + batch);
    std::vector<const std::string*> chunk;
    for (std::size_t k = b; k < e; ++k)
      chunk.push_back(&captions[which[k]]);
    std::vector<T> codes = towers.encode_texts(chunk);
    for (std::size_t k = b; k < e; ++k)
      out.emplace(which[k], std::move(codes[k - b]));
  }
  return out;
}

// The scores of pairs[misses[k]] for each k (cached_pair_scores' compute step).
template <typename I, typename T>
std::vector<double> cross_encoder_scores(
    const CrossTowers<I, T>& towers, const std::vector<ImageRequest>& images,
    const std::vector<std::string>& captions, const std::vector<PairIndex>& pairs,
    const std::vector<std::size_t>& misses, EmbedStats* stats,
    const std::function<void(const std::string&, std::size_t, std::size_t)>& on_progress) {
  // Each caption a miss needs, encoded once.
  std::vector<std::size_t> caption_list;
  {
    std::vector<char> used(captions.size(), 0);
    for (std::size_t k : misses)
      used[pairs[k].first] = 1;
    for (std::size_t c = 0; c < captions.size(); ++c)
      if (used[c]) caption_list.push_back(c);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::map<std::size_t, T> text = encode_caption_set(towers, captions, caption_list);
  if (stats) {
    stats->text_seconds += seconds_since(t0);
    stats->texts_computed += caption_list.size();
  }
  // Misses grouped by image: each image is read and encoded once, held until its last pair has
  // been through a forward.
  std::map<std::size_t, std::vector<std::size_t>> by_image;
  for (std::size_t k = 0; k < misses.size(); ++k)
    by_image[pairs[misses[k]].second].push_back(k);
  std::vector<double> out(misses.size());
  const std::size_t batch = std::max<std::size_t>(1, towers.pair_batch());
  const std::size_t max_live = std::max<std::size_t>(1, towers.max_live_images());
  const std::size_t group = std::clamp<std::size_t>(towers.image_group(), 1, max_live);
  std::size_t done = 0;
  std::map<std::size_t, I> live;
  std::vector<std::size_t> queue;  // positions in misses waiting for a forward
  // A forward of the queued pairs; then the live images not in `keep` (those whose pairs are not
  // all queued yet) are dropped.
  auto flush = [&](const std::vector<std::size_t>& keep) {
    if (!queue.empty()) {
      std::vector<const T*> bt;
      std::vector<const I*> bi;
      for (std::size_t k : queue) {
        bt.push_back(&text.at(pairs[misses[k]].first));
        bi.push_back(&live.at(pairs[misses[k]].second));
      }
      const std::vector<double> s = towers.score(bt, bi);
      for (std::size_t q = 0; q < queue.size(); ++q)
        out[queue[q]] = s[q];
      done += queue.size();
      queue.clear();
      if (on_progress) on_progress("pairs", done, misses.size());
    }
    for (auto it = live.begin(); it != live.end();) {
      it = std::find(keep.begin(), keep.end(), it->first) != keep.end() ? std::next(it)
                                                                        : live.erase(it);
    }
  };
  const std::vector<std::pair<std::size_t, std::vector<std::size_t>>> order(by_image.begin(),
                                                                            by_image.end());
  for (std::size_t g0 = 0; g0 < order.size(); g0 += group) {
    const std::size_t g1 = std::min(order.size(), g0 + group);
    if (live.size() + (g1 - g0) > max_live) flush({});
    std::vector<std::size_t> which;
    std::vector<std::function<ImageBytes()>> readers;
    for (std::size_t j = g0; j < g1; ++j) {
      which.push_back(order[j].first);
      readers.push_back(images[order[j].first].read);
    }
    const auto ti = std::chrono::steady_clock::now();
    std::vector<I> encoded = towers.encode_images(readers);
    if (stats) {
      stats->image_seconds += seconds_since(ti);
      stats->images_computed += which.size();
    }
    for (std::size_t j = 0; j < which.size(); ++j)
      live.emplace(which[j], std::move(encoded[j]));
    for (std::size_t j = g0; j < g1; ++j) {
      for (std::size_t k : order[j].second) {
        queue.push_back(k);
        if (queue.size() >= batch) {
          flush(std::vector<std::size_t>(which.begin() + static_cast<std::ptrdiff_t>(j - g0),
                                         which.end()));
        }
      }
    }
  }
  flush({});
  return out;
}

// Every pair of `pairs` (indices into `images` and `captions`, checked: UsageError naming
// `family`), without the pair cache: the families' own entry points (vilt_score_pairs, ...).
template <typename I, typename T>
std::vector<double> score_all_pairs(
    const CrossTowers<I, T>& towers, const std::vector<std::function<ImageBytes()>>& images,
    const std::vector<std::string>& captions, const std::vector<PairIndex>& pairs,
    const std::string& family,
    const std::function<void(const std::string&, std::size_t, std::size_t)>& on_progress) {
  std::vector<ImageRequest> requests;
  for (const auto& read : images)
    requests.push_back({"", read, nullptr});
  std::vector<std::size_t> all(pairs.size());
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    if (pairs[p].first >= captions.size() || pairs[p].second >= images.size()) {
      throw UsageError(family + ": pair index out of range");
    }
    all[p] = p;
  }
  return cross_encoder_scores(towers, requests, captions, pairs, all, nullptr, on_progress);
}

// The pool's image encodings kept in memory; each call encodes its captions and scores its
// pairs, grouped by image (adjacent pairs share an image's encoding), pair_batch() at a time.
template <typename I, typename T>
class CrossPreparedImages final : public PreparedImages {
 public:
  CrossPreparedImages(const CrossTowers<I, T>& towers, const std::vector<ImageRequest>& images)
      : towers_(towers) {
    const std::size_t group = std::max<std::size_t>(1, towers.image_group());
    for (std::size_t g0 = 0; g0 < images.size(); g0 += group) {
      std::vector<std::function<ImageBytes()>> readers;
      for (std::size_t j = g0; j < std::min(images.size(), g0 + group); ++j)
        readers.push_back(images[j].read);
      for (I& code : towers.encode_images(readers))
        images_.push_back(std::move(code));
    }
  }
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
    std::vector<std::size_t> order(pairs.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      if (pairs[p].first >= captions.size() || pairs[p].second >= images_.size()) {
        throw UsageError("pair (caption " + std::to_string(pairs[p].first) + ", image " +
                         std::to_string(pairs[p].second) + ") is out of range");
      }
      order[p] = p;
    }
    std::vector<std::size_t> all(captions.size());
    for (std::size_t c = 0; c < captions.size(); ++c)
      all[c] = c;
    const std::map<std::size_t, T> text = encode_caption_set(towers_, captions, all);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return pairs[a].second < pairs[b].second;
    });
    std::vector<double> out(pairs.size());
    const std::size_t batch = std::max<std::size_t>(1, towers_.pair_batch());
    for (std::size_t b = 0; b < order.size(); b += batch) {
      const std::size_t e = std::min(order.size(), b + batch);
      std::vector<const T*> bt;
      std::vector<const I*> bi;
      for (std::size_t k = b; k < e; ++k) {
        bt.push_back(&text.at(pairs[order[k]].first));
        bi.push_back(&images_[pairs[order[k]].second]);
      }
      const std::vector<double> s = towers_.score(bt, bi);
      for (std::size_t k = b; k < e; ++k)
        out[order[k]] = s[k - b];
    }
    return out;
  }

 private:
  const CrossTowers<I, T>& towers_;
  std::vector<I> images_;
  mutable std::mutex mutex_;
};

// The VlModel side of a cross-encoder: pair scores through the pair cache and the runtime above,
// and PreparedImages. A family's adapter adds its description, heads and names.
template <typename I, typename T>
class CrossEncoderModel : public VlModel {
 public:
  explicit CrossEncoderModel(ModelOptions options) : options_(std::move(options)) {}
  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    // cached_pair_scores checks the indices; a non-finite score is returned, never cached.
    return cached_pair_scores(images, captions, pairs, options_, signature(),
                              pair_preprocess_json(), stats,
                              [&](const std::vector<std::size_t>& misses) {
                                return cross_encoder_scores(towers(), images, captions, pairs,
                                                            misses, stats, options_.on_progress);
                              });
  }
  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override {
    return std::make_unique<CrossPreparedImages<I, T>>(towers(), images);
  }

 protected:
  virtual const CrossTowers<I, T>& towers() const = 0;
  // What a cached pair score depends on: the weights, the kernels, the config, the vocabulary,
  // the head.
  virtual std::string signature() const = 0;
  // The image processing, when it is not part of the signature (each pair's cache key has it).
  virtual std::string pair_preprocess_json() const { return {}; }
  const ModelOptions& options() const { return options_; }

 private:
  ModelOptions options_;
};

}  // namespace winokit::detail
