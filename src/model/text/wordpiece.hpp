// The BERT WordPiece tokenizer (vocab.txt), as transformers' BertTokenizer runs it: text
// cleaning (NUL, U+FFFD and control characters dropped, whitespace made spaces), spaces around
// CJK ideographs, NFC, whitespace split, lower-casing and accent stripping (NFD, marks Mn
// dropped), punctuation split, then greedy longest-match-first word pieces ("##" continuation,
// [UNK] for a word with no cover or over 100 characters). Special tokens written in the text
// ([CLS], [SEP], [PAD], [UNK], [MASK]) stay single tokens. Shared by ViLT and FLAVA.
//
//   winokit::WordPieceTokenizer tok = winokit::WordPieceTokenizer::load("vilt-b32-coco/");
//   std::vector<std::string> pieces = tok.tokenize("A dog bites a man.");
//   std::vector<int> ids = tok.encode("A dog bites a man.", 40);  // [CLS] ... [SEP], truncated
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

struct WordPieceOptions {
  bool lower_case = true;
  // Unset: follow lower_case (as the original BERT does).
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
};

class WordPieceTokenizer {
 public:
  // `path`: a vocab.txt file, or a folder holding vocab.txt (and optionally
  // tokenizer_config.json, whose do_lower_case / strip_accents / tokenize_chinese_chars are
  // read). One token a line (\n, \r\n or \r); a token listed twice keeps its last line, as
  // transformers' load_vocab does. Throws IoError when the file is missing, InputError naming
  // the file when it is not UTF-8 or lacks [CLS], [SEP] or [UNK].
  static WordPieceTokenizer load(const std::filesystem::path& path);
  static WordPieceTokenizer from_vocab(std::vector<std::string> vocab, WordPieceOptions options);

  // The word pieces of `text` (valid UTF-8), without [CLS] / [SEP].
  std::vector<std::string> tokenize(const std::string& text) const;
  // [CLS] pieces [SEP] as ids; when longer than max_length (> 2), the pieces are cut at the
  // end so that the sequence, [SEP] included, is max_length long (transformers' truncation).
  std::vector<int> encode(const std::string& text, int max_length) const;

  int id(const std::string& token) const;  // the [UNK] id when absent
  const std::string& token_text(int id) const;
  int cls_id() const { return cls_; }
  int sep_id() const { return sep_; }
  int unk_id() const { return unk_; }
  std::size_t vocab_size() const { return vocab_.size(); }
  const WordPieceOptions& options() const { return options_; }
  // SHA-256 of vocab.txt's bytes (or of the joined vocabulary).
  const std::string& vocab_sha256() const { return sha_; }

 private:
  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int> index_;
  WordPieceOptions options_;
  int cls_ = -1, sep_ = -1, unk_ = -1;
  std::string sha_;
};

}  // namespace winokit
