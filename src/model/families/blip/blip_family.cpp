// BLIP as a VlModel (the registry's "blip" family): pair scores with the ITM or ITC head, every
// image encoded once, every caption tokenised once, pairs batched, all through the pair cache.
#include <algorithm>
#include <exception>

#include "model/families/blip/blip_model.hpp"
#include "model/kernels/parallel.hpp"
#include "model/runtime/cross_encoder.hpp"
#include "model/text/wordpiece.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

bool is_blip_checkpoint(const fs::path& checkpoint) {
  return checkpoint_model_type(checkpoint) == "blip";
}

namespace {

// At most this many encoded images are held while their pairs wait for a forward: an image's
// cross-attention keys and values are tokens x 2 x text width per text layer (42 MB at
// blip-itm-base's shapes). Which pairs share a forward never changes a score's bits.
constexpr std::size_t kMaxLiveImages = 8;

// A caption for BLIP: its ids, and for the ITC head its projected text feature.
struct BlipText {
  std::vector<int> ids;
  std::vector<float> feature;
};

// BLIP's encodings and scorer for the cross-encoder runtime.
class BlipTowers final : public detail::CrossTowers<BlipImageEmbeds, BlipText> {
 public:
  BlipTowers(const BlipModel& model, const WordPieceTokenizer& tokenizer, BlipHead head,
             int batch_size)
      : model_(model),
        tokenizer_(tokenizer),
        head_(head),
        batch_(static_cast<std::size_t>(std::max(1, batch_size))) {}
  // Read, decoded and preprocessed one per thread, then encoded together
  // (BlipModel::encode_images: whole images per thread). The first failure is thrown.
  std::vector<BlipImageEmbeds> encode_images(
      const std::vector<std::function<ImageBytes()>>& images) const override {
    std::vector<std::vector<float>> px(images.size());
    if (const std::exception_ptr f =
            detail::for_each_item(static_cast<int>(images.size()), true, [&](int j) {
              const std::size_t k = static_cast<std::size_t>(j);
              px[k] = blip_preprocess(decode_image(images[k]()), model_.config());
            })) {
      std::rethrow_exception(f);
    }
    std::vector<const float*> ptrs;
    for (const auto& p : px)
      ptrs.push_back(p.data());
    return model_.encode_images(ptrs, /*with_cross=*/head_ == BlipHead::Itm);
  }
  std::vector<BlipText> encode_texts(
      const std::vector<const std::string*>& captions) const override {
    std::vector<BlipText> out(captions.size());
    std::vector<const std::vector<int>*> ids;
    for (std::size_t k = 0; k < captions.size(); ++k) {
      out[k].ids = tokenizer_.encode(*captions[k], model_.config().max_text_len);
      ids.push_back(&out[k].ids);
    }
    if (head_ == BlipHead::Itc && !ids.empty()) {
      const std::size_t D = static_cast<std::size_t>(model_.config().embed_dim);
      const std::vector<float> f = model_.text_features(ids);
      for (std::size_t k = 0; k < out.size(); ++k)
        out[k].feature.assign(f.begin() + static_cast<std::ptrdiff_t>(k * D),
                              f.begin() + static_cast<std::ptrdiff_t>((k + 1) * D));
    }
    return out;
  }
  std::vector<double> score(const std::vector<const BlipText*>& texts,
                            const std::vector<const BlipImageEmbeds*>& images) const override {
    std::vector<double> out(texts.size());
    if (head_ == BlipHead::Itc) {
      const int D = model_.config().embed_dim;
      for (std::size_t k = 0; k < texts.size(); ++k)
        out[k] = blip_cosine(images[k]->feature.data(), texts[k]->feature.data(), D);
      return out;
    }
    std::vector<const std::vector<int>*> ids;
    for (const BlipText* t : texts)
      ids.push_back(&t->ids);
    const std::vector<float> logits = model_.itm_logits(ids, images);
    for (std::size_t k = 0; k < texts.size(); ++k)
      out[k] = blip_itm_probability(&logits[k * 2]);
    return out;
  }
  // One image per compute thread, at most kMaxLiveImages.
  std::size_t image_group() const override {
    return std::clamp<std::size_t>(static_cast<std::size_t>(compute_threads()), 1, kMaxLiveImages);
  }
  std::size_t max_live_images() const override { return kMaxLiveImages; }
  std::size_t pair_batch() const override { return batch_; }
  std::size_t text_batch() const override { return batch_; }

