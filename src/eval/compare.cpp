#include "winokit/eval/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

CompareResult compare_runs(const WinogroundDataset& dataset, const std::vector<Run>& runs,
                           const EvalOptions& options) {
  if (runs.size() < 2) throw UsageError("compare needs at least two runs");
  std::set<std::string> names;
  for (const auto& run : runs) {
    if (!names.insert(run.name).second) {
      throw UsageError("two runs are named '" + run.name + "'", "name them with NAME=FILE");
    }
    if (run.scores.size() != dataset.examples.size()) {
      throw UsageError("run '" + run.name + "' does not cover the dataset");
    }
  }
  CompareResult out;
  out.options = options;
  const auto order = dataset.id_order();
  std::vector<std::vector<Outcome>> outcomes;
  std::vector<std::vector<std::uint8_t>> bits;
  for (const auto& run : runs) {
    std::vector<Outcome> o;
    for (const auto& s : run.scores)
      o.push_back(judge(s));
    std::vector<std::uint8_t> b;
    for (std::size_t i : order)
      b.push_back(o[i].bits());
    out.names.push_back(run.name);
    out.sources.push_back(run.source);
    // Every run uses the same bootstrap stream, so the leaderboard's intervals are paired too.
    out.leaderboard.push_back(group_stats(run.name, order, o, options, "overall"));
    outcomes.push_back(std::move(o));
    bits.push_back(std::move(b));
  }
  std::stable_sort(out.leaderboard.begin(), out.leaderboard.end(),
                   [](const GroupStats& x, const GroupStats& y) {
                     for (std::size_t m : {kGroup, kText, kImage}) {
                       if (x.metrics[m].correct != y.metrics[m].correct) {
                         return x.metrics[m].correct > y.metrics[m].correct;
                       }
                     }
                     return false;
                   });
  for (std::size_t a = 0; a < runs.size(); ++a) {
    for (std::size_t b = a + 1; b < runs.size(); ++b) {
      auto diff = paired_bootstrap_difference(
          bits[a], bits[b], kMetricCount, options.bootstrap_resamples, options.confidence,
          derive_seed(options.seed, "paired/" + runs[a].name + "/" + runs[b].name));
      for (std::size_t m = 0; m < kMetricCount; ++m) {
        PairwiseRow row;
        row.a = runs[a].name;
        row.b = runs[b].name;
        row.metric = m;
        for (std::size_t i = 0; i < bits[a].size(); ++i) {
          bool x = (bits[a][i] >> m) & 1u, y = (bits[b][i] >> m) & 1u;
          row.a_only += x && !y;
          row.b_only += y && !x;
        }
        row.difference = (static_cast<double>(row.a_only) - static_cast<double>(row.b_only)) /
                         static_cast<double>(bits[a].size());
        row.p_mcnemar = mcnemar_exact_p(row.a_only, row.b_only);
        row.paired_bootstrap = diff[m];
        out.pairwise.push_back(row);
      }
    }
  }
  return out;
}

