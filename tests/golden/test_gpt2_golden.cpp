// GPT-2: the tokenizer against openai/gpt-2's encoder.py with the real vocabulary
// (tests/golden/gpt2_tokenizer.jsonl, from tests/fixtures/make_gpt2_tokenizer_goldens.py) and the
// engine against a float64 reference forward on seeded random tiny checkpoints
// (tests/golden/gpt2_tiny, from tests/fixtures/make_gpt2_goldens.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/gpt2_model.hpp"
#include "winokit/model/tokenizer.hpp"

namespace winokit {
namespace {

namespace fs = std::filesystem;
const std::string kSource = WINOKIT_SOURCE_DIR;
const std::string kVocab = kSource + "/tests/fixtures/gpt2_vocab/";
const std::string kTiny = kSource + "/tests/golden/gpt2_tiny/";
constexpr double kRelativeTolerance = 1e-5;

TEST(Gpt2Tokenizer, MatchesEncoderPyIdForId) {
  auto tok = Gpt2Tokenizer::from_files(kVocab + "encoder.json", kVocab + "vocab.bpe");
  EXPECT_EQ(tok.vocab_size(), 50257u);
  EXPECT_EQ(tok.eos_id(), 50256);
  std::ifstream in(kSource + "/tests/golden/gpt2_tokenizer.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    const std::string text = j["text"];
    EXPECT_EQ(tok.encode(text), j["ids"].get<std::vector<int>>()) << "'" << text << "'";
    ++n;
  }
  EXPECT_GE(n, 70);
  EXPECT_EQ(tok.encode("Hello world"), (std::vector<int>{15496, 995}));
}

TEST(Gpt2Tokenizer, PreTokensFollowTheRegex) {
  using V = std::vector<std::string>;
  // As regex.findall with encoder.py's pattern gives them.
  EXPECT_EQ(Gpt2Tokenizer::pre_tokenize("it's  a\n\ndog 123!?"),
            (V{"it", "'s", " ", " a", "\n", "\n", "dog", " 123", "!?"}));
  EXPECT_EQ(Gpt2Tokenizer::pre_tokenize("end   "), (V{"end", "   "}));
  EXPECT_EQ(Gpt2Tokenizer::pre_tokenize("IT'S"), (V{"IT", "'", "S"}));
  EXPECT_THROW(Gpt2Tokenizer::pre_tokenize("\xff"), UsageError);
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "winokit-gpt2-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Gpt2Tokenizer, RefusesTruncatedMergesOrVocab) {
  TempDir dir;
  const std::string merges = read_file(kVocab + "vocab.bpe");
  const std::string vocab = read_file(kVocab + "encoder.json");
  // merges.txt cut to 1 KB (mid-line, then at a line end).
  std::ofstream(dir.path() / "cut.txt") << merges.substr(0, 1024);
  std::string msg =
      error_of([&] { Gpt2Tokenizer::from_files(kVocab + "encoder.json", dir.path() / "cut.txt"); });
  EXPECT_NE(msg.find("cut.txt"), std::string::npos) << msg;
  std::ofstream(dir.path() / "lines.txt") << merges.substr(0, merges.rfind('\n', 1024) + 1);
  msg = error_of(
      [&] { Gpt2Tokenizer::from_files(kVocab + "encoder.json", dir.path() / "lines.txt"); });
  EXPECT_NE(msg.find("looks truncated"), std::string::npos) << msg;
  // A vocabulary missing its last entries.
  auto j = nlohmann::json::parse(vocab);
  nlohmann::json small = nlohmann::json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().get<int>() < 40000 || it.key() == "<|endoftext|>") small[it.key()] = it.value();
  }
  std::ofstream(dir.path() / "small.json") << small.dump();
  msg =
      error_of([&] { Gpt2Tokenizer::from_files(dir.path() / "small.json", kVocab + "vocab.bpe"); });
  EXPECT_NE(msg.find("small.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(ClipTokenizerFiles, RefusesTruncatedMerges) {
  const std::string clip = std::string(WINOKIT_SHARED_DIR) + "/golden/clip/vocab/";
  TempDir dir;
  const std::string merges = read_file(clip + "merges.txt");
  std::ofstream(dir.path() / "merges.txt") << merges.substr(0, merges.rfind('\n', 1024) + 1);
  const std::string msg =
      error_of([&] { ClipTokenizer::from_hf(clip + "vocab.json", dir.path() / "merges.txt"); });
  EXPECT_NE(msg.find("merges.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("looks truncated"), std::string::npos) << msg;
  EXPECT_NO_THROW(ClipTokenizer::from_hf(clip + "vocab.json", clip + "merges.txt"));
}

struct Expected {
  std::vector<int> ids;
  std::vector<double> log_probs;
  double perplexity;
  nlohmann::json text;
  bool bos;
};

std::vector<Expected> expected(const std::string& variant) {
  auto j = nlohmann::json::parse(read_file(kTiny + "expected.json"));
  std::vector<Expected> out;
  for (const auto& s : j["expected"][variant]) {
    out.push_back({s["ids"].get<std::vector<int>>(), s["log_probs"].get<std::vector<double>>(),
                   s["perplexity"].get<double>(), s["text"], s["bos"].get<bool>()});
  }
  return out;
}

class Gpt2Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Gpt2Golden, LogProbsAndPerplexitiesMatchTheReference) {
  const std::string dir = kTiny + GetParam();
  Gpt2Model model = Gpt2Model::load(dir);
  EXPECT_EQ(model.config().layers, 3);
  EXPECT_EQ(model.config().inner, 50);
  auto tok = Gpt2Tokenizer::from_directory(dir);
  auto want = expected(GetParam());
  std::vector<std::vector<int>> seqs;
  for (const auto& e : want) {
    if (e.text.is_string()) {
      auto ids = tok.encode(e.text.get<std::string>());
      if (e.bos) ids.insert(ids.begin(), tok.eos_id());
      EXPECT_EQ(ids, e.ids) << e.text;
    }
    seqs.push_back(e.ids);
  }
  auto got = model.score(seqs);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t s = 0; s < want.size(); ++s) {
    ASSERT_EQ(got[s].log_probs.size(), want[s].log_probs.size());
    for (std::size_t t = 0; t < want[s].log_probs.size(); ++t) {
      EXPECT_NEAR(got[s].log_probs[t], want[s].log_probs[t],
                  kRelativeTolerance * std::fabs(want[s].log_probs[t]))
          << "sequence " << s << " token " << t;
    }
    EXPECT_NEAR(got[s].perplexity, want[s].perplexity, kRelativeTolerance * want[s].perplexity)
        << "sequence " << s;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, Gpt2Golden, ::testing::Values("f32", "f16", "bf16_bin"));

TEST(Gpt2Engine, BatchInvariantAndDeterministic) {
  Gpt2Model model = Gpt2Model::load(kTiny + "f32");
  std::vector<std::vector<int>> seqs;
  for (const auto& e : expected("f32"))
    seqs.push_back(e.ids);
  auto all = model.score(seqs);
  for (int budget : {1, 7, 40, 100000}) {
    auto again = model.score(seqs, Gpt2Options{budget});
    for (std::size_t s = 0; s < seqs.size(); ++s) {
      EXPECT_EQ(again[s].log_probs, all[s].log_probs) << "budget " << budget << " sequence " << s;
      EXPECT_EQ(again[s].perplexity, all[s].perplexity);
    }
  }
  // Alone, and among other sequences in reverse order.
  std::vector<std::vector<int>> reversed(seqs.rbegin(), seqs.rend());
  auto rev = model.score(reversed);
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    EXPECT_EQ(model.score({seqs[s]})[0].perplexity, all[s].perplexity);
    EXPECT_EQ(rev[seqs.size() - 1 - s].log_probs, all[s].log_probs);
  }
}

TEST(Gpt2Engine, RefusesBadSequencesAndConfigs) {
  Gpt2Model model = Gpt2Model::load(kTiny + "f32");
  EXPECT_THROW(model.score({{5}}), UsageError);
  EXPECT_THROW(model.score({{5, 297}}), UsageError);
  EXPECT_THROW(model.score({std::vector<int>(38, 1)}), UsageError);
  TempDir dir;
  for (const char* bad : {R"({"n_embd": 64.5})", R"({"n_embd": 0})", R"({"n_layer": -1})",
                          R"({"n_embd": 18446744073709551680})", R"({"n_embd": 10, "n_head": 3})",
                          R"({"activation_function": "swish"})", R"({"model_type": "bert"})"}) {
    std::ofstream(dir.path() / "config.json") << bad;
    EXPECT_THROW(load_gpt2_config(dir.path()), InputError) << bad;
  }
}

}  // namespace
}  // namespace winokit
