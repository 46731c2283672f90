// winokit heatmap: word-patch similarity maps for chosen examples, as PNGs in an HTML report.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
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
  std::unique_ptr<VlModel> model = f.model.open("heatmap", Ability::Alignment);
  const AlignmentMethod method = alignment_method(*model);
  ImageStore store = ImageStore::open(ds.root, ds.images);
  HeatmapReport report{model->name(), {}, {}};
  report.title = method.title;
  report.method = method.method;
  report.scale_low = method.scale_low;
  report.scale_high = method.scale_high;
  OutputSet out;
  std::size_t written = 0;
  for (std::size_t e : chosen) {
    const WinogroundExample& ex = ds.examples[e];
    HeatmapExample& shown = report.examples.emplace_back(HeatmapExample{ex.id, {}});
    const std::vector<ImageBytes> images = {store.read(ex.images[0]), store.read(ex.images[1])};
    for (AlignmentPanel& p : alignment_panels(*model, images, {ex.captions[0], ex.captions[1]})) {
      HeatmapPanel& panel = shown.panels.emplace_back(HeatmapPanel{
          static_cast<int>(p.image), static_cast<int>(p.caption), ex.captions[p.caption], {}, {}});
      panel.note = p.note;
      for (std::size_t t = 0; t < p.maps.size(); ++t) {
        auto& [token, png] = p.maps[t];
        if (!f.out_dir.empty()) {
          out.add_in(f.out_dir,
                     heatmap_file_name(safe_file_name(ex.id), static_cast<int>(p.image),
                                       static_cast<int>(p.caption), t, token),
                     png);
        }
        if (!f.report.html.empty()) panel.maps.emplace_back(token, std::move(png));
        ++written;
      }
    }
  }
  report.model_description = model->describe();
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
