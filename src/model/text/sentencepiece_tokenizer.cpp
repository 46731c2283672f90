#include "model/text/sentencepiece_tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <string_view>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

// ModelProto field 3 (normalizer_spec, length 2) holding NormalizerSpec field 3
// (add_dummy_prefix, varint) = 0: appended to a serialized ModelProto it is merged into it
// (protobuf's rule), which is exactly transformers' normalizer_spec.MergeFrom(add_dummy_prefix =
// False) in get_spm_processor.
constexpr std::string_view kNoDummyPrefix("\x1a\x02\x18\x00", 4);
constexpr char32_t kSpieceUnderline = U'\u2581';
constexpr char32_t kReplacement = U'\uFFFD';
// Caps on tokenizer_config.json's model_max_length (SigLIP: 64; transformers writes a huge
// sentinel when unset, which means "the default" here).
constexpr std::int64_t kMaxLength = 4096;

std::u32string utf8_to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) {
      out.push_back(kReplacement);  // an invalid byte stands for itself as U+FFFD
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((d >> 6) != 2) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (d & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not characters.
    constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) ok = false;
    if (!ok) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<std::size_t>(len);
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

std::string u32_to_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s)
    append_utf8(out, c);
  return out;
}

// Python's str.lower() of one code point (full mapping: "İ" -> "i̇"; alone, "Σ" -> "σ").
void append_lower(std::u32string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    return;
  }
  UChar in[2];
  int32_t n_in = 0;
  if (c >= 0x10000) {
    in[0] = static_cast<UChar>(0xd800 + ((c - 0x10000) >> 10));
    in[1] = static_cast<UChar>(0xdc00 + ((c - 0x10000) & 0x3ff));
    n_in = 2;
  } else {
    in[0] = static_cast<UChar>(c);
    n_in = 1;
  }
  UChar buf[16];
  UErrorCode err = U_ZERO_ERROR;
  const int32_t n = u_strToLower(buf, 16, in, n_in, "", &err);
  if (U_FAILURE(err) || n <= 0) {
    out.push_back(c);
    return;
  }
  for (int32_t i = 0; i < n; ++i) {
    const char32_t u = buf[i];
    if (u >= 0xd800 && u < 0xdc00 && i + 1 < n) {
      out.push_back(0x10000 + ((u - 0xd800) << 10) + (static_cast<char32_t>(buf[i + 1]) - 0xdc00));
      ++i;
    } else {
      out.push_back(u);
    }
  }
}

bool is_ascii_punctuation(char32_t c) {
  // Python's string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
  return (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) ||
         (c >= 0x7b && c <= 0x7e);
}

std::u32string_view lstrip(std::u32string_view s) {
  while (!s.empty() && python_isspace(s.front()))
    s.remove_prefix(1);
  return s;
}
std::u32string_view rstrip(std::u32string_view s) {
  while (!s.empty() && python_isspace(s.back()))
    s.remove_suffix(1);
  return s;
}

// SiglipTokenizer.canonicalize_text: ASCII punctuation deleted, whitespace runs -> " ", strip.
std::u32string canonicalize(std::u32string_view text) {
  std::u32string out;
  bool in_space = false;
  for (char32_t c : text) {
    if (is_ascii_punctuation(c)) continue;
    if (python_isspace(c)) {
      if (!in_space) out.push_back(U' ');
      in_space = true;
      continue;
    }
    in_space = false;
    out.push_back(c);
  }
  return std::u32string(rstrip(lstrip(out)));
}

nlohmann::json read_json_object(const fs::path& p) {
  try {
    nlohmann::json j = nlohmann::json::parse(read_file(p));
    if (!j.is_object()) throw InputError({p.string(), 0, ""}, "expected a JSON object");
    return j;
  } catch (const nlohmann::json::exception& e) {
    throw InputError({p.string(), 0, ""}, std::string("invalid JSON: ") + e.what());
  }
}

// A special token as tokenizer_config writes it: "</s>" or {"content": "</s>", ...}.
std::string token_text(const nlohmann::json& j, const char* key, const std::string& fallback,
                       const fs::path& file) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const auto& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  throw InputError({file.string(), 0, key}, "expected a token string");
}

}  // namespace

bool python_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
         c == 0x205f || c == 0x3000;
}

// ---- SentencePieceModel ----
struct SentencePieceModel::Impl {
  sentencepiece::SentencePieceProcessor sp;
};

SentencePieceModel::SentencePieceModel() : impl_(std::make_unique<Impl>()) {}
SentencePieceModel::SentencePieceModel(SentencePieceModel&&) noexcept = default;
SentencePieceModel& SentencePieceModel::operator=(SentencePieceModel&&) noexcept = default;
SentencePieceModel::~SentencePieceModel() = default;

