// The HTML report of any registered benchmark and its example browser, from the benchmark's
// format-neutral summary and its per-item outcomes (BenchmarkSummary::items): nothing here names
// a benchmark. Each item shows its image(s) (thumbnails, links or none), its texts with the
// true one marked and the words that differ from its foil highlighted, the score matrix, and
// each check with its comparisons (a failed one marked, a tie counting as wrong). A few lines of
// inline script (as the other HTML reports) search, filter by subset and by outcome, and sort by
// margin; without script every item is listed.
#include "winokit/report/benchmark_browser.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "model/kernels/parallel.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"

namespace winokit {

namespace {

// A check with more comparisons than this lists its failed ones and counts the others.
constexpr std::size_t kListedComparisons = 8;

std::string fixed2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string lowercase(std::string text) {
  for (char& ch : text)
    if (!(ch & 0x80)) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

std::string mark(bool ok) {
  return ok ? "<span class=\"ok\">&#10003; right</span>"
            : "<span class=\"bad\">&#10007; wrong</span>";
}

std::string pair_name(std::size_t text, std::size_t image) {
  return "s(t" + std::to_string(text) + ", i" + std::to_string(image) + ")";
}

double score_at(const ItemScores& s, std::size_t images, std::size_t t, std::size_t i) {
  return s[t * images + i];
}

// The smallest difference among the headline check's comparisons: positive exactly when the
// item is right, its size how far it is from flipping.
double margin(const ItemScores& s, std::size_t images, const ItemCheck& check) {
  double m = std::numeric_limits<double>::infinity();
  for (const ScoreComparison& c : check.comparisons)
    m = std::min(
        m, score_at(s, images, c.text, c.image) - score_at(s, images, c.other_text, c.other_image));
  return std::isfinite(m) ? m : 0.0;
}

std::string comparison_row(const ItemScores& s, std::size_t images, const ScoreComparison& c) {
  const double a = score_at(s, images, c.text, c.image),
               b = score_at(s, images, c.other_text, c.other_image), d = a - b;
  const bool ok = d > 0;
  std::ostringstream r;
  r << "<tr class=\"" << (ok ? "pass" : "fail") << "\"><td class=\"m\">"
    << (ok ? "<span class=\"ok\" aria-label=\"holds\">&#10003;</span>"
           : "<span class=\"bad\" aria-label=\"fails\">&#10007;</span>")
    << "</td><td>" << pair_name(c.text, c.image) << " " << browser_number(a)
    << "</td><td class=\"op\">"
    << (d > 0   ? "&gt;"
        : d < 0 ? "&lt;"
                : "=")
    << "</td><td>" << pair_name(c.other_text, c.other_image) << " " << browser_number(b)
    << "</td><td class=\"d\">" << (d == 0 ? "tie" : browser_signed_number(d)) << "</td></tr>";
  return r.str();
}

std::string check_html(const ItemScores& s, std::size_t images, const ItemCheck& check) {
  std::ostringstream h;
  h << "<p class=\"check\"><b>" << html_escape(check.name) << "</b>: " << mark(check.right)
    << "</p><div class=\"scroll\"><table class=\"ineq\">";
  std::size_t hidden = 0;
  for (const ScoreComparison& c : check.comparisons) {
    const bool holds =
        score_at(s, images, c.text, c.image) > score_at(s, images, c.other_text, c.other_image);
    if (check.comparisons.size() > kListedComparisons && holds) {
      ++hidden;
      continue;
    }
    h << comparison_row(s, images, c);
  }
  h << "</table></div>";
  if (hidden > 0)
    h << "<p class=\"note\">" << hidden
      << (hidden == 1 ? " more comparison holds." : " more comparisons hold.") << "</p>";
  return h.str();
}

// The text whose words each text is compared with: a true text with the first text that is not
// true of its image, a foil with the first true text.
std::vector<std::string> texts_html(const BenchmarkItem& item, const ItemOutcome& o) {
  const std::size_t texts = item.texts.size(), images = item.images.size();
  const auto is_true = [&](std::size_t t, std::size_t i) {
    return t * images + i < o.truth.size() && o.truth[t * images + i] != 0;
  };
  std::vector<std::string> out;
  for (std::size_t t = 0; t < texts; ++t) {
    std::optional<std::size_t> partner;
    for (std::size_t i = 0; i < images && !partner; ++i) {
      if (!is_true(t, i)) continue;
      for (std::size_t u = 0; u < texts && !partner; ++u)
        if (u != t && !is_true(u, i)) partner = u;
    }
    for (std::size_t u = 0; u < texts && !partner; ++u) {
      if (u == t) continue;
      for (std::size_t i = 0; i < images; ++i)
        if (is_true(u, i)) {
          partner = u;
          break;
        }
    }
    out.push_back(partner ? caption_diff_html(item.texts[t], item.texts[*partner])[0]
                          : html_escape(item.texts[t]));
  }
  return out;
}

// Filters (search, subset, outcome), sort by margin, the empty-result message and the enlarged
// image. Text goes in through textContent only.
constexpr const char* kScript = R"(<script>
(function(){
var root=document.getElementById('items');if(!root)return;
var list=root.querySelector('.ex-list'),items=[].slice.call(list.children);
function $(id){return root.querySelector('#'+id);}
var f={q:$('b-search'),sub:$('b-subset'),out:$('b-outcome'),sort:$('b-sort')};
var count=$('b-count'),empty=$('b-empty'),why=$('b-empty-why');
function outcomeOk(el,v){if(!v)return true;if(v==='ties')return el.dataset.ties==='1';
var p=v.split(':'),bit=el.dataset.o.charAt(+p[0]);return bit===p[1];}
function searchOk(el,q){if(!q)return true;if(q===el.dataset.id.toLowerCase())return true;
var text=el.dataset.text;return q.split(/\s+/).every(function(w){return text.indexOf(w)>=0;});}
function label(s){return s.options[s.selectedIndex].text;}
function active(){var a=[];var q=f.q.value.trim();if(q)a.push('search \u201c'+q+'\u201d');
if(f.sub&&f.sub.value)a.push('subset \u201c'+label(f.sub)+'\u201d');
if(f.out.value)a.push('outcome \u201c'+label(f.out)+'\u201d');return a;}
function apply(){var sub=f.sub?f.sub.value:'',q=f.q.value.trim().toLowerCase(),n=0;
items.forEach(function(el){var show=(!sub||el.dataset.subset===sub)&&searchOk(el,q)&&
outcomeOk(el,f.out.value);el.hidden=!show;if(show)n++;});
var key=f.sort.value,sorted=items.slice();
if(key!=='id'){sorted.sort(function(a,b){var x=+a.dataset.margin,y=+b.dataset.margin;
return key==='margin-asc'?x-y:y-x;});}
sorted.forEach(function(el){list.appendChild(el);});
count.textContent=n+' of '+items.length+' items shown';
if(n===0){var a=active();why.textContent='No item matches '+a.join(' and ')+'. '+
(a.length>1?'Change or clear one of these filters':'Change this filter')+', or show everything:';}
empty.hidden=n!==0;}
[f.sub,f.out,f.sort].forEach(function(s){if(s)s.addEventListener('change',apply);});
f.q.addEventListener('input',apply);
$('b-clear').addEventListener('click',function(){f.q.value='';if(f.sub)f.sub.value='';
f.out.value='';apply();f.q.focus();});
function byId(id){return document.getElementById(id);}
var dlg=byId('zoom'),zimg=byId('zoom-img'),zcap=byId('zoom-cap'),opener=null;
if(dlg){root.addEventListener('click',function(e){var b=e.target.closest('button.zoom');if(!b)return;
var img=b.querySelector('img');zimg.src=img.src;zimg.alt=img.alt;
zcap.textContent=b.parentNode.querySelector('figcaption').textContent;opener=b;
if(dlg.showModal)dlg.showModal();else dlg.setAttribute('open','');});
function close(){if(dlg.close)dlg.close();else dlg.removeAttribute('open');}
byId('zoom-close').addEventListener('click',close);
dlg.addEventListener('click',function(e){if(e.target===dlg)close();});
dlg.addEventListener('close',function(){if(opener)opener.focus();});}
apply();})();
</script>)";

// What this browser adds to the reports' common style.
constexpr const char* kStyle = R"(<style>
.texts{list-style:none;padding:0;margin:.2rem 0 .4rem}.texts li{margin:.15rem 0;padding:.1rem .3rem;border-left:4px solid #ddd}
.texts li.true{border-left-color:#1a7f37;background:#eef8f0}.badge{font-size:.8rem;border-radius:3px;padding:0 .3rem;white-space:nowrap}
.true .badge{background:#1a7f37;color:#fff}.foil .badge{background:#eef1f4;color:#333}
table.matrix td.truth{font-weight:700;background:#eef8f0}
#items .pair.one{flex:0 1 auto}p.check{margin:.6rem 0 0}#items .ex-scores{flex:1 1 300px}#items .ex{scroll-margin-top:6rem}
.pair figcaption{font-size:.85rem;overflow-wrap:anywhere}.verdict{font-size:.95rem;font-weight:400}
</style>)";

}  // namespace

std::vector<std::size_t> browser_sample(std::size_t items, std::size_t max_items,
                                        std::uint64_t seed) {
  if (max_items == 0 || max_items >= items) return {};
  std::vector<std::size_t> all(items);
  for (std::size_t k = 0; k < items; ++k)
    all[k] = k;
  Rng rng(derive_seed(seed, "html-items"));
  partial_shuffle(all, max_items, rng);
  all.resize(max_items);
  std::sort(all.begin(), all.end());
  return all;
}

BenchmarkImages benchmark_images(const BenchmarkData& data, HtmlImages mode,
                                 const std::filesystem::path& report_dir, bool readable,
                                 std::vector<std::size_t> shown, int max_side) {
  for (std::size_t k : shown)
    if (k >= data.items.size()) throw UsageError("item " + std::to_string(k) + " is not an item");
  if (shown.empty()) {
    shown.resize(data.items.size());
    for (std::size_t k = 0; k < shown.size(); ++k)
      shown[k] = k;
  }
  BenchmarkImages out;
  out.shown = shown;
  out.src.resize(data.items.size());
  for (std::size_t k = 0; k < data.items.size(); ++k)
    out.src[k].resize(data.items[k].images.size());
  if (mode == HtmlImages::None) {
    out.missing_note = "No images shown: --html-images none.";
    return out;
  }
  if (!readable) {
    out.missing_note =
        "No images shown: this run read its scores from a file and names its images without "
        "reading them; give it --images DIR (the benchmark's images) to show them.";
    return out;
  }
  // Each distinct image once (SugarCrepe: 7,512 items over 3,887 images).
  std::map<std::string, std::size_t> index;
  std::vector<const ImageRequest*> distinct;
  for (std::size_t k : shown)
    for (const auto& im : data.items[k].images)
      if (index.emplace(im.name, distinct.size()).second) distinct.push_back(&im);
  const std::filesystem::path base =
      std::filesystem::absolute(report_dir.empty() ? std::filesystem::path(".") : report_dir);
  std::vector<std::string> src(distinct.size()), errors(distinct.size());
  detail::parallel_for_dynamic(distinct.size(), std::size_t{4}, [&](std::size_t k) {
    const ImageRequest& im = *distinct[k];
    try {
      std::optional<std::filesystem::path> file;
      if (mode == HtmlImages::Link && im.file) file = im.file();
      if (file) {
        if (!std::filesystem::is_regular_file(*file)) throw IoError(file->string() + ": not found");
        src[k] = std::filesystem::absolute(*file).lexically_relative(base).generic_string();
      } else {
        src[k] = thumbnail_data_uri(im.read(), max_side);
      }
    } catch (const std::exception& e) {
      errors[k] = "image " + im.name + ": " + e.what();
    }
  });
  for (const auto& e : errors)
    if (!e.empty()) throw InputError({data.file.string(), 0, "image"}, e);
  for (std::size_t k : shown)
    for (std::size_t i = 0; i < data.items[k].images.size(); ++i)
      out.src[k][i] = src[index.at(data.items[k].images[i].name)];
  return out;
}

std::string benchmark_browser_html(const BenchmarkData& data, const BenchmarkSummary& summary,
                                   const BenchmarkImages& images) {
  if (summary.items.empty()) return "";
  if (summary.items.size() != data.items.size())
    throw UsageError("the summary describes " + std::to_string(summary.items.size()) +
                     " items, the data holds " + std::to_string(data.items.size()));
  // The checks by name, in order of first appearance (the filter's options).
  std::vector<std::size_t> shown = images.shown;
  for (std::size_t k : shown)
    if (k >= data.items.size()) throw UsageError("item " + std::to_string(k) + " is not an item");
  if (shown.empty()) {
    shown.resize(data.items.size());
    for (std::size_t k = 0; k < shown.size(); ++k)
      shown[k] = k;
  }
  std::vector<std::string> check_names;
  std::vector<std::pair<std::string, std::size_t>> subsets;
  std::map<std::string, std::size_t> subset_index;
  for (std::size_t k : shown) {
    const ItemOutcome& o = summary.items[k];
    for (std::size_t c = 0; c < o.checks.size(); ++c)
      if (c >= check_names.size()) check_names.push_back(o.checks[c].name);
    if (!o.subset.empty()) {
      auto [it, fresh] = subset_index.emplace(o.subset, subsets.size());
      if (fresh) subsets.push_back({o.subset, 0});
      ++subsets[it->second].second;
    }
  }
  std::ostringstream h;
  h << kStyle
    << "<section id=\"items\"><h2>Items</h2><p class=\"note\">Every item with its image(s) "
       "(i0, i1, ...) and its texts (t0, t1, ...): the true text of each image is marked "
       "<b>true</b>, the others are its foils, and the words a text does not share with its "
       "foil (or its true text) are highlighted. s(t, i) is the score of text t with image i; "
       "the matrix shows them all, the true pairs in bold. Each check lists the comparisons it "
       "needs (each strictly greater: a tie counts as wrong); a failed one is marked &#10007;. "
       "Margin: the smallest difference of the headline check (positive exactly when the item "
       "is right). Click an image to enlarge it. Search, filters and sorting need JavaScript; "
       "without it every item is listed in the benchmark's order.</p>";
  h << "<div class=\"controls\" role=\"group\" aria-label=\"Search, filter and sort the "
       "items\"><label>Search <input type=\"search\" id=\"b-search\" placeholder=\"word or id\" "
       "autocomplete=\"off\"></label>";
  if (!subsets.empty()) {
    h << "<label>Subset <select id=\"b-subset\"><option value=\"\">all subsets</option>";
    for (const auto& [name, n] : subsets)
      h << "<option value=\"" << html_escape(name) << "\">" << html_escape(name) << " (" << n
        << ")</option>";
    h << "</select></label>";
  }
  h << "<label>Outcome <select id=\"b-outcome\"><option value=\"\">all outcomes</option>"
       "<option value=\"0:1\">right</option><option value=\"0:0\">wrong</option>";
  for (std::size_t c = 1; c < check_names.size(); ++c)
    h << "<option value=\"" << c << ":1\">" << html_escape(check_names[c])
      << " right</option><option value=\"" << c << ":0\">" << html_escape(check_names[c])
      << " wrong</option>";
  h << "<option value=\"ties\">with ties</option></select></label>"
       "<label>Sort <select id=\"b-sort\"><option value=\"id\">benchmark order</option>"
       "<option value=\"margin-asc\">by margin, most wrong first</option>"
       "<option value=\"margin-desc\">by margin, most right first</option></select></label>"
       "<output id=\"b-count\" aria-live=\"polite\">"
    << shown.size() << " items</output></div>";
  h << "<div id=\"b-empty\" class=\"empty\" role=\"status\" hidden><span id=\"b-empty-why\">"
       "</span> <button type=\"button\" id=\"b-clear\">Clear all filters</button></div>";
  bool any_image = false;
  for (const auto& item : images.src)
    for (const auto& s : item)
      any_image = any_image || !s.empty();
  if (!any_image && !images.missing_note.empty())
    h << "<p class=\"note\">" << html_escape(images.missing_note) << "</p>";
  h << "<ol class=\"ex-list\">";
  if (shown.size() < data.items.size())
    h << "<p class=\"note\">This report lists a seeded random sample of " << shown.size()
      << " of the " << data.items.size()
      << " items (--html-items), in the benchmark's order; the filters and counts are over "
         "the sample, the metrics above over every item (the CSV report has one row per "
         "item).</p>";
  for (std::size_t k : shown) {
    const BenchmarkItem& item = data.items[k];
    const ItemOutcome& o = summary.items[k];
    const std::size_t n_images = item.images.size(), n_texts = item.texts.size();
    const ItemScores& s = o.scores;
    if (s.size() != n_texts * n_images || o.checks.empty()) {
      throw UsageError("item " + item.id + ": its outcome holds " + std::to_string(s.size()) +
                       " scores and " + std::to_string(o.checks.size()) + " checks, expected " +
                       std::to_string(n_texts * n_images) + " and at least one");
    }
    const auto is_true = [&](std::size_t t, std::size_t i) {
      return o.truth.size() == s.size() && o.truth[t * n_images + i] != 0;
    };
    std::string bits, text_attr;
    bool ties = false;
    for (const ItemCheck& c : o.checks) {
      bits += c.right ? '1' : '0';
      for (const ScoreComparison& x : c.comparisons)
        ties = ties || score_at(s, n_images, x.text, x.image) ==
                           score_at(s, n_images, x.other_text, x.other_image);
    }
    for (const auto& t : item.texts)
      text_attr += lowercase(t) + " / ";
    h << "<li class=\"ex\" id=\"item-" << k << "\" data-id=\"" << html_escape(item.id)
      << "\" data-text=\"" << html_escape(text_attr) << "\" data-subset=\"" << html_escape(o.subset)
      << "\" data-o=\"" << bits << "\" data-ties=\"" << (ties ? 1 : 0) << "\" data-margin=\""
      << browser_number(margin(s, n_images, o.checks[0])) << "\"><h3>Item " << html_escape(item.id)
      << " <span class=\"verdict\">" << mark(o.checks[0].right) << "</span></h3>";
    if (!o.subset.empty())
      h << "<p class=\"tags\"><span>" << html_escape(o.subset) << "</span></p>";
    h << "<div class=\"ex-body\"><div class=\"pair" << (n_images == 1 ? " one" : "") << "\">";
    for (std::size_t i = 0; i < n_images; ++i) {
      const std::string& src =
          k < images.src.size() && i < images.src[k].size() ? images.src[k][i] : std::string();
      h << "<figure>";
      if (!src.empty())
        h << "<button type=\"button\" class=\"zoom\" aria-label=\"Enlarge image i" << i
          << " of item " << html_escape(item.id) << "\"><img src=\"" << html_escape(src)
          << "\" alt=\"image i" << i << " of item " << html_escape(item.id)
          << "\" loading=\"lazy\"></button>";
      h << "<figcaption><b>i" << i << "</b> " << html_escape(item.images[i].name)
        << "</figcaption></figure>";
    }
    h << "</div><div class=\"ex-scores\"><ol class=\"texts\">";
    const std::vector<std::string> marked = texts_html(item, o);
    for (std::size_t t = 0; t < n_texts; ++t) {
      std::string of;
      for (std::size_t i = 0; i < n_images; ++i)
        if (is_true(t, i)) of += (of.empty() ? "i" : ", i") + std::to_string(i);
      const std::string badge = of.empty() ? "foil" : n_images > 1 ? "true of " + of : "true";
      h << "<li class=\"" << (of.empty() ? "foil" : "true") << "\"><b>t" << t
        << "</b> <span class=\"badge\">" << badge << "</span> <span class=\"cap\">" << marked[t]
        << "</span></li>";
    }
    h << "</ol><div class=\"scroll\"><table class=\"matrix\"><tr><th scope=\"col\">s(t, i)</th>";
    for (std::size_t i = 0; i < n_images; ++i)
      h << "<th scope=\"col\">i" << i << "</th>";
    h << "</tr>";
    for (std::size_t t = 0; t < n_texts; ++t) {
      h << "<tr><th scope=\"row\">t" << t << "</th>";
      for (std::size_t i = 0; i < n_images; ++i)
        h << "<td" << (is_true(t, i) ? " class=\"truth\"" : "") << ">"
          << browser_number(score_at(s, n_images, t, i)) << "</td>";
      h << "</tr>";
    }
    h << "</table></div>";
    for (const ItemCheck& c : o.checks)
      h << check_html(s, n_images, c);
    h << "<p class=\"outcome\">Margin " << browser_signed_number(margin(s, n_images, o.checks[0]))
      << "</p>";
    if (!o.note.empty()) h << "<p class=\"note\">" << html_escape(o.note) << "</p>";
    h << "</div></div></li>";
  }
  h << "</ol></section>";
  if (any_image)
    h << "<dialog id=\"zoom\" aria-label=\"Enlarged image\"><figure><img id=\"zoom-img\" "
         "alt=\"\"><figcaption id=\"zoom-cap\"></figcaption></figure><button type=\"button\" "
         "id=\"zoom-close\">Close</button></dialog>";
  h << kScript;
  return h.str();
}

}  // namespace winokit

namespace winokit {

std::string summary_html(const Benchmark& benchmark, const BenchmarkData& data,
                         const BenchmarkSummary& summary, const std::string& model,
                         const nlohmann::json& provenance, const BenchmarkImages& images) {
  std::ostringstream b;
  b << "<h1>" << html_escape(benchmark.title()) << ": " << html_escape(model) << "</h1>"
    << "<div class=\"headline\"><p><b>" << html_escape(model) << "</b> on <code>"
    << html_escape(data.file.string()) << "</code>, " << data.items.size() << " items. "
    << html_escape(benchmark.description()) << ".</p></div>";
  b << "<div class=\"scroll\"><table><tr><th>Metric</th><th>%</th><th>N</th><th>Interval</th>"
       "</tr>";
  for (const BenchmarkMetric& m : summary.metrics) {
    b << "<tr><td>" << html_escape(m.name) << "</td><td>" << fixed2(m.percent) << "</td><td>" << m.n
      << "</td><td>";
    if (m.low && m.high)
      b << "[" << fixed2(*m.low) << ", " << fixed2(*m.high) << "] " << html_escape(m.method);
    else if (!m.method.empty())
      b << html_escape(m.method);
    b << "</td></tr>";
  }
  b << "</table></div>";
  for (const ReportSection& s : summary.sections) {
    b << "<h2>" << html_escape(s.title) << "</h2>";
    if (!s.note.empty()) b << "<p class=\"note\">" << html_escape(s.note) << "</p>";
    b << "<div class=\"scroll\"><table><tr>";
    for (const auto& c : s.columns)
      b << "<th>" << html_escape(c) << "</th>";
    b << "</tr>";
    for (const auto& row : s.rows) {
      b << "<tr>";
      for (const auto& v : row)
        b << "<td>" << html_escape(v) << "</td>";
      b << "</tr>";
    }
    b << "</table></div>";
  }
  b << benchmark_browser_html(data, summary, images) << provenance_html(provenance);
  return html_page(benchmark.title() + ": " + model, b.str());
}

}  // namespace winokit
