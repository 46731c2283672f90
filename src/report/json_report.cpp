#include "winokit/report/json_report.hpp"

namespace winokit {

using nlohmann::json;

namespace {

// Figures are percentages, like the tables; NaN becomes null.
json pct(double proportion) {
  if (!std::isfinite(proportion)) return nullptr;
  return proportion * 100.0;
}

json interval_json(const Interval& i, const std::string& method) {
  return {{"low", pct(i.low)}, {"high", pct(i.high)}, {"method", method}};
}

json metric_json(const MetricStats& s, std::size_t m, std::size_t n, const EvalOptions& o) {
  json fold = nullptr;
  if (s.fold_t) {
    json folds = json::array();
    for (double f : s.fold_t->fold_means)
      folds.push_back(pct(f));
    fold = interval_json(s.fold_t->ci, fold_method_text(o));
    fold["mean"] = pct(s.fold_t->mean);
    fold["fold_percents"] = folds;
  }
  return {{"percent", pct(s.value)},
          {"correct", s.correct},
          {"n", n},
          {"chance_percent", kChance[m] * 100.0},
          {"intervals",
           {{"fold_t", fold},
            {"bootstrap_percentile", interval_json(s.bootstrap_percentile, "bootstrap percentile")},
            {"bootstrap_bca", interval_json(s.bootstrap_bca, "bootstrap BCa")}}},
          {"p_vs_chance", s.p_vs_chance},
          {"above_chance_paper", s.above_chance_paper},
          {"significant_vs_chance", s.above_chance}};
}

json group_json(const GroupStats& g, const EvalOptions& o) {
  json metrics;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    metrics[kMetricNames[m]] = metric_json(g.metrics[m], m, g.n, o);
  }
  return {{"name", g.name},
          {"n", g.n},
          {"metrics", metrics},
          {"ties",
           {{"text", g.ties.text},
            {"image", g.ties.image},
            {"comparisons", g.ties.comparisons},
            {"examples_with_ties", g.ties.examples_with_ties}}}};
}

json correlation_json(const Correlation& c) {
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"n", c.n}, {"r", num(c.r)}, {"p", num(c.p)}};
}

json methods_json(const EvalOptions& o) {
  return {{"fold_t", fold_method_text(o)},
          {"bootstrap", bootstrap_method_text(o)},
          {"chance_test", chance_test_text(o)},
          {"ties", "strict >: a tie counts as wrong"}};
}

}  // namespace

json json_report(const EvalResult& r, const ReportContext& ctx) {
  json breakdowns = json::array();
  for (const auto& b : r.breakdowns) {
    json groups = json::array();
    for (const auto& g : b.groups)
      groups.push_back(group_json(g, r.options));
    breakdowns.push_back(
        {{"key", b.key}, {"title", b.title}, {"grouping", b.note}, {"groups", groups}});
  }
  json correlations = json::array();
  for (const auto& c : r.correlations) {
    correlations.push_back({{"covariate", c.covariate},
                            {"source", c.source},
                            {"metric", kMetricNames[c.metric]},
                            {"pearson", correlation_json(c.pearson)},
                            {"spearman", correlation_json(c.spearman)}});
  }
  json pair_correlations = json::array();
  for (const auto& c : r.pair_correlations) {
    pair_correlations.push_back({{"covariate", c.covariate},
                                 {"source", c.source},
                                 {"pairs", "each caption with each image, 4 per example"},
                                 {"pearson", correlation_json(c.pearson)},
                                 {"spearman", correlation_json(c.spearman)}});
  }
  json methods = methods_json(r.options);
  methods["pair_correlations"] = pair_correlation_text();
  methods["correlations"] = correctness_correlation_text();
  return {{"model", ctx.model},          {"provenance", ctx.provenance},
          {"methods", methods},          {"overall", group_json(r.overall, r.options)},
          {"breakdowns", breakdowns},    {"pair_correlations", pair_correlations},
          {"correlations", correlations}};
}

