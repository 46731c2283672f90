// The registry of model families: one line per family. The first family that recognises a
// checkpoint opens it; CLIP comes last, as it takes whatever the others do not claim (a folder
// without model_type, an OpenCLIP folder, an OpenAI .pt archive).
#include <algorithm>

#include "model/families/blip/blip_model.hpp"
#include "model/families/clip/clip_family.hpp"
#include "model/families/flava/flava_family.hpp"
#include "model/families/llava_onevision/llava_onevision_model.hpp"
#include "model/families/siglip/siglip_model.hpp"
#include "model/families/smolvlm/smolvlm_model.hpp"
#include "model/families/vilt/vilt_family.hpp"
#include "winokit/core/error.hpp"
#include "winokit/model/vl_model.hpp"

namespace winokit {

const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> families = {
      {"vilt",
       "ViLT (Kim et al., 2021): single-stream image-text matching (rank or ITM head)",
       {Ability::PairScores, Ability::Alignment},
       {},
       is_vilt_checkpoint,
       open_vilt,
       {},
       "ViLT resizes as its config.json says and reads vocab.txt from its folder"},
      {"flava",
       "FLAVA (Singh et al., 2022): ITM and contrastive heads",
       {Ability::PairScores},
       {"itm", "contrastive"},
       is_flava_checkpoint,
       open_flava,
       {},
       "FLAVA uses its own image processor and reads vocab.txt from its folder"},
      {"siglip",
       "SigLIP (Zhai et al., 2023): sigmoid-loss dual encoder (HF SiglipModel)",
       {Ability::PairScores, Ability::Embeddings},
       {},
       is_siglip_checkpoint,
       open_siglip,
       {},
       "SigLIP preprocesses as its preprocessor_config.json says and reads spiece.model (SigLIP 2: "
       "tokenizer.model) and tokenizer_config.json from its folder"},
      {"blip",
       "BLIP (Li et al., 2022): image-text matching, ITM and ITC heads",
       {Ability::PairScores},
       {"itm", "itc"},
       is_blip_checkpoint,
       open_blip,
       {},
       "BLIP uses its own image processor (preprocessor_config.json) and reads vocab.txt from "
       "its folder"},
      {"smolvlm",
       "SmolVLM / Idefics3 (Marafioti et al., 2025): generative, VQAScore: P(Yes) given the image "
       "and a question",
       {Ability::PairScores},
       {},
       is_smolvlm_checkpoint,
       open_smolvlm,
       {{"--preprocess",
         "split or no-split: image splitting on or off (default: as "
         "preprocessor_config.json says)"},
        {"--model-option question",
         "the question, {} standing for the caption; default t2v_metrics': Does this figure "
         "show \"{}\"? Please answer yes or no."},
        {"--model-option answer",
         "the answer whose first token's probability is the score; "
         "default Yes"},
        {"--model-option image-splitting", "true or false, as --preprocess split / no-split"}},
       "SmolVLM preprocesses as its preprocessor_config.json says and reads tokenizer.json from "
       "its folder"},
      {"llava-onevision",
       "LLaVA-OneVision (Li et al., 2024): generative, VQAScore: P(Yes) given the image and a "
       "question",
       {Ability::PairScores},
       {},
       is_llava_onevision_checkpoint,
       open_llava_onevision,
       {{"--model-option question",
         "the question, {} standing for the caption; default t2v_metrics': Does this figure "
         "show \"{}\"? Please answer yes or no."},
        {"--model-option answer",
         "the answer whose first token's probability is the score; default Yes"}},
       "LLaVA-OneVision preprocesses as its preprocessor_config.json says and reads "
       "tokenizer.json from its folder"},
      {"clip",
       "CLIP (Radford et al., 2021): ViT or ResNet dual encoder (HF, OpenCLIP, .pt)",
       {Ability::PairScores, Ability::Embeddings, Ability::States, Ability::Alignment},
       {},
       is_clip_checkpoint,
       open_clip,
       {{"--preprocess",
         "hf (CLIPImageProcessor) or openai (openai/CLIP, OpenCLIP) instead of the checkpoint's "
         "own pipeline"},
        {"--tokenizer", "a folder with vocab.json + merges.txt, or bpe_simple_vocab_16e6.txt.gz"}},
       "CLIP reads its preprocessing and tokenizer from the checkpoint"},
  };
  return families;
}

