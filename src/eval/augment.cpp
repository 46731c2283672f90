// The augmentation-aware score of "Why is Winoground Hard?" over caption variants.
#include <string>

#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/eval/evaluation.hpp"

namespace winokit {

std::vector<AugmentSetting> augmented_scores(const WinogroundDataset& ds,
                                             const std::vector<WinogroundScores>& original,
                                             const std::vector<CaptionVariant>& variants,
                                             const std::vector<std::array<double, 2>>& vs,
                                             const std::vector<double>& lambdas,
                                             bool include_original) {
  // Per (example, caption, image): the variants' scores.
  std::vector<std::array<std::array<std::vector<double>, 2>, 2>> per(ds.examples.size());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (int k = 0; k < 2; ++k) {
      per[variants[v].example][static_cast<std::size_t>(variants[v].caption)]
         [static_cast<std::size_t>(k)]
             .push_back(vs[v][static_cast<std::size_t>(k)]);
    }
  }
  std::vector<AugmentSetting> out;
  for (const char* agg : {"mean", "max"}) {
    for (double lambda : lambdas) {
      AugmentSetting s;
      s.agg = agg;
      s.lambda = lambda;
      std::array<std::size_t, 3> correct{};
      for (std::size_t e = 0; e < ds.examples.size(); ++e) {
        WinogroundScores aug = original[e];
        for (int c = 0; c < 2; ++c) {
          for (int k = 0; k < 2; ++k) {
            const auto& v = per[e][static_cast<std::size_t>(c)][static_cast<std::size_t>(k)];
            if (v.empty()) continue;  // no variants: S_aug = S
            // The aggregate's members: the original caption's score first (the identity
            // variant, as the official code's scores[0]) unless excluded, then the variants'.
            std::vector<double> members;
            if (include_original) members.push_back(original[e].at(c, k));
            members.insert(members.end(), v.begin(), v.end());
            const bool mean = std::string(agg) == "mean";
            double a = mean ? 0.0 : members.front();
            for (double x : members)
              a = mean ? a + x : std::max(a, x);
            if (mean) a /= static_cast<double>(members.size());
            aug.s[pair_index(c, k)] = (1 - lambda) * original[e].at(c, k) + lambda * a;
          }
        }
        const Outcome o = judge(aug);
        correct[0] += o.text;
        correct[1] += o.image;
        correct[2] += o.group;
      }
      for (int m = 0; m < 3; ++m)
        s.scores[static_cast<std::size_t>(m)] =
            static_cast<double>(correct[static_cast<std::size_t>(m)]) /
            static_cast<double>(ds.examples.size());
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace winokit
