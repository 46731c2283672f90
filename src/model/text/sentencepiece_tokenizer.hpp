// SentencePiece models (Debian's libsentencepiece) and the SigLIP tokenizer built on one
// (transformers' SiglipTokenizer + PreTrainedTokenizer.tokenize,
// tests/fixtures/README_siglip_blip.md).
//
//   winokit::SiglipTokenizer tok =
//   winokit::SiglipTokenizer::from_directory("siglip-base-patch16-224/"); winokit::SiglipTokens t =
//   tok.encode("A dog bites a man.");   // 64 ids, </s> padded std::vector<std::string> pieces =
//   tok.tokenize("a dog");       // "▁a", "▁dog"
//
// SiglipTokenizer, for one text: "▁" + text (existing "▁" become spaces); lower case one code
// point at a time (no final-sigma rule); split on the special tokens "</s>" and "<unk>"
// (whitespace stripped on both sides of them); each other chunk loses its ASCII punctuation,
// its whitespace runs become one space and it is stripped; SentencePiece (add_dummy_prefix
// off, as transformers loads it) encodes "<unk>" + chunk and the pieces of "<unk>" are dropped;
// a leading "▁" piece before a special token is dropped; ids truncated to max_length - 1, "</s>"
// appended (unless already last), padded with the pad token (also "</s>") to max_length.
//
// SigLIP 2 checkpoints ship Gemma's tokenizer instead (tokenizer.model, tokenizer_config.json
// with "tokenizer_class": "GemmaTokenizer"; transformers' convert_siglip2_to_hf.py makes it with
// add_bos_token false, add_eos_token true, model_input_names [input_ids]). That mode follows
// transformers' GemmaTokenizer: the text as it is (no lower case, no canonicalisation; the model
// card asks users to lower-case their texts themselves); split on the added tokens of
// added_tokens_decoder (their lstrip / rstrip), each other chunk encoded by SentencePiece with the
// file's own settings; then <bos> (add_bos_token, default true) + ids truncated to leave room for
// the special tokens + <eos> (add_eos_token, default false), padded with <pad> to max_length.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

// A SentencePiece model (spiece.model, a serialized ModelProto).
class SentencePieceModel {
 public:
  // `add_dummy_prefix`: true keeps the file's setting; false turns it off (transformers'
  // get_spm_processor for SigLIP / T5-style tokenizers). A file that is no model is an
  // InputError naming it.
  static SentencePieceModel load(const std::filesystem::path& file, bool keep_dummy_prefix);
  SentencePieceModel(SentencePieceModel&&) noexcept;
  SentencePieceModel& operator=(SentencePieceModel&&) noexcept;
  ~SentencePieceModel();

  std::vector<std::string> encode_pieces(const std::string& text) const;
  // The piece's id; the unknown id for a piece not in the vocabulary.
  int piece_to_id(const std::string& piece) const;
  int vocab_size() const;
  const std::string& sha256() const { return sha256_; }

 private:
  SentencePieceModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string sha256_;
};

struct SiglipTokens {
  std::vector<int> ids;   // max_length ids
  std::vector<int> mask;  // 1 for real ids (the final </s> included), 0 for padding
};

class SiglipTokenizer {
 public:
  // spiece.model + tokenizer_config.json (+ special_tokens_map.json) of a checkpoint folder.
  // Unset keys take SiglipTokenizer's defaults (</s>, <unk>, pad </s>, 64, lower case on,
  // model_input_names [input_ids, attention_mask]). A folder with tokenizer.model and no
  // spiece.model (SigLIP 2), or whose tokenizer_class is a Gemma tokenizer, is read in Gemma
  // mode (above).
  static SiglipTokenizer from_directory(const std::filesystem::path& dir);
  SiglipTokenizer(SiglipTokenizer&&) noexcept;
  SiglipTokenizer& operator=(SiglipTokenizer&&) noexcept;
  ~SiglipTokenizer();

  std::vector<std::string> tokenize(const std::string& text) const;
  SiglipTokens encode(const std::string& text) const;
  int max_length() const { return max_length_; }
  // tokenizer_config's model_input_names lists "attention_mask": the text model then gets the
  // mask (google's checkpoints say ["input_ids"]: no mask, the pads are attended).
  bool uses_attention_mask() const { return uses_mask_; }
  int eos_id() const { return eos_id_; }
  int pad_id() const { return pad_id_; }
  // Provenance: the spiece.model hash and the settings in use.
  nlohmann::json to_json() const;

 private:
  SiglipTokenizer(SentencePieceModel sp);
  SentencePieceModel sp_;
  std::string eos_, unk_, pad_;
  int eos_id_ = 1, pad_id_ = 1, unk_id_ = 2, max_length_ = 64;
  std::size_t unk_pieces_ = 0;
  bool lower_ = true, uses_mask_ = true;
  // Gemma mode (SigLIP 2).
  struct Added {
    std::string content;
    bool lstrip = false, rstrip = false;
  };
  bool gemma_ = false, add_bos_ = false, add_eos_ = true;
  int bos_id_ = 2;
  std::vector<Added> added_;  // longest first
  std::vector<std::string> tokenize_gemma(const std::string& text) const;
  void from_config_gemma(const std::filesystem::path& dir, const nlohmann::json& cfg);
  // model_max_length, model_input_names, do_lower_case and the special ids.
  void read_common(const std::filesystem::path& dir, const nlohmann::json& cfg);
};

// Python's str.isspace() for one code point (the whitespace SigLIP's canonicalisation collapses).
bool python_isspace(char32_t c);

}  // namespace winokit