const ModelFamily& find_model_family(const std::filesystem::path& checkpoint) {
  for (const ModelFamily& f : model_families())
    if (f.recognises(checkpoint)) return f;
  std::string names;
  for (const ModelFamily& f : model_families())
    names += (names.empty() ? "" : ", ") + f.name;
  const std::string type = checkpoint_model_type(checkpoint);
  // Language models are read elsewhere: say where rather than only "unknown".
  const std::string hint =
      type == "gpt2" ? "a GPT-2 language model gives caption perplexities: pass it as "
                       "`winokit eval --lm DIR` or to `winokit perplexity --model DIR`"
                     : "`winokit models` lists the families and the checkpoints each reads";
  throw UsageError(checkpoint.string() + ": config.json says model_type \"" + type +
                       "\", which no registered vision-language model family reads (" + names + ")",
                   hint);
}

namespace {

bool takes(const ModelFamily& family, const std::string& flag) {
  return std::any_of(family.options.begin(), family.options.end(),
                     [&](const auto& o) { return o.first == flag; });
}

// The one refusal of a family-specific option: which families take it, and where this family
// takes the same thing from.
void check_family_options(const ModelFamily& family, const std::filesystem::path& checkpoint,
                          const ModelOptions& options) {
  for (const auto& [flag, value] :
       {std::pair<std::string, const std::string&>{"--preprocess", options.preprocess},
        std::pair<std::string, const std::string&>{"--tokenizer", options.tokenizer}}) {
    if (value.empty() || takes(family, flag)) continue;
    std::string takers;
    for (const ModelFamily& f : model_families())
      if (takes(f, flag)) takers += (takers.empty() ? "" : ", ") + f.name;
    throw UsageError(flag + " is for " + takers + " models; " + checkpoint_name(checkpoint) +
                         " is a " + family.name + " model",
                     family.reads_own);
  }
  for (const auto& [key, value] : options.settings) {
    const std::string flag = "--model-option " + key;
    if (takes(family, flag)) continue;
    std::string takers, own;
    for (const ModelFamily& f : model_families())
      if (takes(f, flag)) takers += (takers.empty() ? "" : ", ") + f.name;
    for (const auto& o : family.options)
      if (o.first.rfind("--model-option ", 0) == 0)
        own += (own.empty() ? "" : ", ") + o.first.substr(15);
    throw UsageError("--model-option " + key +
                         (takers.empty() ? ": no model family has this setting"
                                         : " is for " + takers + " models") +
                         "; " + checkpoint_name(checkpoint) + " is a " + family.name + " model",
                     own.empty() ? family.name + " models take no --model-option"
                                 : family.name + " models take --model-option " + own);
  }
}

}  // namespace

std::string family_option_help(const std::string& flag) {
  std::string help;
  for (const ModelFamily& f : model_families()) {
    if (flag == "--model-option") {
      std::string keys;
      for (const auto& [name, what] : f.options)
        if (name.rfind("--model-option ", 0) == 0)
          keys += (keys.empty() ? "" : ", ") + name.substr(15) + " (" + what + ")";
      if (!keys.empty()) help += (help.empty() ? "" : "; ") + f.name + ": " + keys;
      continue;
    }
    for (const auto& [name, what] : f.options)
      if (name == flag) help += (help.empty() ? "" : "; ") + f.name + ": " + what;
  }
  return help;
}

std::unique_ptr<VlModel> open_model(const ModelFamily& family,
                                    const std::filesystem::path& checkpoint,
                                    const ModelOptions& options) {
  check_family_options(family, checkpoint, options);
  return family.open(checkpoint, options);
}

std::unique_ptr<VlModel> open_model(const std::filesystem::path& checkpoint,
                                    const ModelOptions& options) {
  return open_model(find_model_family(checkpoint), checkpoint, options);
}

}  // namespace winokit
