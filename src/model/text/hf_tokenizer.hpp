// A Hugging Face tokenizer.json reader for byte-level BPE tokenizers (GPT-2 style: SmolLM2 /
// SmolVLM, Llama-family byte-level vocabularies), reproducing the `tokenizers` library's
// pipeline for what the file defines:
// - added_tokens are matched first, leftmost-longest, on the raw text (lstrip / rstrip swallow
//   the white space beside them); the text between them goes through the rest;
// - normalizer: none or NFC (others are refused by name), on the text between added tokens;
// - pre_tokenizer: ByteLevel (add_prefix_space per piece, use_regex: GPT-2's pattern), Digits
//   (individual_digits: every ASCII digit alone; else runs of them), Split (Isolated) with
//   GPT-2's, Qwen2's or Llama 3's pattern, and a Sequence of these; other patterns are refused
//   by name;
// - model: BPE with vocab and merges ("a b" strings or ["a", "b"] pairs), ignore_merges, the
//   byte-level alphabet; the merge loop merges the lowest-ranked adjacent pair, leftmost first;
// - post_processor: none, ByteLevel, TemplateProcessing (its "single" template) and a Sequence.
//
//   winokit::HfTokenizer tok = winokit::HfTokenizer::from_file("SmolVLM-256M/tokenizer.json");
//   std::vector<int> ids = tok.encode("<|im_start|>User: hi", false);
//   int yes = tok.token_id("Yes");   // -1 when absent
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

class HfTokenizer {
 public:
  // Throws IoError when the file is unreadable, InputError naming the file and the field for a
  // malformed or unsupported one.
  static HfTokenizer from_file(const std::filesystem::path& tokenizer_json);
  static HfTokenizer from_json(const nlohmann::json& tokenizer, const std::string& where);

  // The ids of `text`; with `add_special_tokens`, the post_processor's template around them.
  // UsageError for invalid UTF-8.
  std::vector<int> encode(const std::string& text, bool add_special_tokens = false) const;
  // The ids the post_processor's template puts before and after a sequence.
  const std::vector<int>& special_prefix() const { return prefix_ids_; }
  const std::vector<int>& special_suffix() const { return suffix_ids_; }
  // The pieces the pre-tokenizer makes of text without added tokens (tests).
  std::vector<std::string> pre_tokenize(const std::string& text) const;
  // The id of a token string (vocabulary or added token), or -1.
  int token_id(const std::string& token) const;
  // The token string of an id ("" when unknown).
  std::string token(int id) const;
  // One more than the largest id (vocabulary or added token): the embedding rows a model needs.
  std::size_t vocab_size() const { return static_cast<std::size_t>(max_id_) + 1; }
  // SHA-256 of the file it was read from (or of the JSON text).
  const std::string& sha256() const { return sha256_; }

 private:
  struct Step {
    enum class Kind { ByteLevel, Digits, SplitGpt2, SplitQwen } kind;
    bool flag = false;  // ByteLevel: add_prefix_space; Digits: individual_digits
    bool regex = true;  // ByteLevel: use_regex
    int digits = 1;     // SplitQwen: \p{N}{1,digits} (Qwen2: 1, Llama 3: 3)
  };
  struct Added {
    std::string content;
    int id = 0;
    bool lstrip = false, rstrip = false;
  };
  static HfTokenizer parse(const nlohmann::json& tokenizer, const std::string& where);
  std::vector<int> bpe_ids(const std::string& piece) const;

  std::unordered_map<std::string, int> vocab_;
  std::unordered_map<std::string, int> ranks_;  // first + '\0' + second -> rank
  std::map<int, std::string> id_to_token_;
  // Hashes a string or a string_view alike (lookups of a slice of the text without a copy).
  struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<Added> added_;  // file order, one per content
  std::unordered_map<std::string, std::size_t, TextHash, std::equal_to<>> added_index_;
  std::vector<std::size_t> added_lengths_;  // the distinct contents' lengths, longest first
  std::vector<Step> steps_;
  bool ignore_merges_ = false;
  bool nfc_ = false;
  int max_id_ = 0;
  std::vector<int> prefix_ids_, suffix_ids_;  // TemplateProcessing's single template
  std::string sha256_;
};

}  // namespace winokit
