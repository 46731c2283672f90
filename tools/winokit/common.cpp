#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "winokit/core/error.hpp"
#include "winokit/model/compute.hpp"

namespace winokit::cli {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    // A prefix ("--htm" for "--html-images") is as good as one edit.
    if (c.size() > word.size() && c.compare(0, word.size(), word) == 0 && word.size() >= 3)
      d = std::min<std::size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= limit ? best : std::string();
}

namespace {

std::string command_path(const CLI::App& cmd) {
  std::string path;
  for (const CLI::App* a = &cmd; a; a = a->get_parent()) {
    if (a->get_parent() == nullptr) {
      path = "winokit" + path;
    } else if (!a->get_name().empty()) {
      path = " " + a->get_name() + path;
    }
  }
  return path;
}

std::vector<const CLI::App*> named_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); });
}

const CLI::App* deepest_parsed(CLI::App& app) {
  CLI::App* cur = &app;
  while (true) {
    auto subs = cur->get_subcommands();
    if (subs.empty()) return cur;
    cur = subs.back();
  }
}

void print_error(const CLI::App& cmd, const std::string& message) {
  std::cerr << "winokit: error: " << message << "\n" << usage_line(cmd) << "\n";
}

}  // namespace

std::string usage_line(const CLI::App& cmd) {
  const std::string path = command_path(cmd);
  std::string line = "usage: " + path;
  const auto subs = named_subcommands(cmd);
  if (!subs.empty()) {
    line += " <" + std::string(cmd.get_parent() ? "action" : "subcommand") + "> [options]";
  } else {
    for (const CLI::Option* opt : cmd.get_options()) {
      if (!opt->get_required()) continue;
      if (opt->nonpositional()) {
        std::string type = opt->get_type_name();
        line += " --" + opt->get_lnames().front() + " " + (type.empty() ? "VALUE" : type);
      } else {
        line += " " + opt->get_name() + "...";
      }
    }
    line += " [options]";
  }
  return line + "  (see '" + path + " --help')";
}

bool precheck_arguments(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) == 0) {
      const std::string name = arg.substr(0, arg.find('='));
      if (cur->get_option_no_throw(name) != nullptr) continue;
      if (cur == &app && name == "--version") continue;
      std::vector<std::string> names;
      for (const CLI::Option* opt : cur->get_options())
        for (const auto& l : opt->get_lnames())
          names.push_back("--" + l);
      for (const CLI::App* g :
           cur->get_subcommands([](const CLI::App* s) { return s->get_name().empty(); }))
        for (const CLI::Option* opt : g->get_options())
          for (const auto& l : opt->get_lnames())
            names.push_back("--" + l);
      const std::string guess = did_you_mean(name, names);
      print_error(*cur, "unknown option '" + name + "'" +
                            (cur == &app ? "" : " for '" + command_path(*cur) + "'") +
                            (guess.empty() ? "" : ", did you mean '" + guess + "'?"));
      return false;
    }
    if (arg.rfind("-", 0) == 0) continue;  // short options, negative numbers: CLI11 decides
    const auto subs = named_subcommands(*cur);
    if (subs.empty()) continue;  // a positional or an option's value
    // Option values come before the subcommand only at the top level, which has none.
    auto it = std::find_if(subs.begin(), subs.end(),
                           [&](const CLI::App* s) { return s->check_name(arg); });
    if (it != subs.end()) {
      cur = const_cast<CLI::App*>(*it);
      continue;
    }
    if (i > 1 && cur != &app && std::string(argv[i - 1]).rfind("--", 0) == 0) continue;
    std::vector<std::string> names;
    for (const CLI::App* s : subs)
      names.push_back(s->get_name());
    const std::string guess = did_you_mean(arg, names);
    print_error(*cur, "unknown " + std::string(cur == &app ? "subcommand" : "action") + " '" + arg +
                          "'" + (guess.empty() ? "" : ", did you mean '" + guess + "'?"));
    return false;
  }
  return true;
}

void print_parse_error(CLI::App& app, const CLI::ParseError& error) {
  std::string message = error.what();
  if (!message.empty() && std::isupper(static_cast<unsigned char>(message[0])) &&
      (message.size() < 2 || !std::isupper(static_cast<unsigned char>(message[1]))))
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  print_error(*deepest_parsed(app), message);
}

