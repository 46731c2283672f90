// The Llama / Qwen2 engine and the tokenizer.json reader against standalone PyTorch
// transcriptions (tests/fixtures/make_llama_golden.py, llama_reference.py): token ids exactly,
// logits within kLogitTolerance of a float64 reference, a KV-cache continuation and any batch
// bit for bit equal to one forward of the sequence alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/lm/llama_model.hpp"
#include "model/text/hf_tokenizer.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/language_model.hpp"

namespace winokit {
namespace {

const std::string kDir = std::string(WINOKIT_SOURCE_DIR) + "/tests/golden/llama_tiny/";
// float32 engine against a float64 reference on the same (rounded) weights: logits of order 1-10
// after 2-3 layers agree to a few float32 ulps times the depth.
constexpr double kLogitTolerance = 1e-4;

nlohmann::json expected() {
  return nlohmann::json::parse(read_file(kDir + "expected.json"));
}

std::vector<std::vector<int>> sequences() {
  return expected()["sequences"].get<std::vector<std::vector<int>>>();
}

TEST(LlamaGolden, TokenizerJsonIdsMatchTheReference) {
  const HfTokenizer tok = HfTokenizer::from_file(kDir + "tokenizer.json");
  int matched = 0, total = 0;
  for (const auto& t : expected()["texts"]) {
    const std::string text = t["text"];
    EXPECT_EQ(tok.encode(text), t["ids"].get<std::vector<int>>()) << "'" << text << "'";
    EXPECT_EQ(tok.encode(text, true), t["with_special"].get<std::vector<int>>()) << text;
    matched += tok.encode(text) == t["ids"].get<std::vector<int>>();
    ++total;
  }
  EXPECT_EQ(matched, total);
  EXPECT_EQ(tok.token_id("<image>"), tok.encode("<image>").at(0));
  EXPECT_EQ(tok.token_id("no such token"), -1);
  EXPECT_EQ(tok.token(tok.token_id("<global-img>")), "<global-img>");
}

TEST(LlamaGolden, TokenizerPreTokenizerSplitsDigitsThenGpt2Pattern) {
  const HfTokenizer tok = HfTokenizer::from_file(kDir + "tokenizer.json");
  using V = std::vector<std::string>;
  EXPECT_EQ(tok.pre_tokenize("ab 123 it's"), (V{"ab", " ", "1", "2", "3", " it", "'s"}));
  EXPECT_THROW(tok.encode("\xff"), UsageError);
}

TEST(LlamaGolden, TokenizerJsonQwen2AndLlama3SplitPatternsWithNfc) {
  const nlohmann::json e = expected();
  for (const char* name : {"qwen2", "llama3"}) {
    const HfTokenizer tok =
        HfTokenizer::from_file(kDir + "tokenizer_" + std::string(name) + ".json");
    const auto& want = e["split_ids"][name];
    ASSERT_EQ(want.size(), e["texts"].size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const std::string text = e["texts"][i]["text"];
      EXPECT_EQ(tok.encode(text), want[i]["ids"].get<std::vector<int>>()) << name << " " << text;
      EXPECT_EQ(tok.pre_tokenize(want[i]["nfc"].get<std::string>()),
                want[i]["pieces"].get<std::vector<std::string>>())
          << name << " '" << text << "'";
    }
  }
}

TEST(LlamaGolden, TokenizerRefusesWhatItDoesNotImplement) {
  nlohmann::json j = nlohmann::json::parse(read_file(kDir + "tokenizer.json"));
  auto refused = [](const nlohmann::json& bad) {
    try {
      HfTokenizer::from_json(bad, "tokenizer.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  nlohmann::json nfc = j;
  nfc["normalizer"] = {{"type", "NFKC"}};
  EXPECT_NE(refused(nfc).find("normalizer"), std::string::npos);
  nlohmann::json split = j;
  split["pre_tokenizer"] = {{"type", "Split"},
                            {"pattern", {{"Regex", "\\s+"}}},
                            {"behavior", "Isolated"},
                            {"invert", false}};
  EXPECT_NE(refused(split).find("Split"), std::string::npos);
  nlohmann::json truncated = j;
  truncated["model"]["vocab"].erase("Ġ");
  EXPECT_NE(refused(truncated), "");
}

// What the tokenizer.json fuzz target (tests/fuzz/fuzz_tokenizer_json.cpp) and review found:
// each is refused with an InputError naming the field, or read with the right ids.
TEST(LlamaGolden, TokenizerRefusesHostileFilesNamingTheField) {
  const nlohmann::json j = nlohmann::json::parse(read_file(kDir + "tokenizer.json"));
  auto refusal = [](const nlohmann::json& bad) -> std::pair<std::string, std::string> {
    try {
      HfTokenizer::from_json(bad, "tokenizer.json");
    } catch (const InputError& e) {
      return {e.location().field, e.what()};
    }
    return {"(accepted)", ""};
  };
  // A value of the wrong type names its field.
  nlohmann::json wrong = j;
  wrong["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = "yes";
  EXPECT_EQ(refusal(wrong).first, "pre_tokenizer");
  nlohmann::json vocab = j;
  vocab["model"]["vocab"] = nlohmann::json::array();
  EXPECT_EQ(refusal(vocab).first, "model.vocab");
  // An added token's id beyond int used to wrap (4294967301 became 5).
  nlohmann::json wide_id = j;
  wide_id["added_tokens"][0]["id"] = 4294967301ULL;
  EXPECT_EQ(refusal(wide_id).first, "added_tokens");
  // Sequences nested or repeated without end: refused instead of quadratic flattening.
  nlohmann::json many = j;
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < 1000; ++i)
    list.push_back({{"type", "Sequence"}, {"pretokenizers", nlohmann::json::array()}});
  list.push_back({{"type", "ByteLevel"}});
  many["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", list}};
  EXPECT_EQ(refusal(many).first, "pre_tokenizer");
  nlohmann::json steps = j;
  steps["post_processor"] = 7;
  EXPECT_EQ(refusal(steps).first, "post_processor");
}

TEST(LlamaGolden, TokenizerFileNestedTooDeepIsRefusedNotAStackOverflow) {
  // nlohmann's dump recursed once per level: 100,000 levels overflowed the stack.
  constexpr int kDepth = 100000;
  const std::string path = testing::TempDir() + "deep_tokenizer.json";
  {
    std::ofstream out(path);
    out << "{\"extra\":" << std::string(kDepth, '[') << std::string(kDepth, ']') << "}";
  }
  try {
    HfTokenizer::from_file(path);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(LlamaGolden, TokenizerVocabSizeCoversTheLargestId) {
  // A model checks its embedding rows against vocab_size(): an added token far beyond the
  // vocabulary must show there (it counted entries before, so id 2,000,000,000 passed).
  nlohmann::json j = nlohmann::json::parse(read_file(kDir + "tokenizer.json"));
  const HfTokenizer plain = HfTokenizer::from_json(j, "tokenizer.json");
  j["added_tokens"].push_back({{"id", 2000000000}, {"content", "<far>"}});
  const HfTokenizer far = HfTokenizer::from_json(j, "tokenizer.json");
  EXPECT_EQ(far.vocab_size(), 2000000001u);
  EXPECT_EQ(far.encode("a<far>"), (std::vector<int>{plain.encode("a").at(0), 2000000000}));
}

class LlamaLogits : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaLogits, MatchTheReferenceForward) {
  const std::string name = GetParam();
  const LlamaModel lm = LlamaModel::load(kDir + name);
  const auto ref = read_safetensors_f32(kDir + "logits.safetensors");
  const auto seqs = sequences();
  const int v = lm.config().vocab_size;
  double worst = 0;
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    const std::vector<float> x = lm.embed(seqs[s]);
    const std::vector<float> logits = lm.forward(
        {{x.data(), static_cast<int>(seqs[s].size()), nullptr, nullptr}}, LogitRows::All);
    const auto& want = ref.at(name + "." + std::to_string(s));
    ASSERT_EQ(want.first,
              (std::vector<std::int64_t>{static_cast<std::int64_t>(seqs[s].size()), v}));
    ASSERT_EQ(logits.size(), want.second.size());
    for (std::size_t i = 0; i < logits.size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(logits[i]) - want.second[i]));
  }
  EXPECT_LT(worst, kLogitTolerance) << name;
  RecordProperty("max_abs_logit_diff", std::to_string(worst));
  std::printf("[ %s ] max |logit - reference| = %.3g\n", name.c_str(), worst);
}

TEST_P(LlamaLogits, KvCacheContinuationIsTheFullForwardBitForBit) {
  const LlamaModel lm = LlamaModel::load(kDir + GetParam());
  const std::vector<int> ids = sequences()[1];
  const int n = static_cast<int>(ids.size());
  const std::vector<float> x = lm.embed(ids);
  const std::vector<float> full = lm.forward({{x.data(), n, nullptr, nullptr}}, LogitRows::All);
  const std::size_t v = static_cast<std::size_t>(lm.config().vocab_size);
  const std::size_t h = static_cast<std::size_t>(lm.config().hidden);
  for (int split : {1, 7, n - 1}) {
    KvCache cache;
    const std::vector<float> head =
        lm.forward({{x.data(), split, nullptr, &cache}}, LogitRows::All);
    EXPECT_EQ(cache.length, split);
    // The continuation in two steps, the second appended to the same cache.
    const int mid = split + (n - split) / 2;
    const std::vector<float> a =
        lm.forward({{x.data() + split * h, mid - split, &cache, &cache}}, LogitRows::All);
    const std::vector<float> b =
        lm.forward({{x.data() + mid * h, n - mid, &cache, nullptr}}, LogitRows::All);
    std::vector<float> joined = head;
    joined.insert(joined.end(), a.begin(), a.end());
    joined.insert(joined.end(), b.begin(), b.end());
    ASSERT_EQ(joined.size(), full.size());
    EXPECT_EQ(0, std::memcmp(joined.data(), full.data(), full.size() * sizeof(float)))
        << "split at " << split;
    EXPECT_EQ(cache.length, mid);
  }
  EXPECT_EQ(full.size(), static_cast<std::size_t>(n) * v);
}

TEST_P(LlamaLogits, BatchesAndThreadsDoNotChangeABit) {
  const LlamaModel lm = LlamaModel::load(kDir + GetParam());
  const auto seqs = sequences();
  std::vector<std::vector<float>> x, alone;
  for (const auto& s : seqs)
    x.push_back(lm.embed(s));
  const int threads = compute_threads();
  set_compute_threads(1);
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    alone.push_back(lm.forward({{x[s].data(), static_cast<int>(seqs[s].size()), nullptr, nullptr}},
                               LogitRows::All));
  }
  set_compute_threads(threads);
  // All three together, in reverse order, one with a cached prefix.
  KvCache cache;
  lm.forward({{x[0].data(), 5, nullptr, &cache}}, LogitRows::None);
  const std::size_t h = static_cast<std::size_t>(lm.config().hidden);
  const std::vector<float> batch =
      lm.forward({{x[2].data(), static_cast<int>(seqs[2].size()), nullptr, nullptr},
                  {x[1].data(), static_cast<int>(seqs[1].size()), nullptr, nullptr},
                  {x[0].data() + 5 * h, static_cast<int>(seqs[0].size()) - 5, &cache, nullptr}},
                 LogitRows::All);
  const std::size_t v = static_cast<std::size_t>(lm.config().vocab_size);
  std::size_t at = 0;
  for (std::size_t s : {2u, 1u}) {
    EXPECT_EQ(0, std::memcmp(batch.data() + at, alone[s].data(), alone[s].size() * sizeof(float)))
        << "sequence " << s;
    at += alone[s].size();
  }
  EXPECT_EQ(0, std::memcmp(batch.data() + at, alone[0].data() + 5 * v,
                           (alone[0].size() - 5 * v) * sizeof(float)));
  // Last: one row per sequence.
  const std::vector<float> last = lm.forward(
      {{x[1].data(), static_cast<int>(seqs[1].size()), nullptr, nullptr}}, LogitRows::Last);
  EXPECT_EQ(
      0, std::memcmp(last.data(), alone[1].data() + (seqs[1].size() - 1) * v, v * sizeof(float)));
}

// The language-model interface (what `winokit perplexity` runs): each predicted token's log-prob
// is the log-softmax of the reference forward's logits, and a sequence's log-probs have the same
// bits alone on one thread as in a batch on two.
TEST_P(LlamaLogits, LanguageModelLogProbsAreTheReferenceLogSoftmax) {
  const std::string name = GetParam();
  const std::unique_ptr<LanguageModel> lm = load_language_model(kDir + name, kDir);
  EXPECT_EQ(lm->reference_class(), name == "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM");
  const auto ref = read_safetensors_f32(kDir + "logits.safetensors");
  const auto seqs = sequences();
  const int v = lm->vocab_size();
  const int threads = compute_threads();
  set_compute_threads(2);
  const std::vector<SequenceScore> together = lm->score(seqs);
  ASSERT_EQ(together.size(), seqs.size());
  double worst = 0;
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    const auto& want = ref.at(name + "." + std::to_string(s)).second;
    ASSERT_EQ(together[s].log_probs.size(), seqs[s].size() - 1);
    double sum = 0;
    for (std::size_t t = 0; t + 1 < seqs[s].size(); ++t) {
      const float* row = &want[t * static_cast<std::size_t>(v)];
      const double mx = *std::max_element(row, row + v);
      double z = 0;
      for (int j = 0; j < v; ++j)
        z += std::exp(row[j] - mx);
      const double lp = row[seqs[s][t + 1]] - mx - std::log(z);
      worst = std::max(worst, std::abs(together[s].log_probs[t] - lp));
      sum += together[s].log_probs[t];
    }
    EXPECT_DOUBLE_EQ(together[s].mean_nll, -sum / static_cast<double>(seqs[s].size() - 1));
    EXPECT_DOUBLE_EQ(together[s].perplexity, std::exp(together[s].mean_nll));
  }
  EXPECT_LT(worst, 2 * kLogitTolerance) << name;
  std::printf("[ %s ] max |log-prob - reference| = %.3g\n", name.c_str(), worst);
  set_compute_threads(1);
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    const std::vector<SequenceScore> alone = lm->score({seqs[s]});
    EXPECT_EQ(0, std::memcmp(alone[0].log_probs.data(), together[s].log_probs.data(),
                             sizeof(double) * alone[0].log_probs.size()))
        << name << " sequence " << s;
  }
  // A small batch budget (one sequence per forward) gives the same bits.
  LmOptions small;
  small.batch_tokens = 1;
  const std::vector<SequenceScore> one_by_one = lm->score(seqs, small);
  for (std::size_t s = 0; s < seqs.size(); ++s)
    EXPECT_EQ(one_by_one[s].log_probs, together[s].log_probs) << name << " sequence " << s;
  set_compute_threads(threads);
  EXPECT_THROW(lm->score({{1}}), UsageError);
  EXPECT_THROW(lm->score({{1, v}}), UsageError);
}