SentencePieceModel SentencePieceModel::load(const fs::path& file, bool keep_dummy_prefix) {
  if (!fs::is_regular_file(file)) throw IoError(file.string() + ": no SentencePiece model");
  std::string proto = read_file(file);
  SentencePieceModel m;
  m.sha256_ = sha256_hex(proto);
  if (!keep_dummy_prefix) proto.append(kNoDummyPrefix);
  const auto status = m.impl_->sp.LoadFromSerializedProto(proto);
  if (!status.ok()) {
    throw InputError({file.string(), 0, ""},
                     "not a SentencePiece model: " + std::string(status.ToString()));
  }
  return m;
}

std::vector<std::string> SentencePieceModel::encode_pieces(const std::string& text) const {
  std::vector<std::string> pieces;
  const auto status = impl_->sp.Encode(text, &pieces);
  if (!status.ok()) throw Error("SentencePiece: " + std::string(status.ToString()));
  return pieces;
}

int SentencePieceModel::piece_to_id(const std::string& piece) const {
  return impl_->sp.PieceToId(piece);
}

int SentencePieceModel::vocab_size() const {
  return impl_->sp.GetPieceSize();
}

// ---- SiglipTokenizer ----
SiglipTokenizer::SiglipTokenizer(SentencePieceModel sp) : sp_(std::move(sp)) {}
SiglipTokenizer::SiglipTokenizer(SiglipTokenizer&&) noexcept = default;
SiglipTokenizer& SiglipTokenizer::operator=(SiglipTokenizer&&) noexcept = default;
SiglipTokenizer::~SiglipTokenizer() = default;

SiglipTokenizer SiglipTokenizer::from_directory(const fs::path& dir) {
  nlohmann::json cfg = nlohmann::json::object();
  const fs::path tc = dir / "tokenizer_config.json";
  if (fs::is_regular_file(tc)) cfg = read_json_object(tc);
  const std::string cls = cfg.value("tokenizer_class", std::string());
  const bool gemma = cls.rfind("Gemma", 0) == 0 ||
                     (!fs::exists(dir / "spiece.model") && fs::exists(dir / "tokenizer.model"));
  if (gemma) {
    // Gemma's model as the file says (no dummy prefix there): GemmaTokenizer loads it as is.
    SiglipTokenizer t(
        SentencePieceModel::load(dir / "tokenizer.model", /*keep_dummy_prefix=*/true));
    t.gemma_ = true;
    t.from_config_gemma(dir, cfg);
    return t;
  }
  SiglipTokenizer t(SentencePieceModel::load(dir / "spiece.model", /*keep_dummy_prefix=*/false));
  const fs::path stm = dir / "special_tokens_map.json";
  nlohmann::json special = nlohmann::json::object();
  if (fs::is_regular_file(stm)) special = read_json_object(stm);
  // tokenizer_config.json first, then special_tokens_map.json, then SiglipTokenizer's defaults.
  auto token = [&](const char* key, const std::string& fallback) {
    return token_text(cfg, key, token_text(special, key, fallback, stm), tc);
  };
  t.eos_ = token("eos_token", "</s>");
  t.unk_ = token("unk_token", "<unk>");
  t.pad_ = token("pad_token", "</s>");
  t.read_common(dir, cfg);
  t.unk_pieces_ = t.sp_.encode_pieces(t.unk_).size();
  return t;
}

void SiglipTokenizer::from_config_gemma(const fs::path& dir, const nlohmann::json& cfg) {
  const fs::path tc = dir / "tokenizer_config.json", stm = dir / "special_tokens_map.json";
  nlohmann::json special = nlohmann::json::object();
  if (fs::is_regular_file(stm)) special = read_json_object(stm);
  auto token = [&](const char* key, const std::string& fallback) {
    return token_text(cfg, key, token_text(special, key, fallback, stm), tc);
  };
  eos_ = token("eos_token", "<eos>");
  unk_ = token("unk_token", "<unk>");
  pad_ = token("pad_token", "<pad>");
  const std::string bos = token("bos_token", "<bos>");
  lower_ = false;
  add_bos_ = true;
  add_eos_ = false;
  for (auto [key, out] :
       {std::pair<const char*, bool*>{"add_bos_token", &add_bos_}, {"add_eos_token", &add_eos_}}) {
    if (!cfg.contains(key)) continue;
    if (!cfg[key].is_boolean()) throw InputError({tc.string(), 0, key}, "expected true or false");
    *out = cfg[key].get<bool>();
  }
  read_common(dir, cfg);
  lower_ = false;  // GemmaTokenizer has no lower-casing (its do_lower_case is not read)
  bos_id_ = sp_.piece_to_id(bos);
  // The added tokens (GemmaTokenizer splits on all of them); the special ones at least.
  std::vector<Added> added;
  if (cfg.contains("added_tokens_decoder") && cfg["added_tokens_decoder"].is_object()) {
    for (const auto& [id, v] : cfg["added_tokens_decoder"].items()) {
      if (!v.is_object() || !v.contains("content") || !v["content"].is_string()) {
        throw InputError({tc.string(), 0, "added_tokens_decoder." + id},
                         "expected {\"content\": TOKEN, ...}");
      }
      added.push_back(
          {v["content"].get<std::string>(), v.value("lstrip", false), v.value("rstrip", false)});
    }
  }
  for (const std::string& sp : {bos, eos_, unk_, pad_}) {
    if (std::none_of(added.begin(), added.end(), [&](const Added& a) { return a.content == sp; }))
      added.push_back({sp, false, false});
  }
  std::stable_sort(added.begin(), added.end(), [](const Added& a, const Added& b) {
    return a.content.size() > b.content.size();
  });
  added.erase(
      std::remove_if(added.begin(), added.end(), [](const Added& a) { return a.content.empty(); }),
      added.end());
  added_ = std::move(added);
}

