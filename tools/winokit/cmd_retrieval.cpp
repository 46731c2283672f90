// winokit retrieval: text-to-image and image-to-text Recall@k over the whole dataset.
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "flava_cli.hpp"
#include "vilt_cli.hpp"
#include "winokit/error.hpp"
#include "winokit/files.hpp"
#include "winokit/report.hpp"
#include "winokit/retrieval.hpp"
#include "winokit/safetensors.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct RetrievalFlags {
  std::string data, matrix, json, markdown, html, matrix_out, name, images;
  std::vector<int> ks = {1, 2, 5, 10};
  bool quiet = false;
  ModelFlags model;
  std::string head, rerank_with;  // FLAVA's head; --rerank's candidates (vilt_cli.hpp)
  int rerank = 0;
};

int run(const RetrievalFlags& f) {
  if (f.model.model.empty() == f.matrix.empty()) {
    throw UsageError("give exactly one of --model DIR or --matrix FILE");
  }
  Dataset ds = load_dataset(f.data);
  ds.images = f.images;
  ScoreMatrix m;
  std::string name = f.name;
  nlohmann::json source;
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
    source = std::move(rr.source);
  } else if (is_flava_model(f.model)) {
    if (name.empty()) name = model_name(f.model.model);
    m = flava_retrieval_matrix(f.model, f.head, ds, source);
  } else if (is_vilt_model(f.model)) {
    if (name.empty()) name = model_name(f.model.model);
    m = vilt_retrieval_matrix(f.model, ds, source);
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
    source = rt.describe();
  } else {
    m = load_score_matrix(f.matrix, ds);
    if (name.empty()) name = std::filesystem::path(f.matrix).stem().string();
    source = {{"kind", "score-matrix"}, {"file", f.matrix}};
  }
  RecallResult r = retrieval_recall(m, f.ks);
  if (f.rerank != 0) {
    const RecallResult r2 = retrieval_recall(image_to_text, f.ks);
    r.image_to_text = r2.image_to_text;
    r.i2t_ties = r2.i2t_ties;
    r.i2t_rank = r2.i2t_rank;
  }
  std::ostringstream md;
  md << "## Retrieval: " << name << " (" << m.captions << " captions x " << m.images
     << " images)\n\n"
     << "| Direction |";
  for (int k : r.ks)
    md << " R@" << k << " |";
  md << "\n|---|";
  for (std::size_t i = 0; i < r.ks.size(); ++i)
    md << "---:|";
  md << "\n| text -> image |";
  for (double v : r.text_to_image)
    md << " " << percent(v) << " |";
  md << "\n| image -> text |";
  for (double v : r.image_to_text)
    md << " " << percent(v) << " |";
  md << "\n\nThe correct image of caption_j of example i is image_j of example i. Ties count "
        "against "
        "the model (a distractor scored equal to the correct item ranks ahead of it): "
     << r.t2i_ties << " caption queries and " << r.i2t_ties
     << " image queries had such ties. R@1 needs the minimal pair resolved; R@2 does not (the "
        "pair's other item may rank first).\n";
  nlohmann::json j = {
      {"model", name},
      {"provenance",
       {{"tool", "winokit"},
        {"version", kVersion},
        {"dataset", dataset_json(ds)},
        {"scores", source}}},
      {"ks", r.ks},
      {"text_to_image_percent", nlohmann::json::array()},
      {"image_to_text_percent", nlohmann::json::array()},
      {"ties", {{"text_to_image_queries", r.t2i_ties}, {"image_to_text_queries", r.i2t_ties}}},
      {"method", "rank = 1 + items scored higher + other items scored equal"}};
  for (double v : r.text_to_image)
    j["text_to_image_percent"].push_back(v * 100);
  for (double v : r.image_to_text)
    j["image_to_text_percent"].push_back(v * 100);
  OutputSet out;
  if (!f.json.empty()) out.add(f.json, j.dump(2) + "\n");
  if (!f.markdown.empty()) out.add(f.markdown, md.str());
  if (!f.html.empty())
    out.add(f.html, markdown_html("Retrieval: " + name, md.str(), j["provenance"]));
  if (!f.matrix_out.empty()) {
    out.add(f.matrix_out,
            encode_safetensors_f32({{"scores", {{m.captions, m.images}, m.scores}}},
                                   {{"order", "caption 2*i+j x image 2*i+k, dataset order"}}));
  }
  commit(out);
  if (!f.quiet && f.markdown.empty()) std::cout << md.str();
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
  cmd->add_option("--json", f->json, "Write the JSON report");
  cmd->add_option("--markdown", f->markdown, "Write the markdown table to a file");
  cmd->add_option("--html", f->html, "Write the HTML report");
  cmd->add_option("--matrix-out", f->matrix_out, "Write the score matrix (safetensors)");
  cmd->add_flag("--quiet", f->quiet, "Do not print the table");
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
