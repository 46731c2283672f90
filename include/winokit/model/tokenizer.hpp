// The CLIP byte-level BPE tokenizer, reproducing openai/CLIP's simple_tokenizer.py (and Hugging
// Face's CLIPTokenizer with ftfy): NFC normalisation (as ftfy.fix_text does), HTML unescaping
// (twice), trimming, white-space collapsing, lower-casing, the CLIP pre-token pattern
// (<|startoftext|>, <|endoftext|>, contractions 's 't 're 've 'm 'll 'd, runs of letters, single
// digits, runs of other non-space characters; by Unicode category), byte-level BPE with the
// merges, start/end tokens and truncation to the context length with the last id forced to
// end-of-text. ftfy's mojibake repair is not applied (it is the identity on well-formed text).
//
//   auto tok = winokit::ClipTokenizer::from_hf("vocab.json", "merges.txt");
//   auto tok2 = winokit::ClipTokenizer::from_openai("bpe_simple_vocab_16e6.txt.gz");
//   std::vector<int> ids = tok.encode("a photo of a dog.");   // 49406 ... 49407, unpadded
//   std::vector<int> bpe = tok.bpe_ids("a photo");            // no special tokens
//
// The GPT-2 byte-level BPE tokenizer, byte-exact with openai/gpt-2's encoder.py: no cleaning, no
// lower-casing, GPT-2's pre-token pattern ('s 't 're 've 'm 'll 'd, ` ?\p{L}+`, ` ?\p{N}+`,
// ` ?[^\s\p{L}\p{N}]+`, `\s+(?!\S)`, `\s+`; \s is Unicode White_Space as in the regex module),
// then the same BPE merge loop as CLIP's (without CLIP's end-of-word marker).
//
//   auto gpt2 = winokit::Gpt2Tokenizer::from_directory("gpt2/");  // vocab.json + merges.txt
//   std::vector<int> ids = gpt2.encode("Hello world");           // {15496, 995}
//
// Both refuse files that look truncated: every merge's result must be in the vocabulary, and
// the vocabulary must hold exactly the byte symbols, one entry per merge and the special tokens.
#pragma once

#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

class ClipTokenizer {
 public:
  static constexpr int kContextLength = 77;

  static ClipTokenizer from_hf(const std::filesystem::path& vocab_json,
                               const std::filesystem::path& merges_txt);
  static ClipTokenizer from_openai(const std::filesystem::path& bpe_gz);
  // The byte-level vocabulary with no merges (every UTF-8 byte is a token) and CLIP's special
  // ids 49406 / 49407: needs no files; used with random-weight models (demo, benchmarks).
  static ClipTokenizer byte_level();
  // Looks in `dir` for vocab.json + merges.txt, then bpe_simple_vocab_16e6.txt.gz.
  static ClipTokenizer from_directory(const std::filesystem::path& dir);

  // Start + BPE ids + end, truncated to `context_length` with the last id end-of-text.
  // Throws UsageError for invalid UTF-8.
  std::vector<int> encode(const std::string& text, int context_length = kContextLength) const;
  std::vector<int> bpe_ids(const std::string& text) const;
  // The text of one token id ("dog" for "dog</w>"; bytes decoded back to UTF-8 where whole).
  std::string token_text(int id) const;
  int start_id() const { return start_id_; }
  int end_id() const { return end_id_; }
  std::size_t vocab_size() const { return vocab_.size(); }
  // The cleaned, lower-cased text the pre-tokenizer sees (for tests and debugging).
  static std::string clean(const std::string& text);
  // The pre-tokens of cleaned text.
  static std::vector<std::string> pre_tokenize(const std::string& cleaned);

 private:
  void build_from_merges(const std::vector<std::pair<std::string, std::string>>& merges);
  std::vector<std::string> bpe(const std::string& token) const;
  std::unordered_map<std::string, int> vocab_;
  std::unordered_map<std::string, int> ranks_;  // "first second" -> rank
  int start_id_ = 0, end_id_ = 0;
};

class Gpt2Tokenizer {
 public:
  // Hugging Face's vocab.json + merges.txt, or openai/gpt-2's encoder.json + vocab.bpe (the same
  // formats). Throws InputError naming the file for malformed or truncated files.
  static Gpt2Tokenizer from_files(const std::filesystem::path& vocab_json,
                                  const std::filesystem::path& merges_txt);
  // vocab.json + merges.txt, else encoder.json + vocab.bpe, in `dir`.
  static Gpt2Tokenizer from_directory(const std::filesystem::path& dir);

  // The BPE ids of `text` (no special tokens). Throws UsageError for invalid UTF-8.
  std::vector<int> encode(const std::string& text) const;
  // The pre-tokens of `text` (GPT-2's regex split).
  static std::vector<std::string> pre_tokenize(const std::string& text);
  int eos_id() const { return eos_id_; }  // <|endoftext|>
  std::size_t vocab_size() const { return vocab_.size(); }
  int max_id() const { return max_id_; }

 private:
  std::unordered_map<std::string, int> vocab_;
  std::unordered_map<std::string, int> ranks_;  // "first second" -> rank
  int eos_id_ = 0, max_id_ = 0;
};

// Python's html.unescape: named (HTML 4 set, with the legacy forms without ';'), decimal and
// hexadecimal character references, with its replacements for invalid code points.
std::string html_unescape(const std::string& text);

}  // namespace winokit