void SiglipTokenizer::read_common(const fs::path& dir, const nlohmann::json& cfg) {
  const fs::path tc = dir / "tokenizer_config.json";
  if (cfg.contains("do_lower_case")) {
    if (!cfg["do_lower_case"].is_boolean()) {
      throw InputError({tc.string(), 0, "do_lower_case"}, "expected true or false");
    }
    lower_ = cfg["do_lower_case"].get<bool>();
  }
  if (cfg.contains("model_max_length")) {
    const auto& v = cfg["model_max_length"];
    if (!v.is_number()) throw InputError({tc.string(), 0, "model_max_length"}, "expected a number");
    const double len = v.get<double>();
    if (len >= 1 && len <= static_cast<double>(kMaxLength)) max_length_ = static_cast<int>(len);
    if (len < 1) throw InputError({tc.string(), 0, "model_max_length"}, "expected at least 1");
  }
  if (cfg.contains("model_input_names")) {
    const auto& v = cfg["model_input_names"];
    if (!v.is_array()) {
      throw InputError({tc.string(), 0, "model_input_names"}, "expected a list of names");
    }
    uses_mask_ = false;
    for (const auto& name : v)
      if (name.is_string() && name.get<std::string>() == "attention_mask") uses_mask_ = true;
  }
  eos_id_ = sp_.piece_to_id(eos_);
  pad_id_ = sp_.piece_to_id(pad_);
  unk_id_ = sp_.piece_to_id(unk_);
}

