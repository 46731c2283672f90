// The game's facade: what /api/status shows (winokit/game/game.hpp).
#include <gtest/gtest.h>

#include "game_test_util.hpp"

namespace winokit {
namespace {

using nlohmann::json;

TEST(Game, StatusNamesTheModelNotItsPath) {
  struct PathRival : Rival {
    std::vector<std::string> pick(const std::string&, const std::vector<std::string>& c,
                                  int k) override {
      return {c.begin(), c.begin() + k};
    }
    std::string describe() const override { return "/srv/secret/models/clip-vit-b32/"; }
    bool random_weights() const override { return false; }
  };
  test::TempDir dir;
  Game game(test_database(dir), make_pool(dir, 20), std::make_unique<PathRival>(), fast_config());
  EXPECT_EQ(game.status()["rival"], "clip-vit-b32");
  EXPECT_EQ(game.status().dump().find("/srv"), std::string::npos);
}

}  // namespace
}  // namespace winokit
