#include "winokit/report/variants_report.hpp"

#include <cstdio>
#include <set>
#include <sstream>

#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"

namespace winokit {

namespace {

std::string lambda_text(double lambda) {
  char lam[16];
  std::snprintf(lam, sizeof lam, "%.2f", lambda);
  return lam;
}

// The setting with the highest group score (the first of equals).
const AugmentSetting& best_setting(const std::vector<AugmentSetting>& settings) {
  const AugmentSetting* best = &settings.front();
  for (const auto& s : settings) {
    if (s.scores[2] > best->scores[2]) best = &s;
  }
  return *best;
}

}  // namespace

VariantsReport variants_report(const WinogroundDataset& dataset,
                               const std::vector<WinogroundScores>& original,
                               const std::vector<CaptionVariant>& variants,
                               const std::vector<std::array<double, 2>>& variant_scores,
                               const std::vector<double>& lambdas, bool include_original) {
  VariantsReport report;
  report.examples = dataset.examples.size();
  report.variants = variants.size();
  report.include_original = include_original;
  // Groups: each augmentation, each family of the official layout ("family:NAME"), and all.
  std::set<std::string> names, families;
  for (const auto& v : variants) {
    names.insert(v.augmentation);
    if (!v.family.empty()) families.insert(v.family);
  }
  std::vector<std::string> groups(names.begin(), names.end());
  if (families.size() > 1) {
    for (const auto& fam : families)
      groups.push_back("family:" + fam);
  }
  if (names.size() > 1) groups.push_back("all");
  for (const auto& g : groups) {
    std::vector<CaptionVariant> sub;
    std::vector<std::array<double, 2>> sub_scores;
    std::set<std::pair<std::size_t, int>> captions;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const bool in_family = g.rfind("family:", 0) == 0 && variants[v].family == g.substr(7);
      if (g != "all" && variants[v].augmentation != g && !in_family) continue;
      sub.push_back(variants[v]);
      sub_scores.push_back(variant_scores[v]);
      captions.insert({variants[v].example, variants[v].caption});
    }
    report.groups.push_back(
        {g, sub.size(), captions.size(),
         augmented_scores(dataset, original, sub, sub_scores, lambdas, include_original)});
  }
  return report;
}

std::string augmented_score_definition(bool include_original) {
  return std::string("S_aug(I,T) = (1 - lambda) S(I,T) + lambda * agg S(I,T_i) over ") +
         (include_original
              ? "the original caption T (the identity variant, as the paper's appendix D and the "
                "official code) and its variants T_i"
              : "the variants T_i of caption T only (--exclude-original)") +
         "; a caption without variants keeps S";
}

std::string variants_markdown(const VariantsReport& r) {
  std::ostringstream md;
  md << "## Caption variants: " << r.model << " (N = " << r.examples << ", " << r.variants
     << " variants)\n\n"
     << augmented_score_definition(r.include_original) << ". lambda = 0 is the original.\n";
  for (const auto& g : r.groups) {
    md << "\n### " << g.name << " (" << g.variants << " variants of " << g.captions
       << " captions)\n\n"
       << "| agg | lambda | Text | Image | Group |\n|---|---:|---:|---:|---:|\n";
    for (const auto& s : g.settings) {
      md << "| " << s.agg << " | " << lambda_text(s.lambda) << " | " << percent(s.scores[0])
         << " | " << percent(s.scores[1]) << " | " << percent(s.scores[2]) << " |\n";
    }
    const auto& orig = g.settings.front();  // mean, lambda = first (0 by default)
    const AugmentSetting& best = best_setting(g.settings);
    md << "\n| | Text | Image | Group |\n|---|---:|---:|---:|\n| Original | "
       << percent(orig.scores[0]) << " | " << percent(orig.scores[1]) << " | "
       << percent(orig.scores[2]) << " |\n| Augmented (best: " << best.agg << ", lambda "
       << lambda_text(best.lambda) << ") | " << percent(best.scores[0]) << " | "
       << percent(best.scores[1]) << " | " << percent(best.scores[2]) << " |\n";
  }
  return md.str();
}

nlohmann::json variants_json(const VariantsReport& r) {
  nlohmann::json j = {{"provenance", r.provenance},
                      {"definition", augmented_score_definition(r.include_original)},
                      {"include_original", r.include_original},
                      {"augmentations", nlohmann::json::array()}};
  for (const auto& g : r.groups) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& s : g.settings) {
      rows.push_back({{"agg", s.agg},
                      {"lambda", s.lambda},
                      {"text_percent", s.scores[0] * 100},
                      {"image_percent", s.scores[1] * 100},
                      {"group_percent", s.scores[2] * 100}});
    }
    const AugmentSetting& best = best_setting(g.settings);
    j["augmentations"].push_back(
        {{"name", g.name},
         {"variants", g.variants},
         {"captions", g.captions},
         {"settings", rows},
         {"best",
          {{"agg", best.agg}, {"lambda", best.lambda}, {"group_percent", best.scores[2] * 100}}}});
  }
  return j;
}

std::string variants_html(const VariantsReport& r) {
  return markdown_html("Caption variants", variants_markdown(r), r.provenance);
}

}  // namespace winokit