void wrote(const std::string& path) {
  std::cerr << "winokit: wrote " << path << "\n";
}

void commit(OutputSet& out) {
  if (shard_active()) return;      // a shard writes its part file instead (finish_shard)
  const auto paths = out.paths();  // commit() empties the set
  out.commit();
  for (const auto& p : paths)
    wrote(p.string());
}

int guarded(const std::function<int()>& body) {
  try {
    const int rc = body();
    if (rc == 0) finish_shard();
    return rc;
  } catch (const InputError& e) {
    std::cerr << "winokit: error: " << e.what() << "\n";
    return kExitInput;
  } catch (const UsageError& e) {
    std::cerr << "winokit: error: " << e.what() << "\n";
    return kExitInput;
  } catch (const IoError& e) {
    std::cerr << "winokit: error: " << e.what() << "\n";
    return kExitIo;
  } catch (const std::filesystem::filesystem_error& e) {
    // A file-system check the library made without an error code (symbolic-link loop, ...).
    std::cerr << "winokit: error: " << e.path1().string() << ": " << e.code().message() << "\n";
    return kExitIo;
  } catch (const std::bad_alloc&) {
    std::cerr << "winokit: error: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "winokit: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

void note_ignored_ids(const std::string& file, std::size_t ignored, std::size_t examples) {
  if (ignored == 0) return;
  std::cerr << "winokit: " << file << ": " << ignored << (ignored == 1 ? " id" : " ids")
            << " not in the dataset ignored (the file covers all " << examples
            << " examples of the dataset)\n";
}

void StatFlags::add_to(CLI::App& app) {
  app.add_option("--seed", options.seed, "Seed of the bootstrap resampling")->capture_default_str();
  app.add_option("--bootstrap", options.bootstrap_resamples, "Bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{10'000'000}));
  app.add_option("--confidence", options.confidence, "Confidence level of every interval")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.9999));
  app.add_option("--folds", options.folds, "Folds of the t interval (the paper: 4)")
      ->capture_default_str()
      ->check(CLI::Range(2, 100));
  app.add_option("--fold-split", fold_split,
                 "paper: examples in the order of Python's random.seed(--fold-seed); "
                 "random.shuffle(list(range(N))), as the Winoground paper's Appendix A; "
                 "id-order: consecutive groups in id order (not the paper's)")
      ->capture_default_str()
      ->check(CLI::IsMember({"paper", "id-order"}));
  app.add_option("--fold-seed", options.fold_seed,
                 "Python random.seed of the paper's fold split (the paper: 0)")
      ->capture_default_str();
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
  o.fold_split = fold_split == "id-order" ? FoldSplit::IdOrder : FoldSplit::PaperShuffle;
  return o;
}

void ReportFlags::add_to(CLI::App& app, const Help& help) {
  if (help.out) {
    auto* opt = app.add_option("--out", out, help.out);
    if (help.out_required) opt->required();
    if (!out.empty()) opt->capture_default_str();
  }
  if (help.json) app.add_option("--json", json, help.json);
  if (help.csv) app.add_option("--csv", csv, help.csv);
  if (help.html) app.add_option("--html", html, help.html);
  if (help.html_images) {
    app.add_option("--html-images", html_images,
                   "Images in the HTML example browser: embed (thumbnails, one self-contained "
                   "file), link (to the image files), none")
        ->capture_default_str()
        ->check(CLI::IsMember({"embed", "link", "none"}));
  }
  if (help.markdown) app.add_option("--markdown", markdown, help.markdown);
  if (help.quiet) app.add_flag("--quiet", quiet, help.quiet);
}

const std::string& ReportFlags::path(ReportFormat format) const {
  switch (format) {
    case ReportFormat::Json:
      return json;
    case ReportFormat::Csv:
      return csv;
    case ReportFormat::Html:
      return html;
    case ReportFormat::Markdown:
      return markdown;
  }
  return json;
}

void ReportFlags::add_outputs(OutputSet& files, const std::vector<ReportText>& texts) const {
  for (const auto& t : texts) {
    const std::string& p = path(t.format);
    if (!p.empty()) files.add(p, t.text());
  }
}

void ReportFlags::print(const std::string& text) const {
  if (!quiet && markdown.empty() && !shard_active()) std::cout << text;
}

}  // namespace winokit::cli

