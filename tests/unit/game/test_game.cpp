// The game's facade: what /api/status shows, and the images' opaque ids (winokit/game/game.hpp).
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

// Issue 24: the client sees opaque image ids, never names; the key is the database's, so a
// restart (or a second server process on it) gives the same ids, another game others.
TEST(Game, ImageIdsAreOpaqueAndStableForADatabase) {
  test::TempDir dir;
  GameConfig config = fast_config();
  config.seed = 0;  // a random key, kept in the database
  std::string first;
  {
    Game a(test_database(dir), make_pool(dir, 20), std::make_unique<FirstKRival>(), config);
    first = a.image_ids().id_of("img0");
    EXPECT_EQ(first.size(), 24u);
    EXPECT_EQ(first.find("img"), std::string::npos);
    EXPECT_NE(a.image_ids().id_of("img1"), first);
    ASSERT_NE(a.image_ids().name_of(first), nullptr);
    EXPECT_EQ(*a.image_ids().name_of(first), "img0");
    EXPECT_EQ(a.image_ids().name_of("img0"), nullptr);  // a name is not an id
  }
  Game b(second_connection(dir), make_pool(dir, 20), std::make_unique<FirstKRival>(), config);
  EXPECT_EQ(b.image_ids().id_of("img0"), first);
  test::TempDir other;
  Game c(test_database(other), make_pool(other, 20), std::make_unique<FirstKRival>(), config);
  EXPECT_NE(c.image_ids().id_of("img0"), first);
}

}  // namespace
}  // namespace winokit
