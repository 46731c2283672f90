#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "winokit/report/html_report.hpp"

#include "winokit/report/example_browser.hpp"

namespace winokit {

namespace {

constexpr std::array<const char*, 3> kColors = {"#4e79a7", "#f28e2b", "#59a14f"};

constexpr const char* kStyle = R"(<style>
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:1100px;
padding:0 1rem;color:#222;line-height:1.45;overflow-wrap:break-word}
h1{font-size:1.6rem;margin:.2rem 0 .6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1.05rem}
.scroll{overflow-x:auto;max-width:100%;-webkit-overflow-scrolling:touch;
background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)),linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) 100% 0,
radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.22),rgba(0,0,0,0)),radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.22),rgba(0,0,0,0)) 100% 0;
background-repeat:no-repeat;background-size:32px 100%,32px 100%,12px 100%,12px 100%;background-attachment:local,local,scroll,scroll}
.scroll-hint{font-size:.85rem;color:#555;margin:.2rem 0 0}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.92rem}
th,td{border:1px solid #ddd;padding:.25rem .6rem;text-align:right;white-space:nowrap;
font-variant-numeric:tabular-nums}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}
.note{color:#555;font-size:.9rem}
.chart svg{display:block;max-width:100%;height:auto}
.side{display:flex;flex-wrap:wrap;gap:0 2rem;align-items:center}.side>.side-table{flex:1 1 420px;min-width:0}
.legend span{display:inline-block;width:.9rem;height:.9rem;margin:0 .3rem 0 1rem;vertical-align:middle}
code{background:#f4f4f4;padding:0 .2rem;overflow-wrap:anywhere}
pre{overflow-x:auto;background:#f8f8f8;padding:.5rem}
.headline{border:1px solid #cfd8e3;background:#f5f8fc;border-radius:6px;padding:.6rem 1rem;margin:1rem 0}
.headline .scores{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;margin:.4rem 0}
.headline .score b{font-size:1.5rem;display:block}
.warn{border:2px solid #c77700;background:#fff4e0;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
table.prov{width:100%;table-layout:fixed}table.prov th{text-align:left}table.prov th:first-child{width:34%}
table.prov td{white-space:normal;text-align:left;overflow-wrap:anywhere}
.controls{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;position:sticky;top:0;
background:#fff;padding:.5rem 0;z-index:1;border-bottom:1px solid #eee}
.controls select{max-width:100%;font-size:1rem}.controls label{max-width:100%}
.ex-list{list-style:none;padding:0}
.ex{border:1px solid #ddd;border-radius:6px;padding:.4rem .8rem;margin:.8rem 0}
.ex h3{margin:.2rem 0}.ex-body{display:flex;flex-wrap:wrap;gap:1rem}
.pair{display:flex;flex-wrap:wrap;gap:.6rem;flex:1 1 340px}
.pair figure{margin:0;flex:0 1 160px;max-width:160px}
.pair img{width:100%;height:auto;border:1px solid #ccc;display:block}
.ex-scores{flex:1 1 260px;min-width:0}.four{margin:.2rem 0}.four caption{text-align:left;font-weight:600}
mark{background:#ffe08a;padding:0 .1rem}
.ok{color:#1a7f37}.bad{color:#b42318}
.tags span{display:inline-block;background:#eef1f4;border-radius:3px;padding:0 .35rem;margin:.1rem 0;font-size:.85rem}
.bar{fill:#4e79a7}.chance{stroke:#c00;stroke-width:2;stroke-dasharray:3,2}.grid{stroke:#e3e3e3}
.chart text{fill:#222}.chart{margin:.5rem 0}
.controls input{font-size:1rem;max-width:100%}
.empty{border:2px solid #c77700;background:#fff4e0;border-radius:6px;padding:.5rem 1rem;margin:.5rem 0}
.empty button,#zoom button{font-size:1rem;margin-left:.3rem}
table.ineq{margin:.3rem 0 .2rem}.ineq caption{text-align:left;font-weight:600}
.ineq th,.ineq td{padding:.15rem .4rem}.ineq tr.hd th{text-align:left;font-weight:600;white-space:normal}
.ineq tr.hd small{font-weight:400;color:#555}.ineq tr.fail td,.ineq tr.fail th{background:#fde8e6}
.ineq td.op{text-align:center;font-weight:700}.ineq td.m{text-align:center}.ineq td.d{color:#555}
.outcome small{color:#555}
button.zoom{display:block;width:100%;padding:0;border:0;background:none;cursor:zoom-in}
#zoom{max-width:min(94vw,720px);padding:.6rem;border:1px solid #888;border-radius:6px}
#zoom figure{margin:0}#zoom img{display:block;width:min(86vw,480px);height:auto}
#zoom::backdrop{background:rgba(0,0,0,.6)}
.maps{display:flex;flex-wrap:wrap;gap:.5rem}.maps figure{margin:0;flex:0 1 160px;max-width:160px;text-align:center}
.maps img{display:block;width:100%;height:auto;image-rendering:pixelated}
.heat-scale{margin:.5rem 0 1rem;max-width:240px}.heat-scale svg{display:block;max-width:100%;height:auto}
.heat-scale figcaption{display:flex;justify-content:space-between;gap:1rem;font-size:.85rem;color:#555}
:focus-visible{outline:3px solid #4e79a7;outline-offset:2px}
@media (max-width:600px){body{margin:.8rem auto;padding:0 .6rem}h1{font-size:1.3rem}
.controls{position:static}.headline .score b{font-size:1.25rem}
.legend span{margin-left:.4rem}
.ineq{font-size:.8rem}.ineq th,.ineq td{padding:.1rem .2rem}.ex{padding:.4rem .5rem}}
</style>)";

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string legend() {
  std::string out = "<p class=\"legend\">";
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    out += "<span style=\"background:" + std::string(kColors[m]) + "\"></span>" + kMetricNames[m];
  }
  return out + " &nbsp; whiskers: bootstrap percentile interval; dashed: chance</p>";
}

std::string group_table(const std::vector<GroupStats>& groups, const std::string& first_column,
                        int level) {
  std::ostringstream t;
  t << "<div class=\"scroll\"><table><tr><th>" << html_escape(first_column)
    << "</th><th>N</th><th>Text score</th><th>Image score</th><th>Group score</th>"
       "<th>Group score "
    << level << "% interval (bootstrap)</th><th>Group score p vs chance</th></tr>";
  for (const auto& g : groups) {
    char p[32];
    std::snprintf(p, sizeof p, "%.3g", g.metrics[kGroup].p_vs_chance);
    t << "<tr><td>" << html_escape(g.name) << "</td><td>" << g.n << "</td>";
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      t << "<td>" << (g.metrics[m].above_chance_paper ? "<b>" : "") << percent(g.metrics[m].value)
        << (g.metrics[m].above_chance_paper ? "</b>" : "")
        << (g.metrics[m].above_chance ? " *" : "") << "</td>";
    }
    t << "<td>" << interval_text(g.metrics[kGroup].bootstrap_percentile) << "</td><td>" << p
      << "</td></tr>";
  }
  t << "</table></div><p class=\"note\">bold: &gt; chance (paper: strictly above 25% text and "
       "image, "
       "16.67% group); *: significant (exact one-sided binomial test against chance)</p>";
  return t.str();
}

int level_of(const EvalOptions& o) {
  return static_cast<int>(o.confidence * 100 + 0.5);
}

bool is_random_weights(const nlohmann::json& scorer) {
  return scorer.is_object() && scorer.contains("model") && scorer["model"].is_string() &&
         scorer["model"].get<std::string>().rfind("random weights", 0) == 0;
}

std::string random_warning(const std::string& model) {
  return "<p class=\"warn\" role=\"note\"><b>Random weights.</b> " + html_escape(model) +
         " is a CLIP network with seeded random weights, not a trained checkpoint: its scores "
         "measure nothing about vision and language and show only that the engine runs.</p>";
}

void flatten(const nlohmann::json& j, const std::string& key, std::ostringstream& rows) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items())
      flatten(v, key.empty() ? k : key + "." + k, rows);
    return;
  }
  if (j.is_array() && !j.empty()) {
    bool scalars = std::all_of(j.begin(), j.end(), [](const auto& v) { return v.is_primitive(); });
    if (!scalars) {
      for (std::size_t i = 0; i < j.size(); ++i)
        flatten(j[i], key + "[" + std::to_string(i) + "]", rows);
      return;
    }
  }
  std::string value;
  if (j.is_string()) {
    value = j.get<std::string>();
  } else if (j.is_array()) {
    for (const auto& v : j)
      value += (value.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
  } else {
    value = j.dump();
  }
  rows << "<tr><td>" << html_escape(key) << "</td><td>" << html_escape(value) << "</td></tr>";
}

std::string headline_score(const char* label, const MetricStats& s, double chance, int level) {
  std::ostringstream h;
  h << "<div class=\"score\">" << label << "<b>" << percent(s.value) << "</b>" << level << "% "
    << interval_text(s.bootstrap_percentile) << "<br>chance " << percent(chance) << ", "
    << (s.above_chance ? "above chance" : "not above chance") << "</div>";
  return h.str();
}

}  // namespace

// Every table wider than its box gets "scroll sideways" above it (and loses it when the window
// grows); the edge shadows of .scroll say the same without JavaScript.
constexpr const char* kScrollScript = R"(<script>
(function(){function mark(){[].forEach.call(document.querySelectorAll('.scroll'),function(d){
var over=d.scrollWidth>d.clientWidth+1,hint=d.previousElementSibling;
var has=hint&&hint.classList.contains('scroll-hint');d.classList.toggle('overflows',over);
if(over&&!has){hint=document.createElement('p');hint.className='scroll-hint';
hint.textContent='Wide table: scroll sideways to see every column \u2192';d.parentNode.insertBefore(hint,d);}
else if(!over&&has){hint.remove();}});}
mark();window.addEventListener('resize',mark);})();
</script>)";

std::string html_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
         html_escape(title) + "</title>" + kStyle + "</head><body>\n" + body + "\n" +
         kScrollScript + "</body></html>\n";
}

std::string provenance_html(const nlohmann::json& provenance) {
  std::ostringstream rows;
  flatten(provenance, "", rows);
  return "<h2>Provenance</h2><p class=\"note\">Where these numbers come from (the JSON output "
         "holds the same record).</p><div class=\"scroll\"><table class=\"prov\"><tr><th>Field"
         "</th><th>Value</th></tr>" +
         rows.str() + "</table></div>";
}

std::string html_scroll_tables(const std::string& html) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t a = html.find("<table", pos);
    if (a == std::string::npos) break;
    const std::size_t b = html.find("</table>", a);
    if (b == std::string::npos) break;
    out +=
        html.substr(pos, a - pos) + "<div class=\"scroll\">" + html.substr(a, b + 8 - a) + "</div>";
    pos = b + 8;
  }
  return out + html.substr(pos);
}

namespace {
std::string page(const std::string& title, const std::string& body) {
  return html_page(title, body);
}
}  // namespace

std::string svg_group_chart(const std::vector<GroupStats>& groups, const std::string& title) {
  constexpr double kBar = 16, kGap = 28, kTop = 28, kPlot = 220;
  // Labels are rotated 35 degrees and end under their bars: the left margin leaves room for the
  // first label (which reaches left of its bars) and the bottom margin for the longest one. The
  // width per character is generous (bold capitals, wide system fonts), so no label is cut
  // ("djective-Color").
  constexpr double kCharWidth = 7.0, kCos35 = 0.82, kSin35 = 0.58, kMinLeft = 44, kMaxLeft = 220;
  constexpr std::size_t kMaxLabel = 28;
  auto label_of = [](const GroupStats& g) {
    return (g.name.size() > kMaxLabel ? g.name.substr(0, kMaxLabel - 1) + "..." : g.name) + " (" +
           std::to_string(g.n) + ")";
  };
  std::size_t longest = 0;
  for (const auto& g : groups)
    longest = std::max(longest, label_of(g).size());
  const double first = groups.empty() ? 0.0 : static_cast<double>(label_of(groups[0]).size());
  // The first label ends kGap / 2 + 1.5 bars right of the plot's left edge.
  const double kLeft =
      std::clamp(kCharWidth * kCos35 * first - (kGap / 2 + kBar * 1.5) + 8, kMinLeft, kMaxLeft);
  const double kBottom = 12 + kCharWidth * kSin35 * static_cast<double>(longest) + 10;
  const double cluster = kBar * 3 + kGap;
  const double width =
      kLeft + cluster * static_cast<double>(std::max<std::size_t>(groups.size(), 1)) + 10;
  const double height = kTop + kPlot + kBottom;
  auto y_of = [&](double proportion) { return kTop + kPlot * (1.0 - proportion); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"" << fmt(width)
    << "\" height=\"" << fmt(height) << "\" viewBox=\"0 0 " << fmt(width) << " " << fmt(height)
    << "\"><title>" << html_escape(title) << "</title>";
  s << "<text x=\"4\" y=\"14\" font-size=\"11\">score (%)</text>";
  for (int tick = 0; tick <= 100; tick += 25) {
    double y = y_of(tick / 100.0);
    s << "<line x1=\"" << kLeft << "\" x2=\"" << fmt(width) << "\" y1=\"" << fmt(y) << "\" y2=\""
      << fmt(y) << "\" stroke=\"#eee\"/><text x=\"" << kLeft - 6 << "\" y=\"" << fmt(y + 4)
      << "\" font-size=\"11\" text-anchor=\"end\">" << tick << "</text>";
  }
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    double x0 = kLeft + kGap / 2 + cluster * static_cast<double>(gi);
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      const auto& st = g.metrics[m];
      double x = x0 + kBar * static_cast<double>(m);
      double y = y_of(st.value);
      s << "<rect x=\"" << fmt(x) << "\" y=\"" << fmt(y) << "\" width=\"" << kBar - 2
        << "\" height=\"" << fmt(kTop + kPlot - y) << "\" fill=\"" << kColors[m] << "\"><title>"
        << html_escape(g.name) << " " << kMetricNames[m] << ": " << percent(st.value)
        << " (N=" << g.n << ")</title></rect>";
      if (st.bootstrap_percentile.valid()) {
        double cx = x + (kBar - 2) / 2;
        double lo = y_of(st.bootstrap_percentile.low), hi = y_of(st.bootstrap_percentile.high);
        s << "<path d=\"M" << fmt(cx) << " " << fmt(lo) << "V" << fmt(hi) << "M" << fmt(cx - 4)
          << " " << fmt(lo) << "h8M" << fmt(cx - 4) << " " << fmt(hi)
          << "h8\" stroke=\"#222\" fill=\"none\"/>";
      }
      double cy = y_of(kChance[m]);
      s << "<line x1=\"" << fmt(x - 1) << "\" x2=\"" << fmt(x + kBar - 1) << "\" y1=\"" << fmt(cy)
        << "\" y2=\"" << fmt(cy) << "\" stroke=\"#c00\" stroke-dasharray=\"3,2\"/>";
    }
    double lx = x0 + kBar * 1.5;
    double ly = kTop + kPlot + 12;
    s << "<text x=\"" << fmt(lx) << "\" y=\"" << fmt(ly) << "\" font-size=\"11\" "
      << "text-anchor=\"end\" transform=\"rotate(-35 " << fmt(lx) << " " << fmt(ly) << ")\">"
      << html_escape(label_of(g)) << "</text>";
  }
  s << "</svg>";
  return s.str();
}

std::string html_report(const EvalResult& r, const ReportContext& ctx) {
  return html_report(r, ctx, nullptr);
}

std::string html_report(const EvalResult& r, const ReportContext& ctx,
                        const ExampleBrowser* examples) {
  const int level = level_of(r.options);
  const auto& prov = ctx.provenance;
  std::ostringstream b;
  b << "<h1>Winoground report: " << html_escape(ctx.model) << "</h1>";
  if (is_random_weights(prov.value("scorer", nlohmann::json()))) b << random_warning(ctx.model);
  b << "<div class=\"headline\"><p><b>" << html_escape(ctx.model) << "</b> on <code>"
    << html_escape(prov["dataset"]["examples"].get<std::string>()) << "</code>, N = " << r.overall.n
    << " examples.</p><div class=\"scores\">"
    << headline_score("Text score", r.overall.metrics[kText], kChance[kText], level)
    << headline_score("Image score", r.overall.metrics[kImage], kChance[kImage], level)
    << headline_score("Group score", r.overall.metrics[kGroup], kChance[kGroup], level)
    << "</div><p class=\"note\">What to read: the group score is the strictest (both captions "
       "must pick their own image and both images their own caption); compare each score with "
       "chance and its interval, then look below at which tags and examples the model gets "
       "wrong. Scores are percentages; intervals are "
    << level << "% bootstrap percentile intervals.</p></div>";
  b << "<p class=\"note\">Dataset sha256 "
    << prov["dataset"]["sha256"].get<std::string>().substr(0, 12) << "&hellip;, winokit "
    << html_escape(prov["version"].get<std::string>()) << ".</p>";
  b << "<h2>Overall</h2>" << legend() << "<div class=\"side\"><div class=\"chart\">"
    << svg_group_chart({r.overall}, "Overall") << "</div>";
  b << "<div class=\"side-table\"><div class=\"scroll\"><table><tr><th>Metric</th><th>Score</th>"
       "<th>Chance</th><th>"
    << level << "% " << fold_column_label(r.options) << "</th><th>" << level
    << "% bootstrap percentile</th><th>" << level
    << "% bootstrap BCa</th><th>p vs chance</th></tr>";
  std::string clipped_note;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    const auto& s = r.overall.metrics[m];
    char p[32];
    std::snprintf(p, sizeof p, "%.3g", s.p_vs_chance);
    std::string t_text = "n/a";
    if (s.fold_t) {
      // Mean +- t x SE over a handful of folds can reach past 0 or 100, which no score can:
      // shown clipped, with the computed bound in the note below the table.
      Interval shown = s.fold_t->ci;
      std::string computed;
      if (shown.valid() && shown.low < 0) {
        computed += " lower bound " + percent(shown.low);
        shown.low = 0;
      }
      if (shown.valid() && shown.high > 1) {
        computed +=
            std::string(computed.empty() ? "" : ",") + " upper bound " + percent(shown.high);
        shown.high = 1;
      }
      t_text = interval_text(shown);
      if (!computed.empty()) {
        t_text += "<sup>&dagger;</sup>";
        clipped_note +=
            std::string(clipped_note.empty() ? "" : "; ") + kMetricNames[m] + ":" + computed;
      }
    }
    b << "<tr><td>" << kMetricNames[m] << "</td><td>" << percent(s.value) << "</td><td>"
      << percent(kChance[m]) << "</td><td>" << t_text << "</td><td>"
      << interval_text(s.bootstrap_percentile) << "</td><td>" << interval_text(s.bootstrap_bca)
      << "</td><td>" << p << "</td></tr>";
  }
  const auto& t = r.overall.ties;
  b << "</table></div></div></div>";
  if (!clipped_note.empty())
    b << "<p class=\"note\"><sup>&dagger;</sup> Clipped to the possible range 0-100: the t "
         "interval (mean of the "
      << r.options.folds
      << " fold scores &plusmn; t &times; standard error) extends past it with so few folds ("
      << html_escape(clipped_note) << ").</p>";
  b << "<p class=\"note\">Ties: " << t.text + t.image << " of " << t.comparisons
    << " comparisons (text " << t.text << ", image " << t.image
    << "); a tie counts as wrong. Methods: " << html_escape(fold_method_text(r.options)) << "; "
    << html_escape(bootstrap_method_text(r.options)) << "; "
    << html_escape(chance_test_text(r.options)) << ".</p>";
  for (const auto& bd : r.breakdowns) {
    b << "<h2>" << html_escape(bd.title)
      << "</h2><p class=\"note\">Grouping: " << html_escape(bd.note) << ".</p>" << legend()
      << "<div class=\"chart\">" << svg_group_chart(bd.groups, bd.title) << "</div>"
      << group_table(bd.groups, "Group", level);
  }
  auto fixed4 = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", x);
    return std::isfinite(x) ? std::string(buf) : std::string("n/a");
  };
  if (!r.pair_correlations.empty()) {
    b << "<h2>Correlations with image-caption scores (Table 6, left)</h2><p class=\"note\">"
      << html_escape(pair_correlation_text())
      << ".</p><div class=\"scroll\"><table><tr><th>Covariate</th>"
      << "<th>Pairs N</th><th>Pearson r</th><th>p</th><th>Spearman rho</th><th>p</th></tr>";
    for (const auto& c : r.pair_correlations) {
      b << "<tr><td>" << html_escape(c.covariate) << "</td><td>" << c.pearson.n << "</td><td>"
        << fixed4(c.pearson.r) << "</td><td>" << fixed4(c.pearson.p) << "</td><td>"
        << fixed4(c.spearman.r) << "</td><td>" << fixed4(c.spearman.p) << "</td></tr>";
    }
    b << "</table></div>";
  }
  if (!r.correlations.empty()) {
    b << "<h2>Correlations with per-example correctness</h2><p class=\"note\">"
      << html_escape(correctness_correlation_text()) << ".</p>"
      << "<div class=\"scroll\"><table><tr><th>Covariate</th><th>Metric</th><th>N</th>"
         "<th>Pearson r</th><th>p</th><th>Spearman rho</th><th>p</th></tr>";
    for (const auto& c : r.correlations) {
      auto v = [](double x) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4f", x);
        return std::isfinite(x) ? std::string(buf) : std::string("n/a");
      };
      b << "<tr><td>" << html_escape(c.covariate) << "</td><td>" << kMetricNames[c.metric]
        << "</td><td>" << c.pearson.n << "</td><td>" << v(c.pearson.r) << "</td><td>"
        << v(c.pearson.p) << "</td><td>" << v(c.spearman.r) << "</td><td>" << v(c.spearman.p)
        << "</td></tr>";
    }
    b << "</table></div><p class=\"note\">Correctness is 1 or 0 per example; p is two-sided (t "
         "with N-2 df); n/a where a variable is constant (for example a scorer that gets every "
         "example right or every example wrong).</p>";
  }
  if (examples) b << example_browser_html(*examples);
  b << provenance_html(prov);
  return page("Winoground report: " + ctx.model, b.str());
}

namespace {

// One scatter plot: a point per (name, (x, y)), y a proportion on 0-100%; x on a log10 axis
// when every x is positive and they span more than a factor of 100 (pretraining sizes).
std::string svg_scatter(const std::vector<std::pair<std::string, std::pair<double, double>>>& xy,
                        const std::string& x_label, const std::string& y_label, const char* color) {
  constexpr double kLeft = 44, kTop = 16, kPlot = 180, kWidth = 240, kBottom = 44;
  constexpr double kLogSpan = 100;
  double lo = xy.front().second.first, hi = lo;
  for (const auto& p : xy) {
    lo = std::min(lo, p.second.first);
    hi = std::max(hi, p.second.first);
  }
  const bool log_x = lo > 0 && hi / lo > kLogSpan;
  auto tx = [&](double x) { return log_x ? std::log10(x) : x; };
  double a = tx(lo), z = tx(hi);
  if (z == a) {
    a -= 1;
    z += 1;
  }
  auto x_of = [&](double x) { return kLeft + 8 + (kWidth - 16) * (tx(x) - a) / (z - a); };
  auto y_of = [&](double p) { return kTop + kPlot * (1.0 - p); };
  const double width = kLeft + kWidth + 10, height = kTop + kPlot + kBottom;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"" << fmt(width)
    << "\" height=\"" << fmt(height) << "\" viewBox=\"0 0 " << fmt(width) << " " << fmt(height)
    << "\"><title>" << html_escape(y_label + " against " + x_label) << "</title>";
  for (int tick = 0; tick <= 100; tick += 25) {
    const double y = y_of(tick / 100.0);
    s << "<line x1=\"" << kLeft << "\" x2=\"" << fmt(kLeft + kWidth) << "\" y1=\"" << fmt(y)
      << "\" y2=\"" << fmt(y) << "\" stroke=\"#eee\"/><text x=\"" << kLeft - 6 << "\" y=\""
      << fmt(y + 4) << "\" font-size=\"11\" text-anchor=\"end\">" << tick << "</text>";
  }
  for (const auto& [name, p] : xy) {
    char value[40];
    std::snprintf(value, sizeof value, "%g", p.first);
    s << "<circle cx=\"" << fmt(x_of(p.first)) << "\" cy=\"" << fmt(y_of(p.second))
      << "\" r=\"4\" fill=\"" << color << "\"><title>" << html_escape(name) << ": "
      << html_escape(x_label) << " " << value << ", " << html_escape(y_label) << " "
      << percent(p.second) << "</title></circle>";
  }
  char lo_text[40], hi_text[40];
  std::snprintf(lo_text, sizeof lo_text, "%g", lo);
  std::snprintf(hi_text, sizeof hi_text, "%g", hi);
  s << "<text x=\"" << fmt(kLeft + 8) << "\" y=\"" << fmt(kTop + kPlot + 14)
    << "\" font-size=\"10\">" << lo_text << "</text><text x=\"" << fmt(kLeft + kWidth - 8)
    << "\" y=\"" << fmt(kTop + kPlot + 14) << "\" font-size=\"10\" text-anchor=\"end\">" << hi_text
    << "</text><text x=\"" << fmt(kLeft + kWidth / 2) << "\" y=\"" << fmt(kTop + kPlot + 32)
    << "\" font-size=\"11\" text-anchor=\"middle\">" << html_escape(x_label)
    << (log_x ? " (log scale)" : "") << " vs " << html_escape(y_label) << " (%)</text></svg>";
  return s.str();
}

}  // namespace

std::string html_compare(const CompareResult& c, const nlohmann::json& provenance) {
  return html_compare(c, provenance, nullptr);
}

std::string html_compare(const CompareResult& c, const nlohmann::json& provenance,
                         const ExampleBrowser* examples) {
  const int level = level_of(c.options);
  std::ostringstream b;
  b << "<h1>Winoground leaderboard</h1>";
  for (std::size_t i = 0; i < c.names.size() && i < c.sources.size(); ++i)
    if (is_random_weights(c.sources[i])) b << random_warning(c.names[i]);
  if (!c.leaderboard.empty()) {
    const auto& top = c.leaderboard.front();
    b << "<div class=\"headline\"><p>" << c.leaderboard.size() << " runs on <code>"
      << html_escape(provenance.value("dataset", nlohmann::json::object())
                         .value("examples", std::string("the dataset")))
      << "</code>, N = " << top.n << " examples. Best group score: <b>" << html_escape(top.name)
      << "</b>.</p><div class=\"scores\">"
      << headline_score("Text score", top.metrics[kText], kChance[kText], level)
      << headline_score("Image score", top.metrics[kImage], kChance[kImage], level)
      << headline_score("Group score", top.metrics[kGroup], kChance[kGroup], level)
      << "</div><p class=\"note\">What to read: runs are ranked by group score; whether two runs "
         "really differ is in the pairwise table (McNemar p and the paired bootstrap interval "
         "of the difference), not in the order alone.</p></div>";
  }
  b << "<h2>Leaderboard</h2>" << legend() << "<div class=\"chart\">"
    << svg_group_chart(c.leaderboard, "Leaderboard") << "</div>"
    << group_table(c.leaderboard, "Model", level);
  b << "<h2>Pairwise differences</h2><div class=\"scroll\"><table><tr><th>Model A</th>"
       "<th>Model B</th><th>Metric</th><th>A &minus; B</th><th>A right only</th><th>B right "
       "only</th><th>McNemar exact p</th><th>"
    << level << "% paired bootstrap</th></tr>";
  for (const auto& p : c.pairwise) {
    char pv[32];
    std::snprintf(pv, sizeof pv, "%.3g", p.p_mcnemar);
    b << "<tr><td>" << html_escape(p.a) << "</td><td>" << html_escape(p.b) << "</td><td>"
      << kMetricNames[p.metric] << "</td><td>" << percent(p.difference) << "</td><td>" << p.a_only
      << "</td><td>" << p.b_only << "</td><td>" << pv << "</td><td>"
      << interval_text(p.paired_bootstrap) << "</td></tr>";
  }
  b << "</table></div><p class=\"note\">" << html_escape(bootstrap_method_text(c.options))
    << ".</p>";
  if (c.run_correlations) {
    b << "<h2>Correlations with run information (Table 7)</h2><p class=\"note\">"
      << html_escape(run_correlation_text()) << ". From " << html_escape(c.run_correlations->file)
      << ".</p>";
    auto v = [](double x) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4f", x);
      return std::isfinite(x) ? std::string(buf) : std::string("n/a");
    };
    for (const auto& set : c.run_correlations->sets) {
      std::string title = "All runs";
      if (!set.excluded.empty()) {
        title = "Without";
        for (const auto& e : set.excluded)
          title += " " + e;
      }
      b << "<h3>" << html_escape(title) << "</h3>";
      if (!set.rows.empty()) {
        b << "<div class=\"scroll\"><table><tr><th>Column</th><th>Metric</th><th>N "
             "runs</th><th>Pearson r</th>"
             "<th>p</th><th>Spearman rho</th><th>p</th></tr>";
        for (const auto& row : set.rows) {
          b << "<tr><td>" << html_escape(row.column) << "</td><td>" << kMetricNames[row.metric]
            << "</td><td>" << row.runs.size() << "</td><td>" << v(row.pearson.r) << "</td><td>"
            << v(row.pearson.p) << "</td><td>" << v(row.spearman.r) << "</td><td>"
            << v(row.spearman.p) << "</td></tr>";
        }
        b << "</table></div>";
      }
      for (const auto& m : set.messages)
        b << "<p class=\"note\">Not computed: " << html_escape(m) << ".</p>";
      for (const auto& t : set.categories) {
        b << "<h4>By " << html_escape(t.column) << "</h4><p class=\"note\">"
          << html_escape(run_category_text(c.options.confidence))
          << ".</p><div class=\"scroll\"><table><tr><th>" << html_escape(t.column)
          << "</th><th>N runs</th><th>Runs</th><th>Text</th><th>Image</th><th>Group</th></tr>";
        for (const auto& g : t.groups) {
          std::string runs;
          for (const auto& r : g.runs)
            runs += (runs.empty() ? "" : ", ") + r;
          b << "<tr><td>" << html_escape(g.value) << "</td><td>" << g.runs.size() << "</td><td>"
            << html_escape(runs) << "</td>";
          for (std::size_t m : {kText, kImage, kGroup}) {
            b << "<td>" << percent(g.mean[m])
              << (g.interval[m].valid() ? " " + interval_text(g.interval[m]) : std::string())
              << "</td>";
          }
          b << "</tr>";
        }
        b << "</table></div>";
      }
    }
    if (!c.run_correlations->points.empty()) {
      b << "<h2>Scores against run information (Appendix B)</h2><p class=\"note\">Each run's "
           "text, image and group score against each numeric column of the run information, "
           "one point per run with a value (hover for its name); a logarithmic axis where "
           "the values are positive and span more than a factor of 100.</p>";
      std::map<std::string, double> score[kMetricCount];
      for (const auto& g : c.leaderboard)
        for (std::size_t m = 0; m < kMetricCount; ++m)
          score[m][g.name] = g.metrics[m].value;
      for (const auto& [column, pts] : c.run_correlations->points) {
        if (pts.empty()) continue;
        b << "<h3>" << html_escape(column) << "</h3><div class=\"side\">";
        for (std::size_t m = 0; m < kMetricCount; ++m) {
          std::vector<std::pair<std::string, std::pair<double, double>>> xy;
          for (const auto& [run, x] : pts)
            xy.push_back({run, {x, score[m].at(run)}});
          b << "<div class=\"chart\">"
            << svg_scatter(xy, column, std::string(kMetricNames[m]) + " score", kColors[m])
            << "</div>";
        }
        b << "</div>";
      }
    }
  }
  if (examples) b << example_browser_html(*examples);
  b << provenance_html(provenance);
  return page("Winoground leaderboard", b.str());
}

}  // namespace winokit

namespace winokit {

std::string markdown_html(const std::string& title, const std::string& markdown,
                          const nlohmann::json& provenance) {
  std::ostringstream body;
  bool in_table = false, header_row = false;
  std::size_t start = 0;
  while (start <= markdown.size()) {
    std::size_t end = markdown.find('\n', start);
    if (end == std::string::npos) end = markdown.size();
    const std::string line = markdown.substr(start, end - start);
    start = end + 1;
    const bool row = !line.empty() && line.front() == '|';
    if (in_table && !row) {
      body << "</table>\n";
      in_table = false;
    }
    if (row) {
      // Cells between the pipes; the |---| separator row ends the header.
      std::vector<std::string> cells;
      std::size_t p = 1;
      while (p < line.size()) {
        const std::size_t q = line.find('|', p);
        if (q == std::string::npos) break;
        std::string cell = line.substr(p, q - p);
        const auto a = cell.find_first_not_of(' ');
        const auto b = cell.find_last_not_of(' ');
        cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
        p = q + 1;
      }
      const bool separator = !cells.empty() && cells[0].find("---") != std::string::npos;
      if (!in_table) {
        body << "<table>";
        in_table = true;
        header_row = true;
      }
      if (separator) {
        header_row = false;
        continue;
      }
      body << "<tr>";
      for (const auto& c : cells)
        body << (header_row ? "<th>" : "<td>") << html_escape(c)
             << (header_row ? "</th>" : "</td>");
      body << "</tr>\n";
    } else if (line.rfind("### ", 0) == 0) {
      body << "<h3>" << html_escape(line.substr(4)) << "</h3>\n";
    } else if (line.rfind("## ", 0) == 0) {
      body << "<h2>" << html_escape(line.substr(3)) << "</h2>\n";
    } else if (line.rfind("# ", 0) == 0) {
      body << "<h1>" << html_escape(line.substr(2)) << "</h1>\n";
    } else if (!line.empty()) {
      body << "<p>" << html_escape(line) << "</p>\n";
    }
  }
  if (in_table) body << "</table>\n";
  std::string html = html_scroll_tables(body.str());
  // The markdown's own "# " title, when it has one, is the page's heading.
  // A markdown that opens with a heading naming the title already heads the page.
  const std::string first = markdown.substr(0, markdown.find('\n'));
  const std::size_t text = first.find_first_not_of('#');
  const bool titled = text != std::string::npos && text > 0 && text < first.size() &&
                      first.compare(text + 1, title.size(), title) == 0;
  if (!titled) html = "<h1>" + html_escape(title) + "</h1>\n" + html;
  if (is_random_weights(provenance.value("scorer", nlohmann::json()))) {
    const std::size_t close = html.find("</h");
    html.insert(close == std::string::npos ? 0 : html.find('>', close) + 1, random_warning(title));
  }
  return html_page(title, html + provenance_html(provenance));
}

}  // namespace winokit

namespace winokit {

std::string markdown_html(const std::string& title, const std::string& markdown,
                          const nlohmann::json& provenance, const std::string& extra_body) {
  // The extra body (charts) goes after the report's text, before its provenance.
  std::string html = markdown_html(title, markdown, provenance);
  auto at = html.rfind("<h2>Provenance</h2>");
  if (at == std::string::npos) at = html.rfind("</body>");
  html.insert(at == std::string::npos ? html.size() : at, extra_body);
  return html;
}

}  // namespace winokit
