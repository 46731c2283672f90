// Scores readers: official JSONL, per-example JSONL and tables (CSV / white space), as
// `winokit eval --scores` reads them, against a fixed three-example dataset.
#include "fuzz_common.hpp"
#include "winokit/eval/scores.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const winokit::WinogroundDataset dataset = winokit::parse_examples(
      R"({"id": 0, "caption_0": "a b", "caption_1": "b a", "image_0": "ex_0_img_0", "image_1": "ex_0_img_1"}
{"id": 1, "caption_0": "c d", "caption_1": "d c", "image_0": "ex_1_img_0", "image_1": "ex_1_img_1"}
{"id": "x2", "caption_0": "e f", "caption_1": "f e", "image_0": "ex_2_img_0", "image_1": "ex_2_img_1"}
)",
      "examples.jsonl");
  const std::string text(winokit::fuzz::bytes(data, size));
  winokit::fuzz::expect_typed_errors([&] {
    auto loaded = winokit::parse_scores(text, "fuzz-scores", dataset);
    if (loaded.scores.size() != dataset.examples.size()) std::abort();
  });
  return 0;
}
