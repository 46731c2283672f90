#include "winokit/eval/evaluation.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"

namespace winokit {

Outcome judge(const WinogroundScores& s) {
  Outcome o;
  const double c0i0 = s.at(0, 0), c0i1 = s.at(0, 1), c1i0 = s.at(1, 0), c1i1 = s.at(1, 1);
  o.text = c0i0 > c1i0 && c1i1 > c0i1;
  o.image = c0i0 > c0i1 && c1i1 > c1i0;
  o.group = o.text && o.image;
  o.text_ties = static_cast<std::uint8_t>((c0i0 == c1i0 ? 1 : 0) + (c1i1 == c0i1 ? 1 : 0));
  o.image_ties = static_cast<std::uint8_t>((c0i0 == c0i1 ? 1 : 0) + (c1i1 == c1i0 ? 1 : 0));
  return o;
}

std::string fold_method_text(const EvalOptions& o) {
  const std::string level = std::to_string(static_cast<int>(o.confidence * 100 + 0.5)) + "%";
  const std::string t = "mean of the group scores +- Student's t (" + std::to_string(o.folds - 1) +
                        " df) x standard error, " + level;
  if (o.fold_split == FoldSplit::IdOrder) {
    return "t over folds in id order (not the paper's split): examples split in id order into " +
           std::to_string(o.folds) + " consecutive groups, " + t;
  }
  return "the paper's interval (Winoground Appendix A): examples in the order of Python's "
         "random.seed(" +
         std::to_string(o.fold_seed) + "); random.shuffle(list(range(N))), split into " +
         std::to_string(o.folds) + " consecutive groups, " + t + ", lower bound clipped at 0";
}

std::string fold_column_label(const EvalOptions& o) {
  return "t over " + std::to_string(o.folds) + " folds" +
         (o.fold_split == FoldSplit::IdOrder ? " (id order)" : " (paper)");
}

std::string bootstrap_method_text(const EvalOptions& o) {
  return "seeded bootstrap over examples (" + std::to_string(o.bootstrap_resamples) +
         " resamples, seed " + std::to_string(o.seed) + ", xoshiro256**), " +
         std::to_string(static_cast<int>(o.confidence * 100 + 0.5)) +
         "% percentile and BCa (bias-corrected and accelerated, jackknife acceleration)";
}

std::string chance_test_text(const EvalOptions& o) {
  char alpha[32];
  std::snprintf(alpha, sizeof alpha, "%g", o.alpha);
  return std::string(
             "two definitions of above chance: \"> chance (paper)\", the score is "
             "strictly above chance (25% text, 25% image, 16.67% group) as the papers "
             "bold it; \"significant\", an exact one-sided binomial test against chance "
             "with p < ") +
         alpha;
}

std::string pair_correlation_text() {
  return "Pearson r and Spearman rho between each image-caption score s(c, i) and the caption's "
         "covariate, over all image-caption pairs: each of an example's two captions with each "
         "of its two images (4 per example, N = 4 x examples with a value; 1,600 on the real "
         "Winoground set, as the paper's Table 6, left); p two-sided (t with N-2 df)";
}

std::string correctness_correlation_text() {
  return "Pearson r and Spearman rho between the per-example covariate (per-caption values "
         "averaged over the two captions) and 0/1 correctness, over examples (N = examples with "
         "a value); p two-sided (t with N-2 df)";
}

GroupStats group_stats(const std::string& name, const std::vector<std::size_t>& members,
                       const std::vector<Outcome>& outcomes, const EvalOptions& options,
                       const std::string& stream) {
  GroupStats g;
  g.name = name;
  g.n = members.size();
  std::vector<std::uint8_t> bits;
  bits.reserve(members.size());
  for (std::size_t i : members) {
    const Outcome& o = outcomes[i];
    bits.push_back(o.bits());
    g.metrics[kText].correct += o.text;
    g.metrics[kImage].correct += o.image;
    g.metrics[kGroup].correct += o.group;
    g.ties.text += o.text_ties;
    g.ties.image += o.image_ties;
    g.ties.examples_with_ties += (o.text_ties + o.image_ties) > 0;
  }
  g.ties.comparisons = 4 * g.n;
  if (g.n == 0) return g;
  auto boot = bootstrap_proportions(bits, kMetricCount, options.bootstrap_resamples,
                                    options.confidence, derive_seed(options.seed, stream));
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    MetricStats& s = g.metrics[m];
    s.value = static_cast<double>(s.correct) / static_cast<double>(g.n);
    std::vector<double> values;
    values.reserve(bits.size());
    for (auto b : bits)
      values.push_back((b >> m) & 1u);
    s.fold_t =
        options.fold_split == FoldSplit::IdOrder
            ? fold_t_interval(values, options.folds, options.confidence)
            : paper_fold_t_interval(values, options.folds, options.confidence, options.fold_seed);
    s.bootstrap_percentile = boot.percentile[m];
    s.bootstrap_bca = boot.bca[m];
    s.p_vs_chance = binomial_upper_tail(s.correct, g.n, kChance[m]);
    s.above_chance = s.p_vs_chance < options.alpha;
    // Strictly above, compared in counts: correct / n > chance (1/4 or 1/6).
    s.above_chance_paper = static_cast<double>(s.correct) > kChance[m] * static_cast<double>(g.n);
  }
  return g;
}

