// Hugging Face tokenizer.json reading (HfTokenizer::from_file), then, when the file loads,
// encoding a few texts with it: a SmolVLM prompt with added tokens around white space, digits,
// contractions and non-ASCII text (NFC), and the input's own tail when it is valid UTF-8; with
// and without the post-processor's template; token lookups both ways.
#include "fuzz_common.hpp"
#include "model/text/hf_tokenizer.hpp"
#include "winokit/core/text.hpp"

namespace {

constexpr std::size_t kTailBytes = 96;  // the input's tail, encoded as text too

const char* const kTexts[] = {
    "<|im_start|>User:<fake_token_around_image><global-img><image><image>"
    "<fake_token_around_image>Does this figure show \"a dog\"? Please answer yes or no."
    "<end_of_utterance>\nAssistant:",
    "It's 3 apples and 12 pears!  they'll   see\r\n\n\tx  ",
    "Cafe\xcc\x81 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x99\x82 \xd9\xa3\xd9\xa4 1234567",
    "",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = winokit::fuzz::bytes(data, size);
  const auto path = winokit::fuzz::write_input(text, "tokenizer.json");
  winokit::fuzz::expect_typed_errors([&] {
    const winokit::HfTokenizer tok = winokit::HfTokenizer::from_file(path);
    for (const char* t : kTexts) {
      for (int id : tok.encode(t, true))
        (void)tok.token(id);
      (void)tok.encode(t, false);
    }
    const std::string tail(text.substr(size > kTailBytes ? size - kTailBytes : 0));
    if (winokit::is_valid_utf8(tail)) {
      (void)tok.encode(tail, true);
      (void)tok.pre_tokenize(tail);
    }
    (void)tok.token_id("<image>");
    (void)tok.token_id("Yes");
  });
  return 0;
}
