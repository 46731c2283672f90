#include "winokit/data/covariates.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

Covariate caption_length_covariate(const WinogroundDataset& dataset) {
  Covariate c;
  c.name = "caption length (words)";
  c.source = "built-in";
  for (const auto& ex : dataset.examples) {
    const auto w0 = static_cast<double>(count_words(ex.captions[0]));
    const auto w1 = static_cast<double>(count_words(ex.captions[1]));
    c.values.emplace_back((w0 + w1) / 2.0);
    c.caption_values.push_back({w0, w1});
  }
  return c;
}

std::vector<Covariate> load_covariates(const std::string& file, const WinogroundDataset& dataset) {
  const std::string raw = read_text_file(file);
  // Leading '#' lines are comments (e.g. the definition `winokit perplexity` writes).
  std::size_t skipped = 0, body = 0;
  while (body < raw.size() && raw[body] == '#') {
    auto nl = raw.find('\n', body);
    body = nl == std::string::npos ? raw.size() : nl + 1;
    ++skipped;
  }
  const std::string text = raw.substr(body);
  Table table;
  try {
    table = read_table(text, file);
  } catch (const InputError& e) {
    Location where = e.location();
    if (where.line != 0) where.line += skipped;
    throw InputError(where, e.problem(), e.hint());
  }
  for (auto& row : table.rows)
    row.line += skipped;
  auto id_col = table.find_column({"id", "example_id", "example"});
  if (!id_col) throw InputError({file, 1, "id"}, "no id column in the header");
  auto caption_col = table.find_column({"caption", "caption_index", "caption_idx"});
  std::vector<std::size_t> value_cols;
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    if (c != *id_col && (!caption_col || c != *caption_col)) value_cols.push_back(c);
  }
  if (value_cols.empty()) throw InputError({file, 1, ""}, "no covariate column besides the id");
  const std::string hash = sha256_hex(raw);
  const std::size_t n = dataset.examples.size();
  // sums[c][i][k]: value of column c for example i, caption k (k = 0 when per example).
  std::vector<std::vector<std::array<std::optional<double>, 2>>> seen(
      value_cols.size(), std::vector<std::array<std::optional<double>, 2>>(n));
  std::vector<std::array<std::size_t, 2>> seen_line(n, {0, 0});
  std::optional<Location> first_unknown;
  std::string first_unknown_id;
  std::set<std::string> unknown_ids;
  for (const auto& row : table.rows) {
    const std::string& id = row.cells[*id_col];
    auto index = dataset.find(std::string(trim(id)));
    if (!index) {
      if (!first_unknown) {
        first_unknown = Location{file, row.line, table.header[*id_col]};
        first_unknown_id = id;
      }
      unknown_ids.insert(std::string(trim(id)));
      continue;
    }
    std::size_t k = 0;
    if (caption_col) {
      auto ci = parse_int(row.cells[*caption_col]);
      if (!ci || (*ci != 0 && *ci != 1)) {
        throw InputError({file, row.line, table.header[*caption_col]}, "expected 0 or 1");
      }
      k = static_cast<std::size_t>(*ci);
    }
    if (seen_line[*index][k] != 0) {
      throw InputError({file, row.line, table.header[*id_col]},
                       "duplicate row for id " + id + " (first on line " +
                           std::to_string(seen_line[*index][k]) + ")");
    }
    seen_line[*index][k] = row.line;
    for (std::size_t c = 0; c < value_cols.size(); ++c) {
      const std::string& cell = row.cells[value_cols[c]];
      auto v = parse_double(cell);
      if (!v) {
        throw InputError({file, row.line, table.header[value_cols[c]]},
                         "not a number: '" + cell + "'");
      }
      if (!std::isfinite(*v)) {
        throw InputError({file, row.line, table.header[value_cols[c]]}, "non-finite value");
      }
      seen[c][*index][k] = *v;
    }
  }
  if (first_unknown) {
    std::size_t missing = 0;
    for (const auto& lines : seen_line)
      missing += lines[0] == 0 && lines[1] == 0;
    if (missing > 0) {
      throw InputError(*first_unknown,
                       "unknown example id '" + first_unknown_id + "' (" +
                           std::to_string(unknown_ids.size()) + " ids not in the dataset, and " +
                           std::to_string(missing) + " of its " + std::to_string(n) +
                           " examples not in the file)",
                       "the file is for another dataset than " + dataset.examples_path.string() +
                           "; a file for a larger set is read when it covers every example");
    }
  }
  std::vector<Covariate> out;
  for (std::size_t c = 0; c < value_cols.size(); ++c) {
    Covariate cov;
    cov.ignored_ids = unknown_ids.size();
    cov.name = table.header[value_cols[c]];
    cov.source = file;
    cov.sha256 = hash;
    cov.values.resize(n);
    if (caption_col) cov.caption_values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& v = seen[c][i];
      if (!caption_col) {
        cov.values[i] = v[0];
      } else if (v[0] && v[1]) {
        cov.values[i] = (*v[0] + *v[1]) / 2.0;
        cov.caption_values[i] = v;
      } else if (v[0] || v[1]) {
        throw InputError({file, seen_line[i][v[0] ? 0 : 1], cov.name},
                         "example " + dataset.examples[i].id + " has a value for one caption only");
      }
    }
    out.push_back(std::move(cov));
  }
  return out;
}