std::vector<std::string> SiglipTokenizer::tokenize_gemma(const std::string& text) const {
  // Split on the added tokens (longest first at each position), with their lstrip / rstrip.
  std::vector<std::string> tokens;
  std::string cur;
  auto flush = [&](bool strip_right) {
    std::string chunk = cur;
    cur.clear();
    if (strip_right) {
      const std::u32string u = utf8_to_u32(chunk);
      chunk = u32_to_utf8(std::u32string(rstrip(u)));
    }
    if (chunk.empty()) return;
    const std::vector<std::string> pieces = sp_.encode_pieces(chunk);
    tokens.insert(tokens.end(), pieces.begin(), pieces.end());
  };
  std::size_t i = 0;
  bool strip_next = false;
  while (i < text.size()) {
    const Added* hit = nullptr;
    for (const Added& a : added_) {
      if (text.compare(i, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    }
    if (hit == nullptr) {
      if (strip_next) {
        // rstrip of the token before: whitespace after it goes (Python's isspace).
        const std::u32string rest = utf8_to_u32(text.substr(i));
        const std::u32string kept(lstrip(rest));
        i += text.size() - i - u32_to_utf8(kept).size();
        strip_next = false;
        continue;
      }
      cur.push_back(text[i]);
      ++i;
      continue;
    }
    flush(hit->lstrip);
    tokens.push_back(hit->content);
    i += hit->content.size();
    strip_next = hit->rstrip;
  }
  flush(false);
  return tokens;
}

std::vector<std::string> SiglipTokenizer::tokenize(const std::string& text) const {
  if (gemma_) return tokenize_gemma(text);
  // "▁" + text with every existing "▁" made a space, then lower case per code point (the
  // special tokens are lower case already, so lowering them too changes nothing).
  const std::u32string in = utf8_to_u32(text);
  std::u32string s;
  s.reserve(in.size() + 1);
  s.push_back(kSpieceUnderline);
  for (char32_t c : in) {
    if (c == kSpieceUnderline) c = U' ';
    if (lower_) {
      append_lower(s, c);
    } else {
      s.push_back(c);
    }
  }
  // Split on the special tokens (eos first, then unk, as all_special_tokens lists them).
  const std::u32string eos = utf8_to_u32(eos_), unk = utf8_to_u32(unk_);
  std::vector<std::u32string> parts;  // text, special, text, special, ..., text
  std::u32string cur;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::u32string* hit = nullptr;
    for (const std::u32string* sp : {&eos, &unk}) {
      if (!sp->empty() && s.compare(i, sp->size(), *sp) == 0) {
        hit = sp;
        break;
      }
    }
    if (hit != nullptr) {
      parts.push_back(cur);
      parts.push_back(*hit);
      cur.clear();
      i += hit->size();
    } else {
      cur.push_back(s[i]);
      ++i;
    }
  }
  parts.push_back(cur);
  // AddedToken lstrip / rstrip: whitespace beside a special token goes.
  for (std::size_t k = 1; k < parts.size(); k += 2) {
    parts[k + 1] = std::u32string(lstrip(parts[k + 1]));
    parts[k - 1] = std::u32string(rstrip(parts[k - 1]));
  }
  std::vector<std::string> tokens;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].empty()) continue;
    if (k % 2 == 1) {
      tokens.push_back(u32_to_utf8(parts[k]));
      continue;
    }
    // _tokenize: canonicalise, encode "<unk>" + chunk, drop the pieces of "<unk>".
    std::vector<std::string> pieces = sp_.encode_pieces(unk_ + u32_to_utf8(canonicalize(parts[k])));
    const std::size_t skip = pieces.size() >= unk_pieces_ ? unk_pieces_ : 0;
    tokens.insert(tokens.end(), pieces.begin() + static_cast<std::ptrdiff_t>(skip), pieces.end());
  }
  if (tokens.size() > 1 && tokens[0] == u32_to_utf8(std::u32string(1, kSpieceUnderline)) &&
      (tokens[1] == eos_ || tokens[1] == unk_)) {
    tokens.erase(tokens.begin());
  }
  return tokens;
}

SiglipTokens SiglipTokenizer::encode(const std::string& text) const {
  SiglipTokens out;
  if (gemma_) {
    // <bos> + ids + <eos> as add_bos_token / add_eos_token say; the ids truncated to leave room
    // for them (truncation="longest_first" before the special tokens are added), then padding.
    const std::size_t max = static_cast<std::size_t>(max_length_);
    const std::size_t specials = (add_bos_ ? 1u : 0u) + (add_eos_ ? 1u : 0u);
    std::vector<int> body;
    for (const std::string& piece : tokenize_gemma(text))
      body.push_back(sp_.piece_to_id(piece));
    if (body.size() + specials > max) body.resize(max > specials ? max - specials : 0);
    if (add_bos_) out.ids.push_back(bos_id_);
    out.ids.insert(out.ids.end(), body.begin(), body.end());
    if (add_eos_) out.ids.push_back(eos_id_);
    out.ids.resize(std::min(out.ids.size(), max));
    out.mask.assign(out.ids.size(), 1);
    out.ids.resize(max, pad_id_);
    out.mask.resize(max, 0);
    return out;
  }
  for (const std::string& piece : tokenize(text))
    out.ids.push_back(sp_.piece_to_id(piece));
  const std::size_t max = static_cast<std::size_t>(max_length_);
  if (out.ids.size() + 1 > max) out.ids.resize(max - 1);
  if (out.ids.empty() || out.ids.back() != eos_id_) out.ids.push_back(eos_id_);
  out.mask.assign(out.ids.size(), 1);
  out.ids.resize(max, pad_id_);
  out.mask.resize(max, 0);
  return out;
}

nlohmann::json SiglipTokenizer::to_json() const {
  if (gemma_) {
    return {{"kind", "sentencepiece (GemmaTokenizer)"},
            {"tokenizer_model_sha256", sp_.sha256()},
            {"vocab_size", sp_.vocab_size()},
            {"max_length", max_length_},
            {"add_bos_token", add_bos_},
            {"add_eos_token", add_eos_},
            {"attention_mask", uses_mask_},
            {"eos", eos_},
            {"pad", pad_},
            {"unk", unk_}};
  }
  return {{"kind", "sentencepiece (SiglipTokenizer)"},
          {"spiece_sha256", sp_.sha256()},
          {"vocab_size", sp_.vocab_size()},
          {"max_length", max_length_},
          {"lower_case", lower_},
          {"attention_mask", uses_mask_},
          {"eos", eos_},
          {"pad", pad_},
          {"unk", unk_}};
}

}  // namespace winokit
