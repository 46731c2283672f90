#include "winokit/report/format.hpp"

#include <cmath>
#include <cstdio>

#include "winokit/report/provenance.hpp"

namespace winokit {

using nlohmann::json;

std::string percent(double proportion, int decimals) {
  if (!std::isfinite(proportion)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, proportion * 100.0);
  return buf;
}

std::string interval_text(const Interval& interval, int decimals) {
  if (!interval.valid()) return "n/a";
  return "[" + percent(interval.low, decimals) + ", " + percent(interval.high, decimals) + "]";
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t b0 = static_cast<unsigned char>(bytes[i]);
    const std::uint32_t b1 = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const std::uint32_t b2 = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const std::uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? kAlphabet[v & 63] : '=');
  }
  return out;
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

ReportContext make_context(const WinogroundDataset& dataset, const std::string& model,
                           const json& scorer, const EvalInputs& inputs,
                           const EvalOptions& options) {
  ReportContext ctx;
  ctx.model = model;
  Provenance p;
  p.dataset(dataset).model("scorer", scorer).inputs("tag_sets").inputs("covariates");
  for (const auto& t : inputs.tag_sets)
    p.list_input("tag_sets", {t.name, t.file, t.sha256, std::nullopt});
  for (const auto& c : inputs.covariates)
    p.list_input("covariates", {c.name, c.source, c.sha256, std::nullopt});
  ctx.provenance = p.options(options).json();
  return ctx;
}

}  // namespace winokit
