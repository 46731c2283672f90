// winokit heatmap: word-patch similarity maps for chosen examples, as PNGs in an HTML report.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "vilt_cli.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/heatmap.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/heatmap_report.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct HeatmapFlags {
  std::string data, out_dir, images;
  ReportFlags report;  // --html
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
  if (is_vilt_model(f.model))
    return run_vilt_heatmap(f.model, ds, chosen, f.report.html, f.out_dir);
  ClipRuntime rt = f.model.load();
  const ClipConfig& c = rt.model->config();
  const PreprocessConfig pp = rt.preprocess();
  ImageStore store = ImageStore::open(ds.root, ds.images);
  HeatmapReport report{model_name(f.model.model), {}, {}};
  OutputSet out;
  std::size_t written = 0;
  for (std::size_t e : chosen) {
    const WinogroundExample& ex = ds.examples[e];
    HeatmapExample& shown = report.examples.emplace_back(HeatmapExample{ex.id, {}});
    for (int k = 0; k < 2; ++k) {
      WordPatchMaps maps = word_patch_maps(rt, store.read(ex.images[static_cast<std::size_t>(k)]),
                                           {ex.captions[0], ex.captions[1]});
      for (int q = 0; q < 2; ++q) {
        const auto qi = static_cast<std::size_t>(q);
        HeatmapPanel& panel =
            shown.panels.emplace_back(HeatmapPanel{k, q, ex.captions[qi], {}, {}});
        for (std::size_t t = 0; t < maps.tokens[qi].size(); ++t) {
          std::string png =
              render_heatmap_png(maps.pixels, pp, maps.similarity[qi][t], maps.grid, c.image_size);
          if (!f.out_dir.empty()) {
            out.add_in(f.out_dir,
                       heatmap_file_name(safe_file_name(ex.id), k, q, t, maps.tokens[qi][t]), png);
          }
          if (!f.report.html.empty()) panel.maps.emplace_back(maps.tokens[qi][t], std::move(png));
          ++written;
        }
      }
    }
  }
  report.model_description = rt.describe();
  f.report.add_outputs(out, {{ReportFormat::Html, [&] { return heatmap_html(report); }}});
  commit(out);
  std::cout << "rendered " << written << " word-patch maps for " << chosen.size() << " example(s)"
            << (f.report.html.empty() ? "" : " into " + f.report.html) << "\n";
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
  f->report.add_to(*cmd, ReportFlags::Help::only_html("Self-contained HTML report with the maps"));
  cmd->add_option("--out-dir", f->out_dir, "Also write each map as a PNG file here");
  f->model.add_to(*cmd, /*required=*/true);
  cmd->callback([f, &exit_code] {
    exit_code = guarded([&] {
      if (f->report.html.empty() && f->out_dir.empty())
        throw UsageError("give --html FILE and/or --out-dir DIR");
      return run(*f);
    });
  });
}

}  // namespace winokit::cli
