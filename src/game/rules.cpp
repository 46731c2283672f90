#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "winokit/game/rules.hpp"

namespace winokit {

namespace {

constexpr int kFullScore = 100;  // the 0-100 scale of every game score

// Lower-cases UTF-8 text code point by code point (simple case mapping); returns false when
// the text is not valid UTF-8.
bool lower_utf8(const std::string& in, std::string& out) {
  out.clear();
  const auto* s = reinterpret_cast<const std::uint8_t*>(in.data());
  const auto n = static_cast<std::int32_t>(in.size());
  std::int32_t i = 0;
  while (i < n) {
    UChar32 c = 0;
    U8_NEXT(s, i, n, c);
    if (c < 0) return false;
    c = u_tolower(c);
    char buf[4];
    std::int32_t len = 0;
    UBool error = false;
    U8_APPEND(reinterpret_cast<std::uint8_t*>(buf), len, 4, c, error);
    if (error) return false;
    out.append(buf, static_cast<std::size_t>(len));
  }
  return true;
}

// Letters of other scripts drawn like Latin ones (Unicode's confusables, the lower-case
// letters a blocked word or a candidate's name can be spelt with).
constexpr std::pair<UChar32, char> kConfusables[] = {
    {0x0430, 'a'}, {0x0435, 'e'}, {0x043E, 'o'}, {0x0440, 'p'}, {0x0441, 'c'}, {0x0443, 'y'},
    {0x0445, 'x'}, {0x0456, 'i'}, {0x0458, 'j'}, {0x0455, 's'}, {0x0501, 'd'}, {0x04BB, 'h'},
    {0x04CF, 'l'}, {0x051B, 'q'}, {0x051D, 'w'}, {0x043A, 'k'}, {0x0432, 'b'}, {0x043C, 'm'},
    {0x043D, 'h'}, {0x0442, 't'}, {0x0457, 'i'}, {0x0475, 'v'}, {0x03B1, 'a'}, {0x03BF, 'o'},
    {0x03C1, 'p'}, {0x03BD, 'v'}, {0x03B9, 'i'}, {0x03BA, 'k'}, {0x03C5, 'u'}, {0x03C7, 'x'},
    {0x03B5, 'e'}, {0x03C4, 't'}, {0x0261, 'g'}, {0x0131, 'i'}, {0x0251, 'a'}, {0x0269, 'i'},
};

// The skeleton a look-alike is compared by: NFKC with case folding (fullwidth "ｎａｚｉ" ->
// "nazi"), then confusable letters of other scripts mapped to Latin ("nаzi" with a Cyrillic
// а -> "nazi"). Used for the blocklist and the candidates' names, never stored.
std::string fold_confusables(const std::string& text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCCasefoldInstance(status);
  std::string folded;
  if (U_FAILURE(status)) return text;
  const icu::UnicodeString normal = nfkc->normalize(icu::UnicodeString::fromUTF8(text), status);
  if (U_FAILURE(status)) return text;
  normal.toUTF8String(folded);
  std::string out;
  const auto* s = reinterpret_cast<const std::uint8_t*>(folded.data());
  const auto n = static_cast<std::int32_t>(folded.size());
  std::int32_t i = 0;
  while (i < n) {
    const std::int32_t start = i;
    UChar32 c = 0;
    U8_NEXT(s, i, n, c);
    const auto* hit = std::find_if(std::begin(kConfusables), std::end(kConfusables),
                                   [c](const auto& m) { return m.first == c; });
    if (hit != std::end(kConfusables)) {
      out += hit->second;
    } else {
      out.append(folded, static_cast<std::size_t>(start), static_cast<std::size_t>(i - start));
    }
  }
  return out;
}

std::vector<std::string> words_of(const std::string& name) {
  std::vector<std::string> words;
  std::string w;
  for (char c : name) {
    if (c == ' ' || c == '_' || c == '-') {
      if (!w.empty()) words.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) words.push_back(w);
  return words;
}

// The same word up to a plural ending: "dog" ~ "dogs", "box" ~ "boxes".
bool same_word(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto plural_of = [](const std::string& p, const std::string& s) {
    return p == s + "s" || p == s + "es";
  };
  return plural_of(a, b) || plural_of(b, a);
}

}  // namespace

std::string GameRules::check_cue(const std::string& cue, const std::vector<std::string>& candidates,
                                 const std::set<std::string>& blocklist) const {
  if (cue.empty()) throw GameError(GameErrorKind::Invalid, "bad_cue", "the cue is empty");
  if (static_cast<int>(cue.size()) > max_cue_bytes) {
    throw GameError(GameErrorKind::Invalid, "bad_cue",
                    "the cue is longer than " + std::to_string(max_cue_bytes) + " bytes");
  }
  std::string lower;
  if (!lower_utf8(cue, lower))
    throw GameError(GameErrorKind::Invalid, "bad_cue", "the cue is not valid UTF-8");
  // One word: letters only, with a hyphen or apostrophe allowed between letters.
  const auto* s = reinterpret_cast<const std::uint8_t*>(lower.data());
  const auto n = static_cast<std::int32_t>(lower.size());
  std::int32_t i = 0;
  bool previous_letter = false;
  while (i < n) {
    UChar32 c = 0;
    U8_NEXT(s, i, n, c);
    const bool letter = u_isalpha(c) != 0;
    const bool joiner = c == '-' || c == '\'';
    if (!letter && !(joiner && previous_letter && i < n)) {
      throw GameError(GameErrorKind::Invalid, "bad_cue",
                      "the cue must be one word made of letters");
    }
    previous_letter = letter;
  }
  const std::string skeleton = fold_confusables(lower);
  for (const auto& candidate : candidates) {
    const std::string name = fold_confusables(candidate);
    bool clash = same_word(skeleton, name);
    for (const auto& w : words_of(name))
      clash = clash || same_word(skeleton, w);
    if (clash) {
      throw GameError(GameErrorKind::Invalid, "cue_names_candidate",
                      "the cue may not be an image\u2019s name or a word of one");
    }
  }
  bool blocked = blocklist.count(lower) > 0;
  for (const auto& word : blocklist)
    blocked = blocked || fold_confusables(word) == skeleton;
  if (blocked) throw GameError(GameErrorKind::Invalid, "cue_blocked", "this cue is not allowed");
  return lower;
}

double GameRules::bonus(double fool_the_ai, double solvable_by_humans) const {
  if (solvable_by_humans < bonus_min_solvable) return 0;
  double b = 0;
  for (const auto& tier : bonus_tiers)
    if (fool_the_ai >= tier.min_fool) b = tier.bonus;
  return b;
}

std::vector<BonusTier> GameRules::parse_bonus_tiers(const std::string& text) {
  std::vector<BonusTier> tiers;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      throw std::invalid_argument("bonus tier '" + item + "' is not MIN:BONUS");
    }
    std::size_t used1 = 0, used2 = 0;
    BonusTier t;
    try {
      t.min_fool = std::stod(item.substr(0, colon), &used1);
      t.bonus = std::stod(item.substr(colon + 1), &used2);
    } catch (const std::exception&) {
      throw std::invalid_argument("bonus tier '" + item + "' is not MIN:BONUS");
    }
    if (used1 != colon || used2 != item.size() - colon - 1) {
      throw std::invalid_argument("bonus tier '" + item + "' is not MIN:BONUS");
    }
    if (!tiers.empty() && t.min_fool <= tiers.back().min_fool) {
      throw std::invalid_argument("bonus tiers must be in increasing order of fool-the-AI");
    }
    tiers.push_back(t);
  }
  if (tiers.empty()) throw std::invalid_argument("no bonus tiers");
  return tiers;
}