json json_compare(const CompareResult& c, const json& provenance) {
  json board = json::array();
  for (std::size_t i = 0; i < c.leaderboard.size(); ++i) {
    json g = group_json(c.leaderboard[i], c.options);
    g["rank"] = i + 1;
    board.push_back(g);
  }
  json pairs = json::array();
  for (const auto& p : c.pairwise) {
    pairs.push_back({{"a", p.a},
                     {"b", p.b},
                     {"metric", kMetricNames[p.metric]},
                     {"difference_percent", pct(p.difference)},
                     {"a_only", p.a_only},
                     {"b_only", p.b_only},
                     {"mcnemar_exact_p", p.p_mcnemar},
                     {"paired_bootstrap", interval_json(p.paired_bootstrap,
                                                        "paired bootstrap "
                                                        "percentile")}});
  }
  json runs = json::array();
  for (std::size_t i = 0; i < c.names.size(); ++i) {
    runs.push_back({{"name", c.names[i]}, {"source", c.sources[i]}});
  }
  json out = {{"provenance", provenance},
              {"methods", methods_json(c.options)},
              {"runs", runs},
              {"leaderboard", board},
              {"pairwise", pairs}};
  if (c.run_correlations) {
    json sets = json::array();
    for (const auto& set : c.run_correlations->sets) {
      json rows = json::array();
      for (const auto& row : set.rows) {
        rows.push_back({{"column", row.column},
                        {"metric", kMetricNames[row.metric]},
                        {"runs", row.runs},
                        {"pearson", correlation_json(row.pearson)},
                        {"spearman", correlation_json(row.spearman)}});
      }
      json categories = json::array();
      for (const auto& t : set.categories) {
        json groups = json::array();
        for (const auto& g : t.groups) {
          json metrics = json::object();
          for (std::size_t m : {kText, kImage, kGroup}) {
            metrics[kMetricNames[m]] = {
                {"mean_percent", g.mean[m] * 100},
                {"interval", g.interval[m].valid() ? json{{"low", g.interval[m].low * 100},
                                                          {"high", g.interval[m].high * 100}}
                                                   : json(nullptr)}};
          }
          groups.push_back({{"value", g.value}, {"runs", g.runs}, {"metrics", metrics}});
        }
        categories.push_back({{"column", t.column}, {"groups", groups}});
      }
      sets.push_back({{"excluded", set.excluded},
                      {"rows", rows},
                      {"messages", set.messages},
                      {"categories", categories}});
    }
    json points = json::object();
    for (const auto& [column, pts] : c.run_correlations->points) {
      json list = json::array();
      for (const auto& [run, value] : pts)
        list.push_back({{"run", run}, {"value", value}});
      points[column] = list;
    }
    out["run_correlations"] = {{"file", c.run_correlations->file},
                               {"sha256", c.run_correlations->sha256},
                               {"definition", run_correlation_text()},
                               {"category_definition", run_category_text(c.options.confidence)},
                               {"sets", sets},
                               {"points", points}};
  }
  return out;
}

}  // namespace winokit

namespace winokit {

std::string per_example_jsonl(const WinogroundDataset& dataset,
                              const std::vector<WinogroundScores>& scores, const EvalResult& result,
                              const std::vector<TagSet>& tag_sets) {
  std::string out;
  for (std::size_t i = 0; i < dataset.examples.size(); ++i) {
    const WinogroundExample& ex = dataset.examples[i];
    const Outcome& o = result.outcomes[i];
    nlohmann::json s;
    for (std::size_t p = 0; p < 4; ++p)
      s[pair_label(p)] = scores[i].s[p];
    nlohmann::json line = {
        {"id", dataset.numeric_ids ? nlohmann::json(std::stoll(ex.id)) : nlohmann::json(ex.id)},
        {"scores", s},
        {"text", o.text},
        {"image", o.image},
        {"group", o.group},
        {"text_ties", o.text_ties},
        {"image_ties", o.image_ties},
        {"tag", ex.tag},
        {"secondary_tags", ex.secondary_tags},
        {"collapsed_tag", ex.collapsed_tag},
        {"num_main_preds",
         ex.num_main_preds ? nlohmann::json(*ex.num_main_preds) : nlohmann::json(nullptr)}};
    if (!tag_sets.empty()) {
      nlohmann::json sets = nlohmann::json::object();
      for (const auto& t : tag_sets) {
        sets[t.name] = t.tags[i] ? nlohmann::json(*t.tags[i]) : nlohmann::json(nullptr);
      }
      line["tag_sets"] = sets;
    }
    out += line.dump() + "\n";
  }
  return out;
}

}  // namespace winokit
