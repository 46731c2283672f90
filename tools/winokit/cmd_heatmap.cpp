// winokit heatmap: word-patch similarity maps for chosen examples, as PNGs in an HTML report.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "vilt_cli.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/heatmap.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct HeatmapFlags {
  std::string data, html, out_dir, images;
  std::vector<std::string> examples;
  ModelFlags model;
};

int run(const HeatmapFlags& f) {
  WinogroundDataset ds = load_dataset(f.data);
  ds.images = f.images;
  std::vector<std::size_t> chosen;
  for (const auto& id : f.examples) {
    auto i = ds.find(id);
    if (!i) throw UsageError("--examples: unknown example id '" + id + "'");
    chosen.push_back(*i);
  }
  if (is_vilt_model(f.model)) return run_vilt_heatmap(f.model, ds, chosen, f.html, f.out_dir);
  ClipRuntime rt = f.model.load();
  const ClipConfig& c = rt.model->config();
  const PreprocessConfig pp = rt.preprocess();
  ImageStore store = ImageStore::open(ds.root, ds.images);
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Word-patch "
          "maps</title>"
          "<style>body{font-family:system-ui,sans-serif;margin:2rem}figure{display:inline-block;"
          "margin:.3rem;"
          "text-align:center}img{width:160px;height:160px;image-rendering:pixelated}</style></"
          "head><body>"
       << "<h1>Word-patch similarity: " << html_escape(model_name(f.model.model))
       << "</h1><p>Each map: cosine "
          "similarity between a caption token's final state and each image patch's final state "
          "(both through "
          "the final LayerNorm and projection), scaled from its minimum (no colour) to its maximum "
          "(red).</p>";
  OutputSet out;
  std::size_t written = 0;
  for (std::size_t e : chosen) {
    const WinogroundExample& ex = ds.examples[e];
    html << "<h2>Example " << html_escape(ex.id) << "</h2>";
    for (int k = 0; k < 2; ++k) {
      WordPatchMaps maps = word_patch_maps(rt, store.read(ex.images[static_cast<std::size_t>(k)]),
                                           {ex.captions[0], ex.captions[1]});
      for (int q = 0; q < 2; ++q) {
        html << "<h3>image " << k << " with caption " << q << ": "
             << html_escape(ex.captions[static_cast<std::size_t>(q)]) << "</h3>";
        for (std::size_t t = 0; t < maps.tokens[static_cast<std::size_t>(q)].size(); ++t) {
          const std::string png =
              render_heatmap_png(maps.pixels, pp, maps.similarity[static_cast<std::size_t>(q)][t],
                                 maps.grid, c.image_size);
          if (!f.out_dir.empty()) {
            out.add(std::filesystem::path(f.out_dir) /
                        ("ex" + ex.id + "_i" + std::to_string(k) + "_c" + std::to_string(q) + "_t" +
                         std::to_string(t) + ".png"),
                    png);
          }
          html << "<figure><img alt=\"" << html_escape(maps.tokens[static_cast<std::size_t>(q)][t])
               << "\" src=\"data:image/png;base64," << base64(png) << "\"><figcaption>"
               << html_escape(maps.tokens[static_cast<std::size_t>(q)][t])
               << "</figcaption></figure>";
          ++written;
        }
      }
    }
  }
  html << "<h2>Provenance</h2><pre>" << html_escape(rt.describe().dump(2))
       << "</pre></body></html>\n";
  if (!f.html.empty()) out.add(f.html, html.str());
  commit(out);
  std::cout << "rendered " << written << " word-patch maps for " << chosen.size() << " example(s)"
            << (f.html.empty() ? "" : " into " + f.html) << "\n";
  return 0;
}

}  // namespace

void add_heatmap(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<HeatmapFlags>();
  CLI::App* cmd =
      app.add_subcommand("heatmap", "Word-patch similarity heat maps for chosen examples");
  cmd->add_option("--data", f->data, "Dataset folder")->required();
  cmd->add_option("--images", f->images,
                  "Image folder or .zip, when not images/ (or images.zip) beside examples.jsonl");
  cmd->add_option("--examples", f->examples, "Example ids")->required()->delimiter(',');
  cmd->add_option("--html", f->html, "Self-contained HTML report with the maps");
  cmd->add_option("--out-dir", f->out_dir, "Also write each map as a PNG file here");
  f->model.add_to(*cmd, /*required=*/true);
  cmd->callback([f, &exit_code] {
    exit_code = guarded([&] {
      if (f->html.empty() && f->out_dir.empty())
        throw UsageError("give --html FILE and/or --out-dir DIR");
      return run(*f);
    });
  });
}

}  // namespace winokit::cli