namespace {

// A double stored bit for bit in two floats (the cache holds float vectors).
void put_double(std::vector<float>& out, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const auto lo = static_cast<std::uint32_t>(bits), hi = static_cast<std::uint32_t>(bits >> 32);
  float f[2];
  std::memcpy(&f[0], &lo, sizeof lo);
  std::memcpy(&f[1], &hi, sizeof hi);
  out.push_back(f[0]);
  out.push_back(f[1]);
}
double get_double(const float* f) {
  std::uint32_t lo, hi;
  std::memcpy(&lo, &f[0], sizeof lo);
  std::memcpy(&hi, &f[1], sizeof hi);
  const std::uint64_t bits = (static_cast<std::uint64_t>(hi) << 32) | lo;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The cache key's text (under the model's weights id; the name predates other language models and
// is kept so that existing caches stay valid).
std::string ids_text(const std::vector<int>& ids) {
  std::string s = "gpt2-log-probs:";
  for (int id : ids)
    s += std::to_string(id) + ",";
  return s;
}

}  // namespace

std::vector<CaptionPerplexity> caption_perplexities(const WinogroundDataset& dataset,
                                                    const LanguageModel& model,
                                                    const PerplexityOptions& options,
                                                    EmbeddingCache* cache, std::size_t* cached) {
  const std::optional<int> start = model.start_token();
  if (options.bos && !start) {
    throw UsageError("--bos: this " + model.display_name() +
                         " model has no start token (no bos_token_id in its config.json, and "
                         "its tokenizer puts none before a text)",
                     "leave out --bos: the first token of each caption is then not predicted");
  }
  std::vector<CaptionPerplexity> out;
  std::vector<std::vector<int>> todo;
  std::vector<std::size_t> todo_index;
  std::vector<std::vector<double>> log_probs;
  if (cached != nullptr) *cached = 0;
  for (std::size_t i = 0; i < dataset.examples.size(); ++i) {
    const WinogroundExample& ex = dataset.examples[i];
    for (int c = 0; c < 2; ++c) {
      std::vector<int> ids = model.encode(ex.captions[static_cast<std::size_t>(c)]);
      CaptionPerplexity p;
      p.example = i;
      p.caption = c;
      p.tokens = static_cast<int>(ids.size());
      if (options.bos) ids.insert(ids.begin(), *start);
      if (ids.size() < 2) {
        throw UsageError("example " + ex.id + ", caption " + std::to_string(c) + " ('" +
                             ex.captions[static_cast<std::size_t>(c)] + "') has " +
                             std::to_string(p.tokens) + " " + model.display_name() +
                             " token: nothing to predict without a start token",
                         start ? "pass --bos to prepend " + model.start_token_text()
                               : "this model has no start token: drop the caption");
      }
      if (static_cast<int>(ids.size()) > model.context()) {
        throw UsageError("example " + ex.id + ", caption " + std::to_string(c) + " has " +
                         std::to_string(ids.size()) + " tokens; the model's context is " +
                         std::to_string(model.context()));
      }
      out.push_back(p);
      log_probs.emplace_back();
      if (cache != nullptr) {
        if (auto v = cache->get(cache->text_key(ids_text(ids)), 2 * (ids.size() - 1))) {
          for (std::size_t t = 0; t + 1 < ids.size(); ++t)
            log_probs.back().push_back(get_double(&(*v)[2 * t]));
          if (cached != nullptr) ++*cached;
          continue;
        }
      }
      todo.push_back(std::move(ids));
      todo_index.push_back(out.size() - 1);
    }
  }
  auto scores = model.score(todo, options.engine);
  for (std::size_t k = 0; k < todo.size(); ++k) {
    log_probs[todo_index[k]] = scores[k].log_probs;
    if (cache != nullptr) {
      std::vector<float> v;
      for (double lp : scores[k].log_probs)
        put_double(v, lp);
      cache->put(cache->text_key(ids_text(todo[k])), v);
    }
  }
  // The same float64 sum for computed and cached values.
  for (std::size_t k = 0; k < out.size(); ++k) {
    double sum = 0;
    for (double lp : log_probs[k])
      sum += lp;
    out[k].mean_nll = -sum / static_cast<double>(log_probs[k].size());
    out[k].perplexity = std::exp(out[k].mean_nll);
    out[k].perplexity_exp2 = std::exp2(out[k].mean_nll);
  }
  return out;
}

std::string perplexity_csv(const WinogroundDataset& dataset,
                           const std::vector<CaptionPerplexity>& values) {
  std::string csv = std::string("id,caption,tokens,mean_nll,") + kPerplexityTextbook + "," +
                    kPerplexityOfficial + "\n";
  auto num = [](double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return std::string(b);
  };
  for (const auto& v : values) {
    csv += csv_escape(dataset.examples[v.example].id) + "," + std::to_string(v.caption) + "," +
           std::to_string(v.tokens) + "," + num(v.mean_nll) + "," + num(v.perplexity) + "," +
           num(v.perplexity_exp2) + "\n";
  }
  return csv;
}

std::vector<Covariate> perplexity_covariates(const WinogroundDataset& dataset,
                                             const std::vector<CaptionPerplexity>& values,
                                             const std::string& source) {
  std::vector<Covariate> out;
  for (const char* name : {kPerplexityOfficial, kPerplexityTextbook}) {
    Covariate cov;
    cov.name = name;
    cov.source = source;
    cov.values.resize(dataset.examples.size());
    cov.caption_values.resize(dataset.examples.size());
    const bool official = std::string(name) == kPerplexityOfficial;
    for (const auto& v : values) {
      cov.caption_values[v.example][static_cast<std::size_t>(v.caption)] =
          official ? v.perplexity_exp2 : v.perplexity;
    }
    for (std::size_t i = 0; i < dataset.examples.size(); ++i) {
      const auto& cv = cov.caption_values[i];
      if (cv[0] && cv[1]) cov.values[i] = (*cv[0] + *cv[1]) / 2.0;
    }
    out.push_back(std::move(cov));
  }
  return out;
}

}  // namespace winokit
