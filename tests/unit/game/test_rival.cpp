// The CLIP rival against the benchmark's zero-shot solver (winokit/game/rival.hpp).
#include <gtest/gtest.h>

#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/io/table.hpp"

#include "game_test_util.hpp"

namespace winokit {
namespace {

using nlohmann::json;

// The rival's fast single-prompt path picks what the benchmark's zero-shot solver picks.
TEST(GameRival, AgreesWithTheZeroShotSolver) {
  const std::filesystem::path shared = WINOKIT_SHARED_DIR;
  const auto model = shared / "golden/clip/models/tiny-quickgelu-hf";
  if (!std::filesystem::exists(model / "config.json")) GTEST_SKIP() << "no golden checkpoint";
  test::TempDir dir;
  ModelOptions o;
  o.use_cache = false;
  const std::unique_ptr<VlModel> m = open_model(model, o);
  const auto pool = scan_image_pool(shared / "golden/clip/images", 12);
  auto rival = make_model_rival(open_model(model, o), pool, false);
  std::vector<std::string> names;
  for (const auto& [name, path] : pool)
    names.push_back(name);
  std::string csv = "candidates,cue,associations,ID\n";
  const std::vector<std::string> cues = {"astronaut", "coffee", "rocket", "cat", "noise", "apple"};
  for (std::size_t i = 0; i < cues.size(); ++i) {
    std::vector<std::string> cands(names.begin() + static_cast<std::ptrdiff_t>(i),
                                   names.begin() + static_cast<std::ptrdiff_t>(i + 6));
    csv += csv_escape(json(cands).dump()) + "," + cues[i] + "," +
           csv_escape(json({cands[0], cands[1], cands[2]}).dump()) + "," + std::to_string(i) + "\n";
  }
  const AssociationDataset ds = parse_winogavil(csv, "rival.csv");
  const SolveResult solved = solve_with_images(*m, ds, pool, {});
  for (std::size_t i = 0; i < ds.instances.size(); ++i) {
    const auto& inst = ds.instances[i];
    EXPECT_EQ(rival->pick(inst.cue, inst.candidates, inst.k()), solved.predictions[i]) << inst.cue;
  }
}

}  // namespace
}  // namespace winokit
