#include "common.hpp"

#include <iostream>

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
