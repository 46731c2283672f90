#include "common.hpp"

#include <iostream>

#include "vilt_cli.hpp"
#include "winokit/error.hpp"

namespace winokit::cli {

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << "winokit: error: " << e.what() << "\n";
    return kExitInput;
  } catch (const UsageError& e) {
    std::cerr << "winokit: error: " << e.what() << "\n";
    return kExitInput;
  } catch (const IoError& e) {
    std::cerr << "winokit: error: " << e.what() << "\n";
    return kExitIo;
  } catch (const std::bad_alloc&) {
    std::cerr << "winokit: error: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "winokit: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

void StatFlags::add_to(CLI::App& app) {
  app.add_option("--seed", options.seed, "Seed of the bootstrap resampling")->capture_default_str();
  app.add_option("--bootstrap", options.bootstrap_resamples, "Bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{10'000'000}));
  app.add_option("--confidence", options.confidence, "Confidence level of every interval")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.9999));
  app.add_option("--folds", options.folds, "Folds of the paper's t interval")
      ->capture_default_str()
      ->check(CLI::Range(2, 100));
  app.add_option("--alpha", options.alpha, "Level of the above-chance test")
      ->capture_default_str()
      ->check(CLI::Range(1e-12, 0.5));
  app.add_option("--secondary-grouping", secondary,
                 "membership: an example counts in every secondary tag it lists; exact: only "
                 "examples with exactly one secondary tag (the paper's Table 5)")
      ->capture_default_str()
      ->check(CLI::IsMember({"membership", "exact"}));
}

EvalOptions StatFlags::resolve() const {
  EvalOptions o = options;
  o.secondary =
      secondary == "exact" ? SecondaryGrouping::ExactSingle : SecondaryGrouping::Membership;
  return o;
}

}  // namespace winokit::cli

#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace winokit::cli {

void ModelFlags::add_to(CLI::App& app, bool required) {
  auto* opt =
      app.add_option("--model", model,
                     "Checkpoint folder: CLIP (Hugging Face CLIPModel or OpenCLIP), or ViLT (eval, "
                     "score, winogavil, retrieval, heatmap)");
  if (required) opt->required();
  app.add_option("--threads", threads, "Compute threads (0: all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  app.add_option("--batch-size", batch_size, "Images per model batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--no-cache", no_cache, "Do not read or write the embedding cache");
  app.add_option("--cache-dir", cache_dir,
                 "Embedding cache folder (default $WINOKIT_CACHE_DIR or ~/.cache/winokit)");
  app.add_option("--preprocess", preprocess,
                 "Override the checkpoint's image pipeline: hf (CLIPImageProcessor) or openai "
                 "(openai/CLIP, OpenCLIP)")
      ->check(CLI::IsMember({"hf", "openai"}));
  app.add_option("--tokenizer", tokenizer,
                 "Tokenizer folder (vocab.json + merges.txt) or bpe_simple_vocab_16e6.txt.gz");
}

ClipRunOptions ModelFlags::options() const {
  ClipRunOptions o;
  o.batch_size = batch_size;
  o.use_cache = !no_cache;
  if (!cache_dir.empty()) o.cache_dir = cache_dir;
  if (!preprocess.empty()) {
    o.pipeline = preprocess == "hf" ? PreprocessPipeline::Hf : PreprocessPipeline::OpenAi;
  }
  if (!tokenizer.empty()) o.tokenizer = tokenizer;
  if (!quiet_progress) o.on_progress = progress_bar();
  return o;
}

ClipRuntime ModelFlags::load() const {
  if (is_vilt_checkpoint(model)) refuse_vilt(model);  // ViLT: see vilt_cli.hpp
  set_compute_threads(threads);
  return ClipRuntime::load(model, options());
}

std::function<void(const std::string&, std::size_t, std::size_t)> progress_bar() {
  if (!::isatty(STDERR_FILENO)) return {};
  auto start =
      std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  auto stage_name = std::make_shared<std::string>();
  return [start, stage_name](const std::string& stage, std::size_t done, std::size_t total) {
    if (stage != *stage_name) {
      *stage_name = stage;
      *start = std::chrono::steady_clock::now();
    }
    constexpr int kWidth = 30;
    const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *start).count();
    const int filled = static_cast<int>(frac * kWidth);
    std::fprintf(stderr, "\r%-8s [%s%s] %zu/%zu  %.1f/s ", stage.c_str(),
                 std::string(static_cast<std::size_t>(filled), '=').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(), done, total,
                 secs > 0 ? static_cast<double>(done) / secs : 0.0);
    if (done >= total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

std::string model_name(const std::string& dir) {
  std::filesystem::path p(dir);
  while (!p.empty() && p.filename().empty())
    p = p.parent_path();
  return p.filename().string();
}

}  // namespace winokit::cli
