// winokit retrieval: text-to-image and image-to-text Recall@k over the whole dataset.
#include "commands.hpp"
#include "common.hpp"
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
  std::string rerank_with;  // --rerank's candidates
  int rerank = 0;
  std::string ties = "strict";
};

int run(const RetrievalFlags& f) {
  check_shard_model(f.model.shard, f.model.model);
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
  if (f.rerank == 0 && !f.rerank_with.empty()) throw UsageError("--rerank-with needs --rerank K");
  if (f.rerank != 0) {
    if (!f.model.shard.shard.empty()) {
      throw UsageError(
          "--shard cannot split --rerank K (its pairs depend on the full candidate "
          "matrix)",
          "shard the candidates' run (--matrix-out), then re-rank in one process");
    }
    if (!f.matrix_out.empty()) {
      throw UsageError("--matrix-out: a re-ranked run has one matrix per direction, not one");
    }
    if (f.model.model.empty()) {
      throw UsageError("--rerank K needs --model DIR (an image-text matching model)");
    }
    std::unique_ptr<VlModel> model = f.model.open();
    if (model->can(Ability::Embeddings)) {
      throw UsageError("--rerank K is for image-text matching models: --model " + f.model.model +
                       " is a dual encoder, whose full matrix is cheap");
    }
    if (!model->retrieval_head().empty() && model->head() == model->retrieval_head()) {
      throw UsageError("--rerank re-scores with the matching head: drop --head " + f.model.head);
    }
    if (name.empty()) name = model->name();
    // 1. The candidates' full matrix: --rerank-with's model, else this checkpoint's cheap head.
    ModelFlags cf = f.model;
    cf.quiet_progress = true;
    if (!f.rerank_with.empty()) {
      cf.model = f.rerank_with;
      cf.head.clear();
    } else if (!model->retrieval_head().empty()) {
      cf.head = model->retrieval_head();
    } else {
      throw UsageError("--rerank with " + model->name() + " (" + model->family() +
                       ", no cheap head of its own) needs --rerank-with DIR: a dual encoder "
                       "whose top K it re-scores");
    }
    std::unique_ptr<VlModel> candidates = cf.open();
    if (!f.rerank_with.empty() && !candidates->can(Ability::Embeddings) &&
        !candidates->retrieval_head().empty() &&
        candidates->head() != candidates->retrieval_head()) {
      // A model with a cheap head of its own (its retrieval_head()) gives its
      // candidates with that head.
      cf.head = candidates->retrieval_head();
      candidates = cf.open();
    }
    if (!candidates->can(Ability::Embeddings) &&
        candidates->head() != candidates->retrieval_head()) {
      throw UsageError("--rerank-with " + f.rerank_with + " is a " + candidates->family() +
                       " checkpoint without a cheap full matrix: give a dual encoder, or a "
                       "model with a contrastive head (`winokit models`)");
    }
    EmbedStats cand_stats, stats;
    const ScoreMatrix cand = model_score_matrix(*candidates, ds, &cand_stats);
    RerankedRetrieval rr = rerank_retrieval(*model, cand, f.rerank, ds, &stats);
    std::cerr << "winokit: re-ranking the top " << f.rerank << " of " << cand.captions << " x "
              << cand.images << " candidates: " << rr.pairs_scored << " pairs re-scored by "
              << model->name() << " instead of "
              << static_cast<std::size_t>(cand.captions) * cand.images << "\n";
    m = std::move(rr.text_to_image);
    image_to_text = std::move(rr.image_to_text);
    nlohmann::json source = model->describe();
    source["retrieval"] = "re-ranking: the candidates' top " + std::to_string(f.rerank) +
                          " per query re-scored by the model, ranked above the rest (which "
                          "keep the candidates' order)";
    nlohmann::json cand_source = candidates->describe();
    cand_source["embeddings"] = embed_stats_json(cand_stats);
    source["rerank"] = {
        {"k", f.rerank}, {"pairs_scored", rr.pairs_scored}, {"candidates", cand_source}};
    source["embeddings"] = embed_stats_json(stats);
    provenance.model("scores", source);
  } else if (!f.model.model.empty()) {
    std::unique_ptr<VlModel> model = f.model.open("retrieval", Ability::PairScores);
    if (name.empty()) name = model->name();
    if (!model->dual_encoder()) {
      const std::size_t n = 2 * ds.examples.size();
      std::cerr << "winokit: " << model->name()
                << " scores every caption with every image: " << n * n << " joint forward passes ("
                << n << " x " << n << "); --rerank K re-scores only a dual encoder's top K\n";
    }
    EmbedStats stats;
    m = model_score_matrix(*model, ds, &stats);
    nlohmann::json source = model->describe();
    source["retrieval"] = model->dual_encoder()
                              ? "full matrix: cosine of every caption and image embedding"
                              : "full scoring: every caption with every image";
    source["embeddings"] = embed_stats_json(stats);
    provenance.model("scores", source);
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
  cmd->add_option("--rerank", f->rerank,
                  "Image-text matching models: re-score only a dual encoder's top K per "
                  "query (default: every pair)");
  cmd->add_option("--rerank-with", f->rerank_with,
                  "The dual encoder giving --rerank's candidates (default: the model's own "
                  "cheap head, its retrieval head in `winokit models --model DIR`)");
  cmd->callback([f, &exit_code] { exit_code = guarded([&] { return run(*f); }); });
}

}  // namespace winokit::cli