namespace {

// Groups in a fixed order first (those listed in `preferred`), then the rest by name.
Breakdown make_breakdown(std::string key, std::string title, std::string note,
                         const std::map<std::string, std::vector<std::size_t>>& members,
                         const std::vector<std::string>& preferred,
                         const std::vector<Outcome>& outcomes, const EvalOptions& options) {
  Breakdown b{std::move(key), std::move(title), std::move(note), {}};
  std::vector<std::string> order;
  for (const auto& p : preferred) {
    if (members.count(p)) order.push_back(p);
  }
  for (const auto& [name, idx] : members) {
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  for (const auto& name : order) {
    b.groups.push_back(group_stats(name, members.at(name), outcomes, options, b.key + "/" + name));
  }
  return b;
}

}  // namespace

EvalResult evaluate(const WinogroundDataset& dataset, const std::vector<WinogroundScores>& scores,
                    const EvalInputs& inputs, const EvalOptions& options) {
  if (scores.size() != dataset.examples.size()) {
    throw UsageError("evaluate: " + std::to_string(scores.size()) + " scored examples for a " +
                     std::to_string(dataset.examples.size()) + "-example dataset");
  }
  if (options.confidence <= 0 || options.confidence >= 1) {
    throw UsageError("the confidence level must be between 0 and 1");
  }
  EvalResult r;
  r.options = options;
  r.outcomes.reserve(scores.size());
  for (const auto& s : scores)
    r.outcomes.push_back(judge(s));

  const std::vector<std::size_t> order = dataset.id_order();
  r.overall = group_stats("Overall", order, r.outcomes, options, "overall");

  std::map<std::string, std::vector<std::size_t>> collapsed, preds, secondary, fine;
  for (std::size_t i : order) {
    const WinogroundExample& ex = dataset.examples[i];
    if (!ex.collapsed_tag.empty()) collapsed[ex.collapsed_tag].push_back(i);
    if (ex.num_main_preds) {
      int n = *ex.num_main_preds;
      preds[std::to_string(n) + (n == 1 ? " Main Pred" : " Main Preds")].push_back(i);
    }
    if (options.secondary == SecondaryGrouping::Membership) {
      std::set<std::string> unique(ex.secondary_tags.begin(), ex.secondary_tags.end());
      for (const auto& t : unique)
        secondary[t].push_back(i);
    } else if (ex.secondary_tags.size() == 1) {
      secondary[ex.secondary_tags[0]].push_back(i);
    }
    if (!ex.tag.empty()) fine[ex.tag].push_back(i);
  }
  if (!collapsed.empty()) {
    r.breakdowns.push_back(make_breakdown("collapsed_tag", "Linguistic tag (collapsed)",
                                          "examples grouped by collapsed_tag (the paper's Table 4)",
                                          collapsed, {"Object", "Relation", "Both"}, r.outcomes,
                                          options));
  }
  if (!preds.empty()) {
    r.breakdowns.push_back(make_breakdown("num_main_preds", "Number of main predicates",
                                          "examples grouped by num_main_preds (Table 4)", preds,
                                          {"1 Main Pred", "2 Main Preds"}, r.outcomes, options));
  }
  if (!secondary.empty()) {
    std::string note =
        options.secondary == SecondaryGrouping::Membership
            ? "membership: an example counts in every group named in its comma-separated "
              "secondary_tag list"
            : "exact: only examples whose secondary_tag is exactly one tag (the paper's Table "
              "5); examples with two or more tags are left out";
    r.breakdowns.push_back(make_breakdown("secondary_tag", "Visual (secondary) tag", note,
                                          secondary, {"Symbolic", "Pragmatics", "Series"},
                                          r.outcomes, options));
  }
  if (!fine.empty()) {
    r.breakdowns.push_back(make_breakdown("tag", "Fine-grained linguistic tag",
                                          "examples grouped by tag; a tag containing commas is "
                                          "one label",
                                          fine, {}, r.outcomes, options));
  }
  for (const auto& set : inputs.tag_sets) {
    std::map<std::string, std::vector<std::size_t>> groups;
    std::size_t covered = 0;
    for (std::size_t i : order) {
      const auto& tags = set.tags[i];
      if (!tags) continue;
      ++covered;
      if (tags->empty()) {
        groups[kNoTagGroup].push_back(i);
        continue;
      }
      std::set<std::string> unique(tags->begin(), tags->end());
      for (const auto& t : unique)
        groups[t].push_back(i);
    }
    r.breakdowns.push_back(make_breakdown(
        "tags:" + set.name, "Tag set: " + set.name,
        "from " + set.file + " (" + std::to_string(covered) + " of " +
            std::to_string(dataset.examples.size()) +
            " examples listed; an example counts in each of its tags; an empty list is " +
            kNoTagGroup + ")",
        groups, {kNoTagGroup}, r.outcomes, options));
  }

  std::vector<Covariate> covariates = {caption_length_covariate(dataset)};
  covariates.insert(covariates.end(), inputs.covariates.begin(), inputs.covariates.end());
  for (const auto& cov : covariates) {
    if (cov.per_caption()) {
      std::vector<double> x, y;
      for (std::size_t i : order) {
        for (int c = 0; c < 2; ++c) {
          const auto& v = cov.caption_values[i][static_cast<std::size_t>(c)];
          if (!v) continue;
          for (int img = 0; img < 2; ++img) {
            x.push_back(*v);
            y.push_back(scores[i].at(c, img));
          }
        }
      }
      r.pair_correlations.push_back({cov.name, cov.source, pearson(x, y), spearman(x, y)});
    }
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      std::vector<double> x, y;
      for (std::size_t i : order) {
        if (!cov.values[i]) continue;
        x.push_back(*cov.values[i]);
        y.push_back((r.outcomes[i].bits() >> m) & 1u);
      }
      r.correlations.push_back({cov.name, cov.source, m, pearson(x, y), spearman(x, y)});
    }
  }
  return r;
}

}  // namespace winokit