BenchmarkCompareResult compare_benchmark_runs(const BenchmarkData& data,
                                              const std::vector<BenchmarkRun>& runs,
                                              const BenchmarkOptions& options) {
  constexpr std::size_t kMaxChecks = 3;  // paired_bootstrap_difference takes up to 3 outcomes
  if (runs.size() < 2) throw UsageError("compare needs at least two runs");
  std::set<std::string> seen;
  for (const auto& run : runs) {
    if (!seen.insert(run.name).second) {
      throw UsageError("two runs are named '" + run.name + "'", "name them with NAME=FILE");
    }
    if (run.summary.items.size() != data.items.size() || data.items.empty()) {
      throw UsageError("run '" + run.name + "' has " + std::to_string(run.summary.items.size()) +
                       " item outcomes for the " + std::to_string(data.items.size()) +
                       " items of " + data.benchmark);
    }
  }
  BenchmarkCompareResult out;
  out.benchmark = data.benchmark;
  out.options = options;
  // The checks every item of every run has, by position, named as the first item names them.
  std::size_t checks = kMaxChecks;
  for (const auto& run : runs)
    for (const auto& item : run.summary.items)
      checks = std::min(checks, item.checks.size());
  if (checks == 0) throw UsageError(data.benchmark + ": an item has no outcome to compare");
  for (std::size_t c = 0; c < checks; ++c)
    out.checks.push_back(runs[0].summary.items[0].checks[c].name);
  for (const auto& run : runs) {
    out.names.push_back(run.name);
    out.sources.push_back(run.source);
  }
  // Outcome bits per run per item (bit c: check c right), and the items of each subset.
  std::vector<std::vector<std::uint8_t>> bits(runs.size());
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups = {{"", {}}};
  std::map<std::string, std::size_t> group_index;
  for (std::size_t i = 0; i < data.items.size(); ++i) {
    BenchmarkCompareResult::Item item{data.items[i].id, runs[0].summary.items[i].subset, {}};
    for (std::size_t r = 0; r < runs.size(); ++r) {
      std::uint8_t b = 0;
      std::vector<std::uint8_t> right;
      for (std::size_t c = 0; c < checks; ++c) {
        const bool ok = runs[r].summary.items[i].checks[c].right;
        b = static_cast<std::uint8_t>(b | (ok ? 1u << c : 0u));
        right.push_back(ok ? 1 : 0);
      }
      bits[r].push_back(b);
      item.right.push_back(std::move(right));
    }
    groups[0].second.push_back(i);
    if (!item.subset.empty()) {
      auto [it, fresh] = group_index.emplace(item.subset, groups.size());
      if (fresh) {
        groups.push_back({item.subset, {}});
        out.subsets.push_back(item.subset);
      }
      groups[it->second].second.push_back(i);
    }
    out.items.push_back(std::move(item));
  }
  // One group alone is every item: no per-subset rows repeating the overall ones.
  if (groups.size() == 2 && groups[1].second.size() == data.items.size()) groups.resize(1);
  std::vector<std::vector<BenchmarkAccuracyRow>> accuracy(checks);
  std::vector<std::vector<BenchmarkPairRow>> pairwise(checks);
  for (const auto& [subset, members] : groups) {
    std::vector<std::vector<std::uint8_t>> sub(runs.size());
    for (std::size_t r = 0; r < runs.size(); ++r)
      for (std::size_t i : members)
        sub[r].push_back(bits[r][i]);
    const double n = static_cast<double>(members.size());
    for (std::size_t r = 0; r < runs.size(); ++r) {
      // The same seed for every run: the runs' intervals come from the same resamples.
      const BootstrapIntervals ci =
          bootstrap_proportions(sub[r], checks, options.bootstrap_resamples, options.confidence,
                                derive_seed(options.seed, "compare/" + subset));
      for (std::size_t c = 0; c < checks; ++c) {
        BenchmarkAccuracyRow row{runs[r].name, subset, out.checks[c], members.size(), 0, 0, {}};
        for (auto b : sub[r])
          row.right += (b >> c) & 1u;
        row.percent = 100.0 * static_cast<double>(row.right) / n;
        if (ci.percentile[c].valid())
          row.interval = {ci.percentile[c].low * 100, ci.percentile[c].high * 100};
        accuracy[c].push_back(row);
      }
    }
    for (std::size_t a = 0; a < runs.size(); ++a) {
      for (std::size_t b = a + 1; b < runs.size(); ++b) {
        const auto diff = paired_bootstrap_difference(
            sub[a], sub[b], checks, options.bootstrap_resamples, options.confidence,
            derive_seed(options.seed,
                        "compare/" + subset + "/" + runs[a].name + "/" + runs[b].name));
        for (std::size_t c = 0; c < checks; ++c) {
          BenchmarkPairRow row;
          row.subset = subset;
          row.check = out.checks[c];
          row.a = runs[a].name;
          row.b = runs[b].name;
          row.n = members.size();
          for (std::size_t k = 0; k < members.size(); ++k) {
            const bool x = (sub[a][k] >> c) & 1u, y = (sub[b][k] >> c) & 1u;
            row.a_right += x;
            row.b_right += y;
            row.a_only += x && !y;
            row.b_only += y && !x;
          }
          row.difference =
              100.0 * (static_cast<double>(row.a_only) - static_cast<double>(row.b_only)) / n;
          row.p_mcnemar = mcnemar_exact_p(row.a_only, row.b_only);
          if (diff[c].valid()) row.paired_bootstrap = {diff[c].low * 100, diff[c].high * 100};
          pairwise[c].push_back(row);
        }
      }
    }
  }
  for (std::size_t c = 0; c < checks; ++c) {
    out.accuracy.insert(out.accuracy.end(), accuracy[c].begin(), accuracy[c].end());
    out.pairwise.insert(out.pairwise.end(), pairwise[c].begin(), pairwise[c].end());
  }
  return out;
}

RunInfo load_run_info(const std::string& file) {
  const std::string text = read_file(file);
  Table table = read_table(text, file);
  auto name_col = table.find_column({"run", "name", "model"});
  if (!name_col) throw InputError({file, 1, "run"}, "no run column (run, name or model)");
  RunInfo info;
  info.file = file;
  info.sha256 = sha256_hex(text);
  std::vector<std::size_t> cols;
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    if (c == *name_col) continue;
    cols.push_back(c);
  }
  if (cols.empty()) throw InputError({file, 1, ""}, "no column besides the run name");
  auto missing = [](const std::string& cell) {
    return cell.empty() || cell == "NA" || cell == "na" || cell == "n/a";
  };
  // A column with a value that is not a number is categorical.
  std::vector<bool> categorical(cols.size(), false);
  for (const auto& row : table.rows) {
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const std::string cell(trim(row.cells[cols[k]]));
      if (!missing(cell) && !parse_double(cell)) categorical[k] = true;
    }
  }
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const std::string& name = table.header[cols[k]];
    if (categorical[k]) {
      info.categorical_columns.push_back(name);
      info.categories[name];
    } else {
      info.columns.push_back(name);
      info.values[name];
    }
  }
  std::map<std::string, std::size_t> seen;
  for (const auto& row : table.rows) {
    const std::string name(trim(row.cells[*name_col]));
    if (name.empty()) throw InputError({file, row.line, table.header[*name_col]}, "empty run name");
    if (auto [it, fresh] = seen.emplace(name, row.line); !fresh) {
      throw InputError(
          {file, row.line, table.header[*name_col]},
          "run '" + name + "' again (first on line " + std::to_string(it->second) + ")");
    }
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const std::string cell(trim(row.cells[cols[k]]));
      if (missing(cell)) continue;
      if (categorical[k]) {
        info.categories[table.header[cols[k]]][name] = cell;
        continue;
      }
      auto v = parse_double(cell);
      if (!v || !std::isfinite(*v)) {
        throw InputError({file, row.line, table.header[cols[k]]},
                         "not a finite number: '" + cell + "'", "leave the cell empty if unknown");
      }
      info.values[table.header[cols[k]]][name] = *v;
    }
  }
  return info;
}

