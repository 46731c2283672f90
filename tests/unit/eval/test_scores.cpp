#include <gtest/gtest.h>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/covariates.hpp"
#include "winokit/eval/scores.hpp"

namespace winokit {
namespace {

std::string official(int id, double a, double b, double c, double d) {
  auto line = [&](const char* pair, double v) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "{\"label\": \"%d_%s\", \"score\": %.17g}\n", id, pair, v);
    return std::string(buf);
  };
  return line("c0_i0", a) + line("c0_i1", b) + line("c1_i0", c) + line("c1_i1", d);
}

TEST(Scores, OfficialJsonl) {
  WinogroundDataset ds = test::dataset_of(2);
  auto s = parse_scores(official(1, 5, 6, 7, 8) + official(0, 1, 2, 3, 4), "s.jsonl", ds);
  EXPECT_EQ(s.format, ScoresFormat::OfficialJsonl);
  EXPECT_EQ(s.scores[0].at(0, 0), 1);
  EXPECT_EQ(s.scores[0].at(1, 0), 3);
  EXPECT_EQ(s.scores[1].at(1, 1), 8);
}

TEST(Scores, RoundTripsThroughTheOfficialWriterBitForBit) {
  WinogroundDataset ds = test::dataset_of(3);
  std::vector<WinogroundScores> in = {{{0.1, 1.0 / 3.0, -2.5e-17, 31.62277660168379}},
                                      {{1, 2, 3, 4}},
                                      {{1e300, -1e-300, 0.30000000000000004, 7}}};
  auto out = parse_scores(official_scores_jsonl(ds, in), "rt.jsonl", ds);
  for (std::size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(out.scores[i].s, in[i].s);
}

TEST(Scores, TableFormatsCsvAndWhitespace) {
  WinogroundDataset ds = test::dataset_of(2);
  auto csv = parse_scores("model,id,C0I0,C0I1,C1I0,C1I1\nx,0,1,2,3,4\nx,1,5,6,7,8\n", "s.csv", ds);
  EXPECT_EQ(csv.format, ScoresFormat::Table);
  EXPECT_EQ(csv.scores[1].at(0, 1), 6);
  auto ws = parse_scores("id\xC2\xA0 c0_i0 c0_i1 c1_i0 c1_i1\n0 1 2 3 4\n1\xC2\xA0\x35 6 7 8\n",
                         "s.txt", ds);
  EXPECT_EQ(ws.scores[1].at(0, 0), 5);
}

// The layout of the published per-example score tables (nightingal3/winoground-project,
// baselines/*/..._scores.txt): tags with spaces ("Negation, Scope") and empty secondary tags
// (two spaces), so rows have 8, 9, 10 or more fields under a 9-column header.
TEST(Scores, PublishedWhitespaceTableWithMultiWordAndEmptyTags) {
  WinogroundDataset ds = test::dataset_of(5);
  const std::string text =
      "ID tag secondary_tag num_main_preds collapsed_tag C0I0 C0I1 C1I0 C1I1\n"
      "0 Adjective-Age  1 Relation 24.34 24.32 25.71 24.95\n"
      "1 Negation, Scope Morpheme-Level 1 Relation 13.98 12.45 13.67 11.43\n"
      "2 Negation, Scope  2 Relation 17.86 17.59 17.58 17.37\n"
      "3 Verb-Transitive Phrase, Verb-Intransitive, Preposition Phrase Morpheme-Level 2 Relation "
      "27.56 18.10 27.45 20.25\n"
      "4 Adjective-Speed Phrase, Verb-Intransitive Symbolic, Series 2 Relation 1 2 3 4\n";
  auto s = parse_scores(text, "FLAVA_contrastive_scores.txt", ds);
  EXPECT_EQ(s.format, ScoresFormat::Table);
  EXPECT_EQ(s.scores[0].s, (std::array<double, 4>{24.34, 24.32, 25.71, 24.95}));
  EXPECT_EQ(s.scores[1].s, (std::array<double, 4>{13.98, 12.45, 13.67, 11.43}));
  EXPECT_EQ(s.scores[2].s, (std::array<double, 4>{17.86, 17.59, 17.58, 17.37}));
  EXPECT_EQ(s.scores[3].s, (std::array<double, 4>{27.56, 18.10, 27.45, 20.25}));
  EXPECT_EQ(s.scores[4].s, (std::array<double, 4>{1, 2, 3, 4}));
  // The header names the columns: a reordered score header is honoured by position.
  auto r = parse_scores("ID tag C1I1 C1I0 C0I1 C0I0\n0 Noun  4 3 2 1\n1 Noun Phrase 8 7 6 5\n",
                        "r.txt", test::dataset_of(2));
  EXPECT_EQ(r.scores[0].s, (std::array<double, 4>{1, 2, 3, 4}));
  EXPECT_EQ(r.scores[1].s, (std::array<double, 4>{5, 6, 7, 8}));
}

TEST(Scores, AmbiguousWhitespaceTablesAreClearErrors) {
  WinogroundDataset ds = test::dataset_of(2);
  const std::vector<std::pair<std::string, std::string>> cases = {
      // Scores not the last four columns: a ragged row cannot be read by position.
      {"ID C0I0 C0I1 C1I0 C1I1 tag\n0 1 2 3 4 Noun\n1 5 6 7 8 Noun Phrase\n",
       "s:3: expected 6 columns, found 7"},
      // A row too short to hold an id and four scores.
      {"ID tag C0I0 C0I1 C1I0 C1I1\n0 Noun 1 2 3 4\n1 5 6 7\n",
       "s:3: expected an id and four scores, found 4 fields"},
      // A tag word where a score should be.
      {"ID tag C0I0 C0I1 C1I0 C1I1\n0 Noun 1 2 3 4\n1 Noun 5 6 7 Phrase\n",
       "s:3: field 'C1I1': not a number: 'Phrase' (the last four fields of a row are its scores)"},
  };
  for (const auto& [text, expect] : cases) {
    try {
      parse_scores(text, "s", ds);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos)
          << e.what() << "\n  wanted: " << expect;
    }
  }
}