INSTANTIATE_TEST_SUITE_P(Families, LlamaLogits, ::testing::Values("llama", "qwen2"));

TEST(LlamaGolden, ConfigErrorsNameTheField) {
  auto message = [](const nlohmann::json& cfg) {
    try {
      llama_config_from_json(cfg, "config.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const nlohmann::json base = nlohmann::json::parse(read_file(kDir + "llama/config.json"));
  nlohmann::json c = base;
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  EXPECT_NE(message(c).find("rope_scaling"), std::string::npos);
  c = base;
  c["num_key_value_heads"] = 2;
  EXPECT_NE(message(c).find("num_key_value_heads"), std::string::npos);
  c = base;
  c["model_type"] = "gpt2";
  EXPECT_NE(message(c).find("model_type"), std::string::npos);
  c = base;
  c["hidden_size"] = -4;
  EXPECT_NE(message(c).find("hidden_size"), std::string::npos);
  const LlamaConfig ok = llama_config_from_json(base, "config.json");
  EXPECT_EQ(ok.head_dim, 16);
  EXPECT_EQ(ok.kv_heads, 1);
  EXPECT_FALSE(ok.tie_embeddings);
}

TEST(LlamaGolden, PositionsBeyondTheConfigAreRefused) {
  const LlamaModel lm = LlamaModel::load(kDir + "llama");
  const std::vector<float> x(static_cast<std::size_t>(lm.config().max_positions + 1) *
                             lm.config().hidden);
  EXPECT_THROW(lm.forward({{x.data(), lm.config().max_positions + 1, nullptr, nullptr}}),
               UsageError);
  EXPECT_THROW(lm.embed({lm.config().vocab_size}), UsageError);
}

}  // namespace
}  // namespace winokit