#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace winokit::cli {

void ModelFlags::add_to(CLI::App& app, bool required) {
  std::string families;
  for (const ModelFamily& f : model_families())
    families += (families.empty() ? "" : ", ") + f.name;
  auto* opt =
      app.add_option("--model", model,
                     "Checkpoint folder or file of any registered model family (" + families +
                         "; `winokit models` lists them and what each can do); the "
                         "family is read from the checkpoint");
  if (required) opt->required();
  std::string heads;  // from the registry: "FAMILY: HEAD, HEAD; ..."
  for (const ModelFamily& f : model_families()) {
    if (f.heads.size() < 2) continue;
    std::string list;
    for (const auto& h : f.heads)
      list += (list.empty() ? "" : ", ") + h;
    heads += (heads.empty() ? "" : "; ") + f.name + ": " + list;
  }
  app.add_option("--head", head,
                 "Score head, for families with several (" + heads +
                     "); default: the family's first (`winokit models`)");
  app.add_option("--threads", threads, "Compute threads (0: all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  app.add_option("--batch-size", batch_size, "Images per model batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--no-cache", no_cache, "Do not read or write the embedding cache");
  app.add_option("--cache-dir", cache_dir,
                 "Embedding cache folder (default $WINOKIT_CACHE_DIR or ~/.cache/winokit)");
  app.add_option(
      "--preprocess", preprocess,
      "Override the checkpoint's image pipeline (" + family_option_help("--preprocess") + ")");
  app.add_option("--tokenizer", tokenizer,
                 "Tokenizer to use (" + family_option_help("--tokenizer") + ")");
  app.add_option(
         "--model-option", model_options,
         "A family's setting KEY=VALUE, repeatable (" + family_option_help("--model-option") + ")")
      ->take_all()
      ->allow_extra_args(false);
  shard.add_to(app);
}

ModelOptions ModelFlags::options() const {
  ModelOptions o;
  o.batch_size = batch_size;
  o.use_cache = !no_cache;
  if (!cache_dir.empty()) o.cache_dir = cache_dir;
  o.preprocess = preprocess;
  o.tokenizer = tokenizer;
  o.head = head;
  for (const std::string& kv : model_options) {
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError("--model-option " + kv + ": expected KEY=VALUE",
                       "`winokit models` lists each family's settings");
    }
    o.settings.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (!quiet_progress) {
    o.on_progress = progress_bar();
    if (!shard.shard.empty()) {  // each shard says which it is
      o.on_progress = [bar = o.on_progress, label = "shard " + shard.shard + " "](
                          const std::string& stage, std::size_t done, std::size_t total) {
        bar(label + stage, done, total);
      };
    }
  }
  return o;
}

namespace {

std::unique_ptr<VlModel> open_checkpoint(const ModelFlags& flags);

}  // namespace

std::unique_ptr<VlModel> ModelFlags::open() const {
  return wrap_model(open_checkpoint(*this), shard, "");
}

std::unique_ptr<VlModel> ModelFlags::open(const std::string& command, Ability ability) const {
  std::unique_ptr<VlModel> m = open_checkpoint(*this);
  require(*m, ability, command);
  return wrap_model(std::move(m), shard, command);
}

namespace {

std::unique_ptr<VlModel> open_checkpoint(const ModelFlags& flags) {
  const std::string& model = flags.model;
  const bool quiet_progress = flags.quiet_progress;
  set_compute_threads(flags.threads);
  const ModelFamily& family = find_model_family(model);
  // Start-up (reading, hashing and packing the weights) takes seconds on a real checkpoint:
  // say so, and how long it took, rather than sit silent.
  const bool tell = !quiet_progress;
  if (tell) progress_note("loading the " + family.name + " checkpoint " + model + " ...");
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<VlModel> m = open_model(family, model, flags.options());
  if (tell) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    progress_note(m->name() + " loaded in " + std::string(secs) + " s");
  }
  return m;
}

std::string duration_text(double seconds) {
  char buf[32];
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

struct ProgressState {
  std::string stage;
  std::chrono::steady_clock::time_point start, last_draw;
  std::size_t done_at_start = 0;
  bool logged = false;  // a log line was written for this stage
};

// Seconds between two log lines when stderr is not a terminal: $WINOKIT_PROGRESS_SECONDS, or 5.
double log_interval() {
  constexpr double kDefaultSeconds = 5.0;
  const char* env = std::getenv("WINOKIT_PROGRESS_SECONDS");
  if (!env || !*env) return kDefaultSeconds;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  return end && *end == '\0' && v >= 0 && std::isfinite(v) ? v : kDefaultSeconds;
}

// The rate and ETA (or the elapsed time when the stage is done) of a stage's own work: items
// done since the stage's first report, over the time since then.
std::string rate_text(const ProgressState& st, std::size_t done, std::size_t total, double secs) {
  const bool finished = done >= total;
  const std::size_t timed = done - std::min(done, st.done_at_start);
  constexpr double kMinSeconds = 0.05;  // below this a rate is noise (a cache hit, one batch)
  if (timed > 0 && secs >= kMinSeconds) {
    const double rate = static_cast<double>(timed) / secs;
    char buf[64];
    std::snprintf(buf, sizeof buf, rate >= 10 ? "%.0f/s" : "%.2g/s", rate);
    return std::string(buf) +
           (finished ? ", " + duration_text(secs) + " elapsed"
                     : ", ETA " + duration_text(static_cast<double>(total - done) / rate));
  }
  return finished ? "done" : "";
}

void begin_stage(ProgressState& st, const std::string& stage, std::size_t done,
                 std::chrono::steady_clock::time_point now) {
  // The rate counts only the work timed here: items already done (from the cache, or before the
  // first report) are not divided by a near-zero time.
  st.stage = stage;
  st.start = now;
  st.last_draw = now;
  st.done_at_start = done;
  st.logged = false;
}

}  // namespace

std::function<void(const std::string&, std::size_t, std::size_t)> progress_bar() {
  auto st = std::make_shared<ProgressState>();
  if (!::isatty(STDERR_FILENO)) {
    // Logs: one line every few seconds, and a closing line for a stage that wrote any, so a
    // short run stays silent and a long one shows it is alive, how far it is and when it ends.
    const double every = log_interval();
    return [st, every](const std::string& stage, std::size_t done, std::size_t total) {
      const auto now = std::chrono::steady_clock::now();
      if (stage != st->stage) begin_stage(*st, stage, done, now);
      const bool finished = done >= total;
      const double since = std::chrono::duration<double>(now - st->last_draw).count();
      if (finished ? !st->logged && since < every : since < every) return;
      st->last_draw = now;
      st->logged = true;
      const double secs = std::chrono::duration<double>(now - st->start).count();
      const double pct =
          total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
      const std::string rate = rate_text(*st, done, total, secs);
      std::fprintf(stderr, "winokit: %s %zu/%zu (%.0f%%)%s%s\n", stage.c_str(), done, total, pct,
                   rate.empty() ? "" : ", ", rate.c_str());
      std::fflush(stderr);
      if (finished) st->stage.clear();
    };
  }
  return [st](const std::string& stage, std::size_t done, std::size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (stage != st->stage) {
      begin_stage(*st, stage, done, now);
      st->last_draw = now - std::chrono::seconds(1);
    }
    const bool finished = done >= total;
    if (!finished && now - st->last_draw < std::chrono::milliseconds(100)) return;
    st->last_draw = now;
    constexpr int kWidth = 30;
    const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const double secs = std::chrono::duration<double>(now - st->start).count();
    const int filled = static_cast<int>(frac * kWidth);
    std::fprintf(stderr, "\r%-8s [%s%s] %zu/%zu  %s\x1b[K", stage.c_str(),
                 std::string(static_cast<std::size_t>(filled), '=').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(), done, total,
                 rate_text(*st, done, total, secs).c_str());
    if (finished) {
      std::fprintf(stderr, "\n");
      st->stage.clear();
    }
    std::fflush(stderr);
  };
}

void progress_note(const std::string& line) {
  std::fprintf(stderr, "winokit: %s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace winokit::cli
