// winokit retrieval: text-to-image and image-to-text Recall@k over the whole dataset.
#include "commands.hpp"
#include "common.hpp"
#include "flava_cli.hpp"
#include "vilt_cli.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/retrieval.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/report/retrieval_report.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct RetrievalFlags {
  std::string data, matrix, matrix_out, name, images;
  std::vector<int> ks = {1, 2, 5, 10};
  ReportFlags report;
  ModelFlags model;
  std::string head, rerank_with;  // FLAVA's head; --rerank's candidates (vilt_cli.hpp)
  int rerank = 0;
  std::string ties = "strict";
};

int run(const RetrievalFlags& f) {
  if (f.model.model.empty() == f.matrix.empty()) {
    throw UsageError("give exactly one of --model DIR or --matrix FILE");
  }
  WinogroundDataset ds = load_dataset(f.data);
  ds.images = f.images;
  ScoreMatrix m;
  std::string name = f.name;
  Provenance provenance;
  provenance.dataset(ds);
  ScoreMatrix image_to_text;  // --rerank: the second direction's own matrix
  if (!f.head.empty() && !is_flava_model(f.model)) {
    throw UsageError("--head is for FLAVA checkpoints (itm or contrastive)");
  }
  if (f.rerank == 0 && !f.rerank_with.empty()) throw UsageError("--rerank-with needs --rerank K");
  if (f.rerank != 0) {
    if (!f.matrix_out.empty()) {
      throw UsageError("--matrix-out: a re-ranked run has one matrix per direction, not one");
    }
    if (f.model.model.empty()) throw UsageError("--rerank K needs --model DIR (ViLT or FLAVA)");
    if (name.empty()) name = model_name(f.model.model);
    RerankedRetrieval rr = rerank_retrieval(f.model, f.head, f.rerank_with, f.rerank, ds);
    m = std::move(rr.text_to_image);
    image_to_text = std::move(rr.image_to_text);
    provenance.model("scores", rr.source);
  } else if (is_flava_model(f.model)) {
    if (name.empty()) name = model_name(f.model.model);
    nlohmann::json source;
    m = flava_retrieval_matrix(f.model, f.head, ds, source);
    provenance.model("scores", source);
  } else if (is_vilt_model(f.model)) {
    if (name.empty()) name = model_name(f.model.model);
    nlohmann::json source;
    m = vilt_retrieval_matrix(f.model, ds, source);
    provenance.model("scores", source);
  } else if (!f.model.model.empty()) {
    ClipRuntime rt = f.model.load();
    if (name.empty()) name = model_name(f.model.model);
    ImageStore store = ImageStore::open(ds.root, ds.images);
    DatasetItems items = dataset_items(ds, store);
    const std::vector<std::string>& captions = items.captions;
    const std::vector<ImageRequest>& requests = items.images;
    const auto t = embed_texts(rt, captions);
    const auto im = embed_images(rt, requests);
    const int n = static_cast<int>(captions.size());
    m = matrix_from_embeddings(t, im, n, n, rt.model->config().embed_dim);
    provenance.model("scores", rt.describe());
  } else {
    m = load_score_matrix(f.matrix, ds);
    if (name.empty()) name = std::filesystem::path(f.matrix).stem().string();
    provenance.source("scores", "score-matrix", "file", f.matrix);
  }
  const TieRule ties = f.ties == "official" ? TieRule::Official : TieRule::Strict;
  RecallResult recall = retrieval_recall(m, f.ks, ties);
  if (f.rerank != 0) {
    RecallResult r2 = retrieval_recall(image_to_text, f.ks, ties);
    set_image_to_text(recall, std::move(r2.i2t_rank), r2.i2t_ties);
  }
  const RetrievalReport report{name, static_cast<std::size_t>(m.captions),
                               static_cast<std::size_t>(m.images), std::move(recall),
                               provenance.json()};
  const std::string md = retrieval_markdown(report);
  OutputSet out;
  f.report.add_outputs(out,
                       {{ReportFormat::Json, [&] { return retrieval_json(report).dump(2) + "\n"; }},
                        {ReportFormat::Markdown, [&] { return md; }},
                        {ReportFormat::Html, [&] { return retrieval_html(report); }}});
  if (!f.matrix_out.empty()) {
    out.add(f.matrix_out,
            encode_safetensors_f32({{"scores", {{m.captions, m.images}, m.scores}}},
                                   {{"order", "caption 2*i+j x image 2*i+k, dataset order"}}));
  }
  commit(out);
  f.report.print(md);
  return 0;
}

}  // namespace

void add_retrieval(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<RetrievalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "retrieval", "Text-to-image and image-to-text Recall@k over the whole dataset");
  cmd->add_option("--data", f->data, "Dataset folder with examples.jsonl")->required();
  cmd->add_option("--images", f->images,
                  "Image folder or .zip, when not images/ (or images.zip) beside examples.jsonl");
  cmd->add_option(
      "--matrix", f->matrix,
      "Score matrix (safetensors \"scores\" [2N, 2N]) for models that are not dual encoders");
  cmd->add_option("--k", f->ks, "Recall cut-offs")->capture_default_str()->delimiter(',');
  cmd->add_option("--name", f->name, "Name in the report");
  cmd->add_option("--ties", f->ties,
                  "strict: a distractor scored equal to the correct item ranks ahead of it; "
                  "official: the correct item ranks first among ties, as the official metrics.py "
                  "of \"Why is Winoground Hard?\" (the reproduce recipe)")
      ->capture_default_str()
      ->check(CLI::IsMember({"strict", "official"}));
  f->report.add_to(
      *cmd, {.markdown = "Write the markdown table to a file", .quiet = "Do not print the table"});
  cmd->add_option("--matrix-out", f->matrix_out, "Write the score matrix (safetensors)");
  f->model.add_to(*cmd, /*required=*/false);
  cmd->add_option("--head", f->head, "FLAVA: itm or contrastive (default: itm when present)");
  cmd->add_option("--rerank", f->rerank,
                  "ITM models (ViLT, FLAVA): re-score only a dual encoder's top K per query "
                  "(default: every pair, with a progress estimate)");
  cmd->add_option("--rerank-with", f->rerank_with,
                  "The dual encoder giving --rerank's candidates: a CLIP folder (FLAVA: its "
                  "own contrastive head when not given)");
  cmd->callback([f, &exit_code] { exit_code = guarded([&] { return run(*f); }); });
}

}  // namespace winokit::cli