TEST(Scores, PerExampleJsonl) {
  WinogroundDataset ds = test::dataset_of(1);
  auto s = parse_scores(
      R"({"id": 0, "scores": {"c0_i0": 1, "c0_i1": 2, "c1_i0": 3, "c1_i1": 4}, "group": false})",
      "p.jsonl", ds);
  EXPECT_EQ(s.format, ScoresFormat::PerExampleJsonl);
  EXPECT_EQ(s.scores[0].at(1, 1), 4);
}

struct Bad {
  std::string text;
  std::string expect;
};

TEST(Scores, EveryKindOfBadInputNamesFileLineAndProblem) {
  WinogroundDataset ds = test::dataset_of(1);
  std::string ok = official(0, 1, 2, 3, 4);
  std::vector<Bad> cases = {
      {ok.substr(0, ok.rfind("{\"label\"")), "missing score for 0_c1_i1"},
      {ok + "{\"label\": \"0_c0_i0\", \"score\": 9}\n",
       "s:5: field 'score': duplicate score for 0_c0_i0 (first on line 1)"},
      {"{\"label\": \"0_c0_i0\", \"score\": NaN}\n", "s:1: field 'score': non-finite"},
      {"{\"label\": \"0_c0_i0\", \"score\": \"inf\"}\n", "non-finite score for 0_c0_i0"},
      {"{\"label\": \"5_c0_i0\", \"score\": 1}\n", "s:1: field 'score': unknown example id '5'"},
      {"{\"label\": \"0_c2_i0\", \"score\": 1}\n", "s:1: field 'label': malformed label"},
      {"{\"label\": \"0_c0_i0\"}\n", "s:1: field 'score': missing"},
      {"{\"label\": \"0_c0_i0\", \"score\": [1]}\n", "expected a number"},
      {ok + "{\"label\": broken\n", "s:5: malformed JSON"},
      {"id,c0_i0,c0_i1,c1_i0\n0,1,2,3\n", "field 'c1_i1': the header has no score column"},
      {"name,c0_i0,c0_i1,c1_i0,c1_i1\nx,1,2,3,4\n", "the header has no id column"},
      {"id,c0_i0,c0_i1,c1_i0,c1_i1\n0,1,2,abc,4\n", "s:2: field 'c1_i0': not a number: 'abc'"},
      {"id,c0_i0,c0_i1,c1_i0,c1_i1\n0,1,2,nan,4\n", "s:2: field 'c1_i0': non-finite"},
      {"", "empty scores file"},
      {"<!DOCTYPE html>\n<html><body><table><tr><td>1</td></tr></table></body></html>\n",
       "s:1: not a recognised scores file (expected the official JSONL"},
      {"epoch 1 loss 0.31\nepoch 2 loss 0.22\n", "s:1: not a recognised scores file"},
  };
  for (const auto& c : cases) {
    try {
      parse_scores(c.text, "s", ds);
      ADD_FAILURE() << "no error for: " << c.text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << e.what() << "\n  wanted: " << c.expect;
    }
  }
}

TEST(Covariates, PerExampleAndPerCaption) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(2);
  auto per_ex =
      load_covariates(dir.write("c.csv", "id,perplexity,len\n0,10,3\n1,20,4\n").string(), ds);
  ASSERT_EQ(per_ex.size(), 2u);
  EXPECT_EQ(per_ex[0].name, "perplexity");
  EXPECT_EQ(*per_ex[0].values[1], 20);
  auto per_cap = load_covariates(
      dir.write("p.csv", "id,caption,ppl\n0,0,10\n0,1,30\n1,0,1\n1,1,2\n").string(), ds);
  EXPECT_EQ(*per_cap[0].values[0], 20);
  EXPECT_EQ(*per_cap[0].values[1], 1.5);
  EXPECT_THROW(load_covariates(dir.write("x.csv", "id,caption,ppl\n0,0,10\n").string(), ds),
               InputError);
  EXPECT_THROW(load_covariates(dir.write("y.csv", "id,ppl\n9,1\n").string(), ds), InputError);
  EXPECT_THROW(load_covariates(dir.write("z.csv", "id,ppl\n0,x\n").string(), ds), InputError);
  auto len = caption_length_covariate(ds);
  EXPECT_EQ(*len.values[0], 3.0);
}

// The official perplexity table of 400 ids on a subset: extra ids ignored and counted; ids not
// in the dataset while one of its examples is missing: another dataset, refused.
TEST(Covariates, TableForALargerSetIsReadOnASubset) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(2);
  auto covs = load_covariates(
      dir.write("ppl.csv",
                "id,caption,perplexity\n0,0,10\n0,1,30\n1,0,1\n1,1,2\n7,0,5\n7,1,6\n"
                "9,0,1\n9,1,1\n")
          .string(),
      ds);
  ASSERT_EQ(covs.size(), 1u);
  EXPECT_EQ(covs[0].ignored_ids, 2u);
  EXPECT_EQ(*covs[0].values[1], 1.5);
  try {
    load_covariates(dir.write("o.csv", "id,ppl\n0,1\n7,2\n").string(), ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.location().line, 3u);
    EXPECT_NE(std::string(e.what()).find("unknown example id '7' (1 ids not in the dataset, and 1 "
                                         "of its 2 examples not in the file)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace winokit