double jaccard_score(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::set<std::string> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  if (sa.empty() && sb.empty()) return 100;
  std::size_t inter = 0;
  for (const auto& x : sa)
    inter += sb.count(x);
  const std::size_t uni = sa.size() + sb.size() - inter;
  return 100.0 * static_cast<double>(inter) / static_cast<double>(uni);
}

int official_model_score(const std::vector<std::string>& picks,
                         const std::vector<std::string>& associations) {
  std::set<std::string> sa(picks.begin(), picks.end()),
      sb(associations.begin(), associations.end());
  if (sa.empty() && sb.empty()) return kFullScore;
  std::size_t inter = 0;
  for (const auto& x : sa)
    inter += sb.count(x);
  const std::size_t uni = sa.size() + sb.size() - inter;
  // Python: int(len(s1 & s2) / len(s1 | s2) * 100): divide, then multiply, then truncate.
  const double j = static_cast<double>(inter) / static_cast<double>(uni);
  return static_cast<int>(std::trunc(j * kFullScore));
}

double fool_the_ai_score(const std::vector<std::string>& picks,
                         const std::vector<std::string>& associations) {
  return kFullScore - official_model_score(picks, associations);
}

double official_fool_the_ai(double stored) {
  if (stored == std::trunc(stored)) return stored;
  // 100 J for sets of up to a few dozen images is never within 1e-6 of an integer unless it is
  // one; the guard absorbs the rounding of 100 - 100 J.
  constexpr double kGuard = 1e-6;
  return kFullScore - std::floor(kFullScore - stored + kGuard);
}

void mean_and_std(const std::vector<double>& v, double& mean, double& stddev) {
  mean = stddev = 0;
  if (v.empty()) return;
  for (double x : v)
    mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v)
    ss += (x - mean) * (x - mean);
  stddev = std::sqrt(ss / static_cast<double>(v.size()));
}

std::set<std::string> parse_blocklist(const std::string& text) {
  std::set<std::string> words;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const auto a = line.find_first_not_of(" \t\r");
    if (a == std::string::npos) continue;
    const auto b = line.find_last_not_of(" \t\r");
    std::string w;
    lower_utf8(line.substr(a, b - a + 1), w);
    words.insert(w);
  }
  return words;
}

const std::set<std::string>& default_blocklist() {
  static const std::set<std::string> words = {
      "fuck",  "fucking", "shit",  "cunt",   "bitch", "bastard",  "asshole", "dick",   "cock",
      "pussy", "slut",    "whore", "nigger", "nigga", "faggot",   "fag",     "retard", "rape",
      "kike",  "spic",    "chink", "wank",   "twat",  "bollocks", "porn",    "nazi"};
  return words;
}

}  // namespace winokit
