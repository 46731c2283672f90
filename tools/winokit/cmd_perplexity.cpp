// winokit perplexity: the language-model perplexity of every caption of a dataset (GPT-2 in the
// Winoground paper's Table 6, left), as a covariate table `eval --covariate` / `eval --perplexity`
// reads.
#include <cstdint>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "perplexity_run.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

LmRun run_perplexity(const WinogroundDataset& dataset, const LmRequest& req) {
  set_compute_threads(req.threads);
  const std::unique_ptr<LanguageModel> lm = load_language_model(req.model, req.tokenizer);
  const LanguageModel& model = *lm;
  LmRun run;
  run.weights_id = model.weights_id();
  run.model_name = model.display_name();
  run.definition = perplexity_definition(model, req.bos);
  PerplexityOptions options;
  options.bos = req.bos;
  const bool split = begin_shard(req.shard, "perplexity");
  if (!req.quiet_progress) {
    options.engine.on_progress = [bar = progress_bar(), label = shard_label() + "perplexity"](
                                     std::size_t done, std::size_t total) {
      bar(label, done, total);
    };
  }
  auto compute = [&](const WinogroundDataset& ds, std::size_t* cached) {
    if (req.no_cache) return caption_perplexities(ds, model, options);
    EmbeddingCache cache(
        req.cache_dir.empty() ? default_cache_dir() : std::filesystem::path(req.cache_dir),
        model.weights_id() + "\n" + kernel_version());
    auto values = caption_perplexities(ds, model, options, &cache, cached);
    if (!cache.warning().empty()) run.cache_warning = cache.warning();
    return values;
  };
  if (!split) {
    run.values = compute(dataset, &run.cached);
    return run;
  }
  // A shard's units are the examples (two captions each); a result is the caption's token count
  // and its three figures, bit for bit.
  struct Packed {
    std::int64_t tokens;
    double mean_nll, perplexity, perplexity_exp2;
  };
  constexpr std::size_t kItemBytes = 2 * sizeof(Packed);
  std::string signature =
      "perplexity\n" + model.weights_id() + "\n" + kernel_version() + (req.bos ? "\nbos\n" : "\n");
  for (const auto& ex : dataset.examples)
    signature += ex.captions[0] + '\0' + ex.captions[1] + '\0';
  EmbedStats stats;
  const std::string bytes =
      shard_units("captions", sha256_hex(signature), dataset.examples.size(), kItemBytes, &stats,
                  [&](std::size_t lo, std::size_t hi, EmbedStats* s) {
                    WinogroundDataset part = dataset;
                    part.examples.assign(dataset.examples.begin() + static_cast<long>(lo),
                                         dataset.examples.begin() + static_cast<long>(hi));
                    std::size_t cached = 0;
                    const std::vector<CaptionPerplexity> v = compute(part, &cached);
                    s->texts_cached += cached;
                    s->texts_computed += v.size() - cached;
                    std::string out;
                    for (const CaptionPerplexity& c : v) {
                      const Packed p{c.tokens, c.mean_nll, c.perplexity, c.perplexity_exp2};
                      out.append(reinterpret_cast<const char*>(&p), sizeof p);
                    }
                    return out;
                  });
  for (std::size_t e = 0; e < dataset.examples.size(); ++e) {
    for (int k = 0; k < 2; ++k) {
      Packed p{};
      std::memcpy(&p, bytes.data() + e * kItemBytes + static_cast<std::size_t>(k) * sizeof p,
                  sizeof p);
      run.values.push_back(
          {e, k, static_cast<int>(p.tokens), p.mean_nll, p.perplexity, p.perplexity_exp2});
    }
  }
  run.cached = stats.texts_cached;
  return run;
}

namespace {

struct PerplexityFlags {
  LmRequest lm;
  std::string data;
  ReportFlags output;  // --out
};

int run(const PerplexityFlags& f) {
  WinogroundDataset dataset = load_dataset(f.data);
  LmRun r = run_perplexity(dataset, f.lm);
  OutputSet out;
  out.add(f.output.out, perplexity_csv(dataset, r.values));
  // The definition and provenance beside the CSV (the CSV itself stays plain: no comment lines).
  const nlohmann::json sidecar = {
      {"tool", "winokit"},
      {"version", kVersion},
      {"csv", f.output.out},
      {"definition", r.definition},
      {"columns",
       {{"mean_nll", "mean negative log-likelihood of the predicted caption tokens, in nats"},
        {"perplexity", "exp(mean_nll), the textbook perplexity"},
        {"perplexity_exp2",
         "2^mean_nll, the quantity the official statistics/compute_statistics.py correlates "
         "(Winoground Table 6, left)"}}},
      {"model", f.lm.model},
      {"weights_id", r.weights_id},
      {"bos", f.lm.bos},
      {"dataset",
       {{"examples", dataset.examples_path.string()},
        {"sha256", dataset.examples_sha256},
        {"n", dataset.examples.size()}}}};
  out.add(f.output.out + ".json", sidecar.dump(2) + "\n");
  if (shard_active()) return 0;  // the shard's part file holds its slice (finish_shard)
  out.commit();
  if (!r.cache_warning.empty()) std::cerr << "winokit: " << r.cache_warning << "\n";
  std::cerr << "winokit: " << r.values.size() << " captions (" << r.cached << " from the cache) -> "
            << f.output.out << " (definition and provenance in " << f.output.out
            << ".json)\nwinokit: " << r.definition << "\n";
  return 0;
}

}  // namespace

void add_perplexity(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PerplexityFlags>();
  CLI::App* cmd = app.add_subcommand(
      "perplexity",
      "Language-model perplexity of every caption (GPT-2 in the Winoground paper; a covariate "
      "table for eval)");
  cmd->add_option("--model", flags->lm.model,
                  "Hugging Face language-model folder: GPT-2 (config.json, model.safetensors or "
                  "pytorch_model.bin, vocab.json + merges.txt) or the Llama decoder's families "
                  "(llama, qwen2: config.json, model.safetensors, tokenizer.json)")
      ->required();
  cmd->add_option("--data", flags->data, "Dataset folder with examples.jsonl (no images needed)")
      ->required();
  flags->output.add_to(
      *cmd, ReportFlags::Help::only_out(
                "CSV to write: id,caption,tokens,mean_nll,perplexity,perplexity_exp2 (and "
                "OUT.json: the definition and provenance)",
                true));
  cmd->add_option("--tokenizer", flags->lm.tokenizer,
                  "Folder with the tokenizer (GPT-2: vocab.json + merges.txt; Llama, Qwen2: "
                  "tokenizer.json, or that file) (default: the model folder)");
  cmd->add_flag("--bos", flags->lm.bos,
                "Prepend the model's start token (GPT-2: <|endoftext|>; Llama, Qwen2: "
                "config.json's bos_token_id) so that every caption token is predicted");
  cmd->add_option("--threads", flags->lm.threads, "Compute threads (0: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-cache", flags->lm.no_cache, "Do not read or write the cache");
  cmd->add_option("--cache-dir", flags->lm.cache_dir,
                  "Cache folder (default $WINOKIT_CACHE_DIR or ~/.cache/winokit)");
  flags->lm.shard.add_to(*cmd);
  cmd->callback([flags, &exit_code] { exit_code = guarded([&] { return run(*flags); }); });
}

}  // namespace winokit::cli