 private:
  const BlipModel& model_;
  const WordPieceTokenizer& tokenizer_;
  BlipHead head_;
  std::size_t batch_;
};

class BlipVlModel final : public detail::CrossEncoderModel<BlipImageEmbeds, BlipText> {
 public:
  BlipVlModel(const fs::path& checkpoint, const ModelOptions& options, BlipHead head)
      : CrossEncoderModel(options),
        checkpoint_(checkpoint),
        head_(head),
        model_(BlipModel::load(checkpoint)),
        tokenizer_(WordPieceTokenizer::load(checkpoint)),
        towers_(model_, tokenizer_, head, options.batch_size) {
    const BlipConfig& c = model_.config();
    if (tokenizer_.vocab_size() > static_cast<std::size_t>(c.vocab_size)) {
      throw InputError({(checkpoint / "vocab.txt").string(), 0, ""},
                       "the vocabulary has " + std::to_string(tokenizer_.vocab_size()) +
                           " tokens but the model's vocab_size is " + std::to_string(c.vocab_size));
    }
    pad_id_ = tokenizer_.id("[PAD]");
  }
  BlipVlModel(const BlipVlModel&) = delete;  // towers_ refers to the members
  BlipVlModel& operator=(const BlipVlModel&) = delete;

  std::string family() const override { return "blip"; }
  std::string name() const override {
    return checkpoint_name(checkpoint_) + "-" + to_string(head_);  // blip-itm-base-coco-itm
  }
  std::vector<Ability> abilities() const override { return {Ability::PairScores}; }
  std::vector<std::string> heads() const override { return {"itm", "itc"}; }
  std::string head() const override { return to_string(head_); }
  std::string retrieval_head() const override { return "itc"; }
  std::string score_name() const override { return head_ == BlipHead::Itm ? "P(match)" : "cos"; }

  nlohmann::json describe() const override {
    const BlipConfig& c = model_.config();
    return {{"kind", "blip"},
            {"family", "blip"},
            {"model", checkpoint_.string()},
            {"weights_sha256", model_.weights_id()},
            {"config", c.to_json()},
            {"head", to_string(head_)},
            {"score", head_ == BlipHead::Itm
                          ? "ITM softmax probability of match (itm_head on the text encoder's "
                            "[CLS] state, with cross-attention to the image)"
                          : "ITC cosine of normalize(vision_proj(image [CLS])) and "
                            "normalize(text_proj(text [CLS])), text encoder without the image, "
                            "no logit scale"},
            {"tokenizer",
             {{"kind", "BERT WordPiece"},
              {"vocab_sha256", tokenizer_.vocab_sha256()},
              {"lower_case", tokenizer_.options().lower_case},
              {"special_ids",
               {{"cls", tokenizer_.cls_id()},
                {"sep", tokenizer_.sep_id()},
                {"pad", pad_id_},
                {"unk", tokenizer_.unk_id()}}},
              {"first_token", "[CLS] (Hugging Face BlipProcessor; not LAVIS's [ENC])"},
              {"max_length", c.max_text_len},
              {"truncation", "to max_position_embeddings, [SEP] last"}}},
            {"preprocess", c.preprocess_json()},
            {"precision", "float32"},
            {"compute", compute_record()},
            {"threads", compute_threads()},
            {"batch_size", options().batch_size}};
  }

 protected:
  const detail::CrossTowers<BlipImageEmbeds, BlipText>& towers() const override { return towers_; }
  // Weights, kernels, head, shapes and vocabulary: what a cached score depends on (the image
  // processor is part of each pair's key).
  std::string signature() const override {
    return "blip\n" + model_.weights_id() + "\n" + kernel_version() + "\nhead=" + to_string(head_) +
           "\n" + model_.config().to_json().dump() + "\n" + tokenizer_.vocab_sha256();
  }
  std::string pair_preprocess_json() const override {
    return model_.config().preprocess_json().dump();
  }

 private:
  fs::path checkpoint_;
  BlipHead head_;
  BlipModel model_;
  WordPieceTokenizer tokenizer_;
  BlipTowers towers_;
  int pad_id_ = 0;
};

}  // namespace

std::unique_ptr<VlModel> open_blip(const fs::path& checkpoint, const ModelOptions& options) {
  if (!options.head.empty() && options.head != "itm" && options.head != "itc") {
    throw UsageError("--head: BLIP's heads are itm and itc, not '" + options.head + "'");
  }
  const BlipHead head = options.head.empty() ? BlipHead::Itm : parse_blip_head(options.head);
  return std::make_unique<BlipVlModel>(checkpoint, options, head);
}

}  // namespace winokit
