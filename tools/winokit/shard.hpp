// Sharded runs: `--shard I/N` on a command that runs a model over a dataset, and `winokit merge`.
//
// A shard runs the command as usual, but its model (wrapped by wrap_model) computes only its
// slice of each model call's work units and records them; the command's own outputs are not
// written (nor its tables printed): the shard writes one part file instead (--part, default
// `winokit-part-I-of-N.json`). The work units of one call:
//   - a dual encoder's embed_images / embed_texts: the images / the texts of the request
//     (so pair scores from embeddings cost each image and caption once over all shards);
//   - a cross-encoder's score_pairs: the pairs of the request.
// Shard I takes units [I * n / N, (I + 1) * n / N) of every call: contiguous, deterministic,
// disjoint, and all of them over the N shards. Every shard makes the same calls in the same order
// (the same command line on the same data), so call k of one shard is call k of every other.
//
// `winokit merge PARTS...` checks that the parts belong together (one command line, one model,
// the same inputs and calls, every shard 0..N-1 exactly once) and runs the recorded command line
// again with the model replaced by a replay of the parts: each call gets the merged results
// (bit for bit what the model computes: results do not depend on the batch), so everything
// downstream (metrics, reports, OutputSet) is the single-process command's own code path and its
// outputs are the same bytes, except wall times.
//
// The shard index: `--shard I/N` (0 <= I < N), or `--shard env/N`: I from
// $SLURM_ARRAY_TASK_ID (Slurm job arrays), else $JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs),
// else $WINOKIT_SHARD_INDEX.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "winokit/model/vl_model.hpp"

namespace winokit::cli {

// The command line of this process (main records it; a shard writes it into its part).
void set_command_line(int argc, char** argv);

// Adds --shard and --part to a command that runs a model.
struct ShardFlags {
  std::string shard, part;
  void add_to(CLI::App& app);
};

// A shard is running (--shard was given and the model opened): the command's outputs are not
// written and its tables not printed.
bool shard_active();
// `merge` is replaying parts.
bool replay_active();
// UsageError when --shard is given without --model (eval --scores FILE --shard ...).
void check_shard_model(const ShardFlags& flags, const std::string& model);
// "shard 2/4: " while a shard runs, else "".
std::string shard_label();

// Called when a command opens its model: in a shard (`flags.shard` set), or while merge replays,
// the model comes back wrapped; otherwise as it is. `command` names the command for refusals.
std::unique_ptr<VlModel> wrap_model(std::unique_ptr<VlModel> model, const ShardFlags& flags,
                                    const std::string& command);

// For a computation outside the model interface (GPT-2 perplexity). begin_shard starts a shard
// when `flags` ask for one (as wrap_model does) and says whether this process shards or replays.
// shard_units then runs n units (contiguous, `item_bytes` of results each): in a shard,
// compute(lo, hi, stats) for its slice (recorded); in merge, the recorded results of all.
bool begin_shard(const ShardFlags& flags, const std::string& command);
std::string shard_units(
    const std::string& kind, const std::string& signature, std::size_t n, std::size_t item_bytes,
    EmbedStats* stats,
    const std::function<std::string(std::size_t, std::size_t, EmbedStats*)>& compute);

// At the end of a command in a shard: writes its part file and says so on stderr.
void finish_shard();

// Runs winokit on a command line (main's parser): what merge replays.
int run_winokit(const std::vector<std::string>& args);

void add_merge(CLI::App& app, int& exit_code);

}  // namespace winokit::cli
