#include <algorithm>
#include <map>
#include <set>

#include "model/kernels/parallel.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"

namespace winokit {

Interval bootstrap_mean_interval(const std::vector<double>& values, std::size_t resamples,
                                 double confidence, std::uint64_t seed) {
  if (values.empty() || resamples < 2) return {};
  const auto n = static_cast<std::uint32_t>(values.size());
  std::vector<double> means(resamples);
  // One stream per resample: the result does not depend on the number of threads.
  detail::parallel_for(resamples, [&](std::size_t b) {
    Rng rng(derive_seed(seed, "resample/" + std::to_string(b)));
    double s = 0;
    for (std::uint32_t i = 0; i < n; ++i)
      s += values[rng.below(n)];
    means[b] = s / n;
  });
  std::sort(means.begin(), means.end());
  const double alpha = 1 - confidence;
  return {quantile_linear(means, alpha / 2), quantile_linear(means, 1 - alpha / 2)};
}

std::optional<int> paper_random_chance_percent(int candidates) {
  // WinoGAViL paper, zero-shot results table, "Random chance" row.
  switch (candidates) {
    case 5:
      return 38;
    case 6:
      return 34;
    case 10:
      return 24;
    case 12:
      return 17;
    default:
      return std::nullopt;
  }
}

std::vector<PublishedReference> winogavil_published_references() {
  const std::string paper = "Bitton et al., WinoGAViL, NeurIPS 2022 Datasets and Benchmarks";
  return {
      {"Human performance (new annotators on a sample of the test instances)",
       "90 / 92 / 95 % Jaccard", paper + ", human-performance figures"},
      {"Random chance quoted by the paper", "38 / 34 / 24 / 17 % for 5 / 6 / 10 / 12 candidates",
       paper + ", zero-shot results table"},
  };
}

namespace {

AssociationGroup make_group(const std::string& name, const std::vector<std::size_t>& members,
                            const AssociationDataset& ds, const std::vector<double>& scores,
                            const AssociationOptions& o, const std::string& stream) {
  AssociationGroup g;
  g.name = name;
  g.n = members.size();
  std::vector<double> values;
  double chance = 0, human = 0;
  for (std::size_t i : members) {
    values.push_back(scores[i]);
    const auto& inst = ds.instances[i];
    chance += expected_random_jaccard(inst.n(), inst.k());
    if (inst.solvers_jaccard_mean) {
      human += *inst.solvers_jaccard_mean;
      ++g.human_n;
    }
  }
  if (g.n == 0) return g;
  double sum = 0;
  for (double v : values)
    sum += v;
  g.mean = sum / static_cast<double>(g.n);
  g.chance = chance / static_cast<double>(g.n);
  if (g.human_n) g.human = human / static_cast<double>(g.human_n);
  g.interval = bootstrap_mean_interval(values, o.bootstrap_resamples, o.confidence,
                                       derive_seed(o.seed, stream));
  return g;
}

}  // namespace

AssociationResult evaluate_associations(const AssociationDataset& ds,
                                        const std::vector<std::vector<std::string>>& predictions,
                                        const AssociationOptions& o) {
  if (predictions.size() != ds.instances.size()) {
    throw UsageError("evaluate_associations: predictions do not cover the instances");
  }
  AssociationResult r;
  r.options = o;
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < ds.instances.size(); ++i) {
    r.per_instance.push_back(jaccard(predictions[i], ds.instances[i].associations));
    all.push_back(i);
  }
  r.overall = make_group("All", all, ds, r.per_instance, o, "overall");

  std::map<int, std::vector<std::size_t>> by_n, by_k;
  std::vector<std::size_t> small, large;
  for (std::size_t i : all) {
    const auto& inst = ds.instances[i];
    by_n[inst.n()].push_back(i);
    by_k[inst.k()].push_back(i);
    if (inst.n() == 5 || inst.n() == 6) small.push_back(i);
    if (inst.n() == 10 || inst.n() == 12) large.push_back(i);
  }
  AssociationBreakdown cands{"candidates",
                             "By number of candidates",
                             "instances grouped by their number of candidates; 5&6 and 10&12 as "
                             "in the paper's tables",
                             {}};
  for (const auto& [n, members] : by_n) {
    cands.groups.push_back(make_group(std::to_string(n), members, ds, r.per_instance, o,
                                      "candidates/" + std::to_string(n)));
  }
  if (!small.empty())
    cands.groups.push_back(make_group("5&6", small, ds, r.per_instance, o, "candidates/5&6"));
  if (!large.empty())
    cands.groups.push_back(make_group("10&12", large, ds, r.per_instance, o, "candidates/10&12"));
  r.breakdowns.push_back(std::move(cands));
  AssociationBreakdown ks{"k", "By number of associations (k)", "instances grouped by k", {}};
  for (const auto& [k, members] : by_k) {
    ks.groups.push_back(
        make_group(std::to_string(k), members, ds, r.per_instance, o, "k/" + std::to_string(k)));
  }
  r.breakdowns.push_back(std::move(ks));

  // Table 10: candidates x k, each cell with its N.
  std::map<std::pair<int, int>, std::vector<std::size_t>> by_nk;
  for (std::size_t i : all)
    by_nk[{ds.instances[i].n(), ds.instances[i].k()}].push_back(i);
  for (const auto& [nk, members] : by_nk) {
    AssociationCell c;
    c.candidates = nk.first;
    c.k = nk.second;
    c.n = members.size();
    double rival = 0;
    for (std::size_t i : members) {
      c.mean += r.per_instance[i];
      c.chance += expected_random_jaccard(nk.first, nk.second);
      // The game's rival: fool-the-AI = 100 - its Jaccard (percent), as the game stored it.
      if (const auto& fool = ds.instances[i].fool_the_ai) {
        rival += (100.0 - *fool) / 100.0;
        ++c.rival_n;
      }
    }
    c.mean /= static_cast<double>(c.n);
    c.chance /= static_cast<double>(c.n);
    if (c.rival_n > 0) c.rival = rival / static_cast<double>(c.rival_n);
    r.cross.push_back(c);
  }

  // Association types: an instance is in a type's group when one of its gold associations has
  // that type; recall is the share of the type's gold associations the predictions selected.
  std::map<std::string, std::vector<std::size_t>> by_type;
  std::map<std::string, std::pair<std::size_t, std::size_t>> hits;  // selected, total
  for (std::size_t i : all) {
    const auto& inst = ds.instances[i];
    std::set<std::string> types;
    std::set<std::string> picked(predictions[i].begin(), predictions[i].end());
    for (const auto& g : inst.associations) {
      auto it = inst.association_types.find(g);
      if (it == inst.association_types.end()) continue;
      for (const auto& t : it->second) {
        types.insert(t);
        hits[t].second += 1;
        hits[t].first += picked.count(g);
      }
    }
    for (const auto& t : types)
      by_type[t].push_back(i);
  }
  if (!by_type.empty()) {
    AssociationBreakdown types{"association_type",
                               "By association type",
                               "an instance counts for a type when one of its gold associations "
                               "has it; recall: share of that type's gold associations selected",
                               {}};
    for (const auto& [t, members] : by_type) {
      auto g = make_group(t, members, ds, r.per_instance, o, "type/" + t);
      g.recall = static_cast<double>(hits[t].first) / static_cast<double>(hits[t].second);
      types.groups.push_back(std::move(g));
    }
    r.breakdowns.push_back(std::move(types));
  }
  return r;
}

}  // namespace winokit