std::string run_category_text(double confidence) {
  return "runs grouped by the value of a non-numeric column (N = runs with that value): the "
         "mean of their scores with a " +
         std::to_string(static_cast<int>(confidence * 100 + 0.5)) +
         "% t interval over runs (mean +- t(n-1 df) x sd / sqrt(n); none for a single run)";
}

std::string run_correlation_text() {
  return "Pearson r and Spearman rho across runs between the column and the run's text, image "
         "or group score (N = runs with a value); p two-sided (t with N-2 df), as the paper's "
         "Table 7";
}

RunCorrelations correlate_runs(const CompareResult& result, const RunInfo& info,
                               const std::vector<std::string>& exclude) {
  for (const auto& name : exclude) {
    if (std::find(result.names.begin(), result.names.end(), name) == result.names.end()) {
      throw UsageError("--exclude-from-correlation " + name + ": no run of that name",
                       "runs are named by NAME=FILE or the file's stem");
    }
  }
  std::map<std::string, const GroupStats*> stats;
  for (const auto& g : result.leaderboard)
    stats[g.name] = &g;
  RunCorrelations out;
  out.file = info.file;
  out.sha256 = info.sha256;
  std::vector<std::vector<std::string>> exclusions = {{}};
  if (!exclude.empty()) exclusions.push_back(exclude);
  for (const auto& excluded : exclusions) {
    RunCorrelationSet set;
    set.excluded = excluded;
    for (const auto& column : info.columns) {
      const auto& values = info.values.at(column);
      std::vector<std::string> runs;
      std::vector<double> x;
      for (const auto& name : result.names) {
        if (std::find(excluded.begin(), excluded.end(), name) != excluded.end()) continue;
        auto it = values.find(name);
        if (it == values.end()) continue;
        runs.push_back(name);
        x.push_back(it->second);
      }
      if (runs.size() < 3) {
        set.messages.push_back("'" + column + "': " + std::to_string(runs.size()) +
                               " run(s) with a value; a correlation across runs needs at least 3");
        continue;
      }
      for (std::size_t m : {kText, kImage, kGroup}) {
        std::vector<double> y;
        for (const auto& name : runs)
          y.push_back(stats.at(name)->metrics[m].value);
        set.rows.push_back({column, m, runs, pearson(x, y), spearman(x, y)});
      }
    }
    for (const auto& column : info.categorical_columns) {
      std::map<std::string, std::vector<std::string>> by_value;
      for (const auto& name : result.names) {
        if (std::find(excluded.begin(), excluded.end(), name) != excluded.end()) continue;
        const auto& values = info.categories.at(column);
        if (auto it = values.find(name); it != values.end()) by_value[it->second].push_back(name);
      }
      RunCategoryTable table{column, {}};
      for (const auto& [value, runs] : by_value) {
        RunCategoryGroup g{value, runs, {}, {}};
        const double n = static_cast<double>(runs.size());
        for (std::size_t m : {kText, kImage, kGroup}) {
          double sum = 0;
          for (const auto& r : runs)
            sum += stats.at(r)->metrics[m].value;
          g.mean[m] = sum / n;
          if (runs.size() < 2) continue;
          double ss = 0;
          for (const auto& r : runs) {
            const double d = stats.at(r)->metrics[m].value - g.mean[m];
            ss += d * d;
          }
          const double half = student_t_quantile((1.0 + result.options.confidence) / 2.0, n - 1) *
                              std::sqrt(ss / (n - 1)) / std::sqrt(n);
          g.interval[m] = {g.mean[m] - half, g.mean[m] + half};
        }
        table.groups.push_back(std::move(g));
      }
      set.categories.push_back(std::move(table));
    }
    out.sets.push_back(std::move(set));
  }
  for (const auto& column : info.columns) {
    auto& pts = out.points[column];
    for (const auto& name : result.names) {
      const auto& values = info.values.at(column);
      if (auto it = values.find(name); it != values.end()) pts.emplace_back(name, it->second);
    }
  }
  return out;
}

}  // namespace winokit
